#!/usr/bin/env python3
"""`make test-spark`: examples/fleet/spark_btlens.py in Spark's local mode on the farm of the fleet test
(make-farm.sh), held to the same answers as DuckDB (fleet_checks.py).

usage: test_spark.py BTLENS BTLENS_SCENARIO WORKDIR
"""
import os
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree

import fleet_checks

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "examples", "fleet"))
import spark_btlens  # noqa: E402


def main():
    btlens, scenario, work = (os.path.abspath(p) for p in sys.argv[1:4])
    farm = os.path.join(work, "farm")
    started = time.monotonic()
    if not os.path.isdir(os.path.join(farm, "build-412")):
        subprocess.run(["sh", os.path.join(ROOT, "Tests", "Fleet", "make-farm.sh"), scenario, farm], check=True)
    # Tables of a few hundred rows: a shuffle partition per core is plenty.
    os.environ.setdefault("BTLENS_SPARK_SHUFFLE_PARTITIONS", str(os.cpu_count() or 2))
    spark = spark_btlens.session("btlens-fleet-test")
    spark.sparkContext.setLogLevel("ERROR")
    up = time.monotonic()
    frames = spark_btlens.run(spark, btlens, [os.path.join(farm, "build-411"), os.path.join(farm, "build-412")])
    assert sorted(frames) == sorted(fleet_checks.TABLES), f"tables: {sorted(frames)}"

    def sql(text):
        return [row.asDict() for row in spark.sql(text.strip().rstrip(";")).collect()]
    fleet_checks.check(sql, farm, report=lambda line: print("spark: " + line))
    done = time.monotonic()
    spark.stop()
    print(f"spark: passed in {done - started:.1f} s ({up - started:.1f} s to start Spark, {done - up:.1f} s to export and query)")


if __name__ == "__main__":
    main()
