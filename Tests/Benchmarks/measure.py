#!/usr/bin/env python3
"""Runs `btlens stats` (and `btmon -a` when installed) on the bench captures; prints MB/s, records/s, peak RSS."""
import json, os, resource, shutil, subprocess, sys, time

def run(cmd):
    """Wall time and peak RSS (KiB) of one child process."""
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        # The child must never return into the parent's loop: if the exec fails it says why on the real
        # standard error and ends with 127 (as a shell does), which the parent reports.
        try:
            stderr = os.dup(2)
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            try:
                os.execvp(cmd[0], cmd)
            except BaseException as error:
                os.write(stderr, f"measure.py: cannot run {cmd[0]}: {error}\n".encode())
        finally:
            os._exit(127)
    _, status, usage = os.wait4(pid, 0)
    return time.perf_counter() - start, usage.ru_maxrss, os.waitstatus_to_exitcode(status)

ROUNDS = 5

def best_of_interleaved(cmds, rounds=ROUNDS):
    """Best wall time (and its peak RSS) of each command over `rounds` rounds that run every command once, in
    turn: on a shared machine whose speed drifts, each command meets the same conditions, so the ratios hold."""
    best = {}
    for _ in range(rounds):
        for label, cmd in cmds:
            secs, rss, code = run(cmd)
            if code not in (0, 1):
                sys.exit(f"{' '.join(cmd)} exited {code}")
            if label not in best or secs < best[label][0]:
                best[label] = (secs, rss)
    return best

def main():
    btlens, files = sys.argv[1], sys.argv[2:]
    print(f"{'tool':18} {'file':24} {'MB':>6} {'seconds':>8} {'MB/s':>7} {'records/s':>11} {'peak RSS':>10} {'vs stats':>9}")
    for f in files:
        size_mb = os.path.getsize(f) / 1e6
        records = json.loads(subprocess.run([btlens, "stats", "--json", f], capture_output=True, text=True).stdout)["records"]
        base = None
        # stats: reading and decoding; timeline --track-only: plus the tracking layer (connections, ATT, GATT,
        # scans, advertisers); audit: plus the rules.
        cmds = [("btlens stats", [btlens, "stats", f]),
                ("btlens tracking", [btlens, "timeline", "--track-only", f]),
                ("btlens audit", [btlens, "audit", "--fail-on", "never", f])]
        best = best_of_interleaved(cmds)
        for label, _ in cmds:
            secs, rss = best[label]
            base = base or secs
            print(f"{label:18} {os.path.basename(f):24} {size_mb:6.0f} {secs:8.2f} {size_mb/secs:7.0f} {records/secs:11.0f} {rss/1024:8.1f} MB {secs/base:8.2f}x")
    btmon = shutil.which("btmon")
    small = files[0]
    if btmon:
        secs, rss, code = run([btmon, "-a", small])
        size_mb = os.path.getsize(small) / 1e6
        print(f"{'btmon -a':18} {os.path.basename(small):24} {size_mb:6.0f} {secs:8.2f} {size_mb/secs:7.0f} {'':>11} {rss/1024:8.1f} MB")
    else:
        print("btmon not installed (Debian package bluez): no comparison")

main()
