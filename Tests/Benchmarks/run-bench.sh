#!/bin/sh
# make bench: throughput and peak memory of `btlens stats` on generated captures (release build).
# Usage: run-bench.sh BUILD_DIR   (BUILD_DIR holds release btlens and btlens-scenario)
set -eu
bin=${1:-.build/release}
data=${BENCH_DIR:-bench-data}
mkdir -p "$data"
# Cached captures are reused only if this generator would write them. Its output for a size is a byte prefix
# of its output for any larger size (same seed; the size only says where to stop), so a fresh 1M capture must
# equal the start of each cached file; a file that differs (the generator changed) or is shorter than its size
# (an interrupted run) is generated again. New files are written under a temporary name and renamed when done.
probe="$data/.probe-1M.btsnoop"
trap 'rm -f "$probe"' EXIT
"$bin/btlens-scenario" bench "$probe" --size 1M
probe_bytes=$(wc -c < "$probe")
for spec in 100M:104857600 1G:1073741824; do
  size=${spec%%:*}
  bytes=${spec#*:}
  f="$data/bench-$size.btsnoop"
  if [ -e "$f" ]; then
    if [ "$(wc -c < "$f")" -lt "$bytes" ]; then
      echo "$f is shorter than $size (an interrupted run): generating it again"
      rm -f "$f"
    elif ! cmp -s -n "$probe_bytes" "$probe" "$f"; then
      echo "$f was written by another version of the generator: generating it again"
      rm -f "$f"
    fi
  fi
  if [ ! -e "$f" ]; then
    echo "generating $f ..."
    "$bin/btlens-scenario" bench "$f.partial" --size "$size"
    mv "$f.partial" "$f"
  fi
done
rm -f "$probe"
# The air capture (nRF Sniffer, linktype 272) of the same stream. Its end depends on where the stream stops (a
# link's last events are written when the stream ends), so only the first half of a fresh 1M capture must match
# the cached file's start.
air="$data/bench-air-272-100M.pcap"
air_probe="$data/.probe-air-1M.pcap"
trap 'rm -f "$probe" "$air_probe"' EXIT
"$bin/btlens-scenario" bench "$air_probe" --size 1M --format air-272
half=$(( $(wc -c < "$air_probe") / 2 ))
if [ -e "$air" ] && { [ "$(wc -c < "$air")" -lt 104857600 ] || ! cmp -s -n "$half" "$air_probe" "$air"; }; then
  echo "$air is short or was written by another version of the generator: generating it again"
  rm -f "$air"
fi
if [ ! -e "$air" ]; then
  echo "generating $air ..."
  "$bin/btlens-scenario" bench "$air.partial" --size 100M --format air-272
  mv "$air.partial" "$air"
fi
rm -f "$air_probe"
exec python3 "$(dirname "$0")/measure.py" "$bin/btlens" "$data/bench-100M.btsnoop" "$data/bench-1G.btsnoop" "$air"
