#!/bin/sh
# make bench-large: the same figures as make bench on a 10 GB generated capture beside the 1 GB one (one round each:
# a 10 GB round takes minutes), to show how time and peak memory grow with the file (the yardstick of bounded memory: within 10 % from 1 GB to 10 GB).
# Usage: run-bench-large.sh BUILD_DIR   (BUILD_DIR holds release btlens and btlens-scenario)
set -eu
bin=${1:-.build/release}
data=${BENCH_DIR:-bench-data}
mkdir -p "$data"
for size in 1G 10G; do
  f="$data/bench-$size.btsnoop"
  if [ ! -e "$f" ]; then
    echo "generating $f ..."
    "$bin/btlens-scenario" bench "$f.partial" --size "$size"
    mv "$f.partial" "$f"
  fi
done
BENCH_NO_BTMON=1 BENCH_ROUNDS=${BENCH_ROUNDS:-1} exec python3 "$(dirname "$0")/measure.py" "$bin/btlens" "$data/bench-1G.btsnoop" "$data/bench-10G.btsnoop"
