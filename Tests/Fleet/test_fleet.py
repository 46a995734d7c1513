#!/usr/bin/env python3
"""`make test`'s fleet test: a device farm of ~50 generated captures (make-farm.sh), exported with
`btlens export --format jsonl`, every row validated against its JSON Schema, loaded into DuckDB (PyPI duckdb)
with examples/fleet/load.sql, and the example queries' answers checked against what the generator planted
(fleet_checks.py). Then --incremental over the same folders must export nothing new.

usage: test_fleet.py BTLENS BTLENS_SCENARIO WORKDIR
"""
import json
import os
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree

import duckdb
import jsonschema

import fleet_checks

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
SCHEMAS = os.path.join(ROOT, "Sources", "BTReport", "Schemas", "facts")


def export(btlens, farm, facts, *extra):
    started = time.monotonic()
    run = subprocess.run([btlens, "export", "--format", "jsonl", *extra, "-o", facts,
                          os.path.join(farm, "build-411"), os.path.join(farm, "build-412")],
                         capture_output=True, text=True)
    assert run.returncode == 0, f"export exited {run.returncode}: {run.stderr}"
    return run.stderr, time.monotonic() - started


def validate(facts):
    """Every row of every table against its schema, and the manifest against its own and the line counts."""
    with open(os.path.join(facts, "manifest.json")) as f:
        manifest = json.load(f)
    with open(os.path.join(SCHEMAS, "manifest.schema.json")) as f:
        jsonschema.validate(manifest, json.load(f))
    for table in fleet_checks.TABLES:
        with open(os.path.join(SCHEMAS, f"{table}.schema.json")) as f:
            schema = json.load(f)
        validator = jsonschema.validators.validator_for(schema)(schema)
        with open(os.path.join(facts, f"{table}.jsonl")) as f:
            rows = [json.loads(line) for line in f]
        for row in rows:
            validator.validate(row)
            assert row["schema_version"] == manifest["schema_version"]
        assert manifest["tables"][table]["rows"] == len(rows), f"{table}: manifest {manifest['tables'][table]}, {len(rows)} rows"
    return manifest


def duckdb_runner(facts):
    con = duckdb.connect()
    os.chdir(facts)
    with open(os.path.join(fleet_checks.EXAMPLES, "load.sql")) as f:
        con.execute(f.read())

    def sql(text):
        cursor = con.execute(text)
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row)) for row in cursor.fetchall()]
    return sql


def main():
    btlens, scenario, work = (os.path.abspath(p) for p in sys.argv[1:4])
    farm, facts = os.path.join(work, "farm"), os.path.join(work, "facts")
    started = time.monotonic()
    subprocess.run(["sh", os.path.join(ROOT, "Tests", "Fleet", "make-farm.sh"), scenario, farm], check=True)
    print(f"fleet: farm generated in {time.monotonic() - started:.1f} s")
    summary, seconds = export(btlens, farm, facts)
    print(f"fleet: exported in {seconds:.1f} s: {summary.strip().splitlines()[-1]}")
    manifest = validate(facts)
    rows = ", ".join("%s %d" % (t, v["rows"]) for t, v in manifest["tables"].items())
    print(f"fleet: every row follows its schema; rows: {rows}")
    fleet_checks.check(duckdb_runner(facts), farm, report=lambda line: print("fleet: " + line))

    # Incremental: the same folders again export nothing, and the tables keep their rows.
    summary, _ = export(btlens, farm, facts, "--incremental")
    assert "exported 0 captures" in summary and "already exported" in summary, summary
    again = validate(facts)
    assert again["tables"] == manifest["tables"], f"--incremental changed the tables: {again['tables']}"
    print("fleet: --incremental skipped every file already exported")
    print(f"fleet: passed in {time.monotonic() - started:.1f} s")


if __name__ == "__main__":
    main()
