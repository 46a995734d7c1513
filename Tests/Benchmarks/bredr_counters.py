#!/usr/bin/env python3
"""The model against the controller's counters (0xFD59) on the intervals with BR/EDR activity.

Usage: bredr_counters.py BTLENS CAPTURE... [-v]

Counts, per capture and in all, the intervals with `br_edr_active`, consistent counters and at least 0.5 s of
measured tx + rx, and of them those where |model - measured| / measured <= 50 %. The captures are public ones
(docs/ENERGY-COUNTERS.md names them); none is part of btlens.
"""
import json
import os
import subprocess
import sys

MIN_MEASURED_S = 0.5
WITHIN = 0.5


def intervals(btlens, path):
    out = subprocess.run([btlens, "energy", "--json", path], check=True, capture_output=True, text=True).stdout
    for m in json.loads(out).get("measured", []):
        measured = m["tx_s"] + m["rx_s"]
        if not m.get("br_edr_active") or measured < MIN_MEASURED_S or m.get("gap") == "counters_inconsistent":
            continue
        model = m["model"]["tx_s"] + m["model"]["rx_s"]
        yield m, measured, model, (model - measured) / measured


def main():
    args = [a for a in sys.argv[1:] if a != "-v"]
    verbose = "-v" in sys.argv
    if len(args) < 2:
        sys.exit(__doc__)
    btlens, captures = args[0], args[1:]
    total = within = 0
    for path in captures:
        rows = list(intervals(btlens, path))
        ok = sum(1 for r in rows if abs(r[3]) <= WITHIN)
        total += len(rows)
        within += ok
        errors = sorted(r[3] for r in rows)
        median = errors[len(errors) // 2] if errors else None
        print(f"{os.path.basename(path)}: {ok} of {len(rows)} within 50 %"
              + (f", median error {median:+.0%}" if median is not None else ""))
        if verbose:
            for m, measured, model, error in rows:
                print(f"   {m['start']:.1f} {m['end'] - m['start']:8.1f} s measured tx {m['tx_s']:.3f} rx {m['rx_s']:.3f}"
                      f"  model tx {m['model']['tx_s']:.3f} rx {m['model']['rx_s']:.3f}  {error:+.0%}  {m.get('gap')}")
    print(f"In all: {within} of {total} intervals with BR/EDR activity within 50 %"
          + (f" ({within / total:.0%})" if total else ""))


if __name__ == "__main__":
    main()
