#!/bin/sh
# make bench / make bench-fleet: `btlens export --format jsonl` over 1,000 generated captures of mixed size, on one
# machine: captures/s, MB/s, and the size of the tables per 1,000 captures (to size a cluster).
# Usage: run-bench-fleet.sh BUILD_DIR   (BUILD_DIR holds release btlens and btlens-scenario)
# The mix: 900 ground-truth captures (seeds 1–900: 6–10 episodes each of connections, discovery, polling, scans and
# advertising; 8–130 kB), 90 generated 1 MB captures and 10 of 10 MB (a day of a busy app), so a few large files
# weigh as they do in a real farm. Generated once into BENCH_DIR/fleet (reused while the count is right).
set -eu
root=$(pwd)
bin=${1:-.build/release}
data=${BENCH_DIR:-bench-data}/fleet
captures=$data/captures
facts=$data/facts
mkdir -p "$captures"
if [ "$(ls "$captures" | wc -l)" -ne 1000 ]; then
  echo "generating 1,000 captures in $captures ..."
  rm -rf "$captures"
  mkdir -p "$captures"
  seed=1
  while [ $seed -le 900 ]; do
    "$bin/btlens-scenario" truth --seed $seed "$captures/truth-$seed.btsnoop"
    rm -f "$captures/truth-$seed.btsnoop.truth.json"
    seed=$((seed + 1))
  done
  "$bin/btlens-scenario" bench "$captures/.big-10M.btsnoop" --size 10M
  "$bin/btlens-scenario" bench "$captures/.big-1M.btsnoop" --size 1M
  i=1
  while [ $i -le 90 ]; do cp "$captures/.big-1M.btsnoop" "$captures/busy-1M-$i.btsnoop"; i=$((i + 1)); done
  i=1
  while [ $i -le 10 ]; do cp "$captures/.big-10M.btsnoop" "$captures/busy-10M-$i.btsnoop"; i=$((i + 1)); done
  rm -f "$captures/.big-10M.btsnoop" "$captures/.big-1M.btsnoop"
fi
bytes=$(cat "$captures"/* | wc -c)
cores=$(nproc)
rm -rf "$facts"
start=$(date +%s.%N)
"$bin/btlens" export --format jsonl -o "$facts" "$captures" 2> "$data/export.log"
end=$(date +%s.%N)
tail -1 "$data/export.log"
awk -v s="$start" -v e="$end" -v b="$bytes" -v c="$cores" 'BEGIN {
  t = e - s
  printf "export (fleet): 1000 captures, %.1f MB in %.1f s on %d cores: %.1f captures/s, %.1f MB/s\n", b / 1e6, t, c, 1000 / t, b / 1e6 / t
}'
total=0
for f in "$facts"/*.jsonl; do
  size=$(wc -c < "$f")
  total=$((total + size))
  printf "  %-18s %10d bytes  %8d rows\n" "$(basename "$f")" "$size" "$(wc -l < "$f")"
done
awk -v t="$total" 'BEGIN { printf "tables per 1,000 captures: %.1f MB of JSON Lines\n", t / 1e6 }'
if python3 -c "import duckdb" 2>/dev/null; then
  (cd "$facts" && python3 -c "import duckdb; duckdb.sql(open('$root/examples/fleet/to_parquet.sql').read())")
  awk_total=$(cat "$facts"/*.parquet | wc -c)
  awk -v t="$awk_total" 'BEGIN { printf "as Parquet (examples/fleet/to_parquet.sql): %.1f MB\n", t / 1e6 }'
fi
