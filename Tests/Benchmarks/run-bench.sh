#!/bin/sh
# make bench: throughput and peak memory of `btlens stats` on generated captures (release build).
# Usage: run-bench.sh BUILD_DIR   (BUILD_DIR holds release btlens and btlens-scenario)
set -eu
bin=${1:-.build/release}
data=${BENCH_DIR:-bench-data}
mkdir -p "$data"
for size in 100M 1G; do
  f="$data/bench-$size.btsnoop"
  if [ ! -s "$f" ]; then
    echo "generating $f ..."
    "$bin/btlens-scenario" bench "$f" --size "$size"
  fi
done
exec python3 "$(dirname "$0")/measure.py" "$bin/btlens" "$data/bench-100M.btsnoop" "$data/bench-1G.btsnoop"
