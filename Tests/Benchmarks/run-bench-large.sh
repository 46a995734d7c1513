#!/bin/sh
# make bench-large: the figures of make bench on 1 GB and 10 GB generated captures of three shapes (one round each:
# a 10 GB round takes minutes), to show how time and peak memory grow with the file (the yardstick of bounded
# memory: within 10 % from 1 GB to 10 GB). Shapes (btlens-scenario bench --shape): links (many short links, the
# capture of make bench), scans (thousands of scan and advertising sessions, tens of thousands of findings) and
# long-links (a link up for ten million records: millions of ATT operations each). Every format of every command
# and both exports (Perfetto, JSON Lines), diff and anonymize are measured too (BENCH_ALL_FORMATS; anonymize writes
# a copy as large as the capture in a temporary directory).
# Usage: run-bench-large.sh BUILD_DIR   (BUILD_DIR holds release btlens and btlens-scenario)
# BENCH_SHAPES="links scans" and BENCH_SIZES="1G" choose fewer captures (about 11 GB of disk per shape).
set -eu
bin=${1:-.build/release}
data=${BENCH_DIR:-bench-data}
mkdir -p "$data"
files=""
for shape in ${BENCH_SHAPES:-links scans long-links}; do
  for size in ${BENCH_SIZES:-1G 10G}; do
    if [ "$shape" = links ]; then f="$data/bench-$size.btsnoop"; else f="$data/bench-$shape-$size.btsnoop"; fi
    if [ ! -e "$f" ]; then
      echo "generating $f ..."
      "$bin/btlens-scenario" bench "$f.partial" --size "$size" --shape "$shape"
      mv "$f.partial" "$f"
    fi
    files="$files $f"
  done
done
# shellcheck disable=SC2086
BENCH_NO_BTMON=1 BENCH_ALL_FORMATS=${BENCH_ALL_FORMATS:-1} BENCH_ROUNDS=${BENCH_ROUNDS:-1} \
  exec python3 "$(dirname "$0")/measure.py" "$bin/btlens" $files
