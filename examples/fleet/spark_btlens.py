#!/usr/bin/env python3
"""btlens on Spark: when a fleet's captures outgrow one machine.

The driver lists the capture paths and distributes them; each executor runs `btlens export --format jsonl` on its
share with the btlens binary shipped with the job (SparkContext.addFile), and hands back the rows of every table.
Spark SQL then loads the tables and runs the same queries as DuckDB (the .sql files beside this script).

Local mode (one machine, all cores):
    spark-submit examples/fleet/spark_btlens.py --btlens .build/release/btlens --out facts-spark captures/
    python3 examples/fleet/spark_btlens.py ...   (the same, with pyspark from pip)
On a cluster: the captures must be on a filesystem every executor mounts at the same path (NFS, a FUSE-mounted
bucket), and the btlens binary built for the executors' Linux (its shared libraries, libpcap, libarchive and
libbluetooth, installed there):
    spark-submit --master yarn --num-executors 20 examples/fleet/spark_btlens.py \\
        --btlens /opt/btlens/bin/btlens --partitions 400 --out hdfs:///fleet/facts /mnt/farm/build-412
Written: --out/TABLE/ as Parquet (one directory per table), and each query's answer printed (--queries none skips).
"""
import argparse
import os
import shutil
import stat
import subprocess
import sys
import tempfile

TABLES = ["captures", "connections", "phases", "scans", "advertisers", "att_series", "findings", "energy"]
HERE = os.path.dirname(os.path.abspath(__file__))
QUERIES = ["top_rules_by_count.sql", "top_rules_by_cost.sql", "radio_charge_per_test.sql", "build_diff.sql",
           "scans_left_on.sql", "slowest_discoveries.sql"]
# Paths per btlens run on an executor: few enough for one command line.
BATCH = 200


def capture_paths(inputs):
    """Every regular, non-hidden file under the inputs (as btlens export reads a directory), sorted."""
    paths = []
    for item in inputs:
        if os.path.isdir(item):
            for root, dirs, files in os.walk(item):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                paths += [os.path.join(root, f) for f in sorted(files) if not f.startswith(".")]
        else:
            paths.append(item)
    return [os.path.abspath(p) for p in paths]


def export_partition(paths, binary_name):
    """On an executor: btlens export over this share of the paths; yields (table, JSON line)."""
    from pyspark import SparkFiles
    paths = list(paths)
    if not paths:
        return
    btlens = SparkFiles.get(binary_name)
    os.chmod(btlens, os.stat(btlens).st_mode | stat.S_IXUSR)
    work = tempfile.mkdtemp(prefix="btlens-export-")
    try:
        for start in range(0, len(paths), BATCH):
            out = os.path.join(work, str(start))
            # One btlens process per executor core is Spark's parallelism: --jobs 1.
            run = subprocess.run([btlens, "export", "--format", "jsonl", "--jobs", "1", "-o", out,
                                  *paths[start:start + BATCH]], capture_output=True, text=True)
            if run.returncode not in (0, 3):  # 3: a path vanished; the others are exported
                raise RuntimeError(f"btlens export exited {run.returncode}: {run.stderr}")
            for table in TABLES:
                with open(os.path.join(out, table + ".jsonl")) as f:
                    for line in f:
                        yield table, line.rstrip("\n")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def load_tables(spark, rows):
    """A DataFrame per table from the (table, line) rows, registered as a view of the table's name. The exports
    run once (the rows are cached) and each table is kept in memory: the queries then only aggregate."""
    rows = rows.cache()
    frames = {}
    for table in TABLES:
        lines = rows.filter(lambda r, t=table: r[0] == t).map(lambda r: r[1])
        frame = spark.read.json(lines).cache()
        if frame.count() == 0:
            continue
        frames[table] = frame
        frame.createOrReplaceTempView(table)
    rows.unpersist()
    return frames


def sql_text(name):
    """A query file as Spark SQL takes it: one statement, no trailing semicolon."""
    with open(os.path.join(HERE, name)) as f:
        return f.read().strip().rstrip(";")


def session(app="btlens-fleet"):
    from pyspark.sql import SparkSession
    return (SparkSession.builder.appName(app)
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.shuffle.partitions", os.environ.get("BTLENS_SPARK_SHUFFLE_PARTITIONS", "16"))
            .getOrCreate())


def run(spark, btlens, inputs, partitions=None):
    """Exports the captures on the executors; returns the tables as DataFrames (also registered as views)."""
    paths = capture_paths(inputs)
    # The executors run this module's export_partition: ship it with the binary.
    spark.sparkContext.addPyFile(os.path.abspath(__file__))
    spark.sparkContext.addFile(os.path.abspath(btlens))
    binary_name = os.path.basename(btlens)
    parts = partitions or max(1, min(len(paths), spark.sparkContext.defaultParallelism * 4))
    rows = spark.sparkContext.parallelize(paths, parts).mapPartitions(lambda share: export_partition(share, binary_name))
    return load_tables(spark, rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--btlens", required=True, help="the btlens binary to ship to the executors")
    parser.add_argument("--out", help="write each table here as Parquet (TABLE/ directories)")
    parser.add_argument("--partitions", type=int, help="shares of the capture list (default: 4 per core)")
    parser.add_argument("--queries", default="all", help="all (the example queries) or none")
    parser.add_argument("inputs", nargs="+", help="capture files or directories")
    args = parser.parse_args()
    spark = session()
    frames = run(spark, args.btlens, args.inputs, args.partitions)
    if args.out:
        for table, frame in frames.items():
            frame.write.mode("overwrite").parquet(os.path.join(args.out, table))
    if args.queries == "all":
        for name in QUERIES:
            print(f"== {name}")
            spark.sql(sql_text(name)).show(50, truncate=False)
    spark.stop()


if __name__ == "__main__":
    sys.exit(main())
