#!/bin/sh
# make fuzz: every target of the harness (BTLENS_FUZZ_TARGET: pipeline, readers, btsnoop, pcap, pcapng, pklg,
# decode, addata, tracker) under libFuzzer for SECONDS each, JOBS at a time, each with its own corpus
# (fuzz-data/corpus-TARGET, grown from the shared seeds in fuzz-data/corpus), then executions per second per target.
# Usage: run-targets.sh HARNESS SECONDS JOBS [TARGET...]
set -eu
harness=$1 seconds=$2 jobs=$3
shift 3
targets=${*:-pipeline readers btsnoop pcap pcapng pklg decode addata tracker}
mkdir -p fuzz-data/artifacts fuzz-data/logs
for t in $targets; do mkdir -p "fuzz-data/corpus-$t"; done
echo "$targets" | tr ' ' '\n' | xargs -P "$jobs" -I{} sh -c '
  BTLENS_FUZZ_TARGET={} "$0" -max_len=16384 -timeout=10 -rss_limit_mb=2048 -max_total_time="$1" -print_final_stats=1 \
    -artifact_prefix=fuzz-data/artifacts/{}- fuzz-data/corpus-{} fuzz-data/corpus > fuzz-data/logs/{}.log 2>&1 \
    || echo "{}: FAILED (fuzz-data/logs/{}.log, artifacts in fuzz-data/artifacts/)"' "$harness" "$seconds"
status=0
printf '%-9s %12s %10s %8s %6s\n' target executions exec/s corpus crash
for t in $targets; do
  log=fuzz-data/logs/$t.log
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  time=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
  corpus=$(ls "fuzz-data/corpus-$t" | wc -l)
  crashed=$(grep -c -E "ERROR: (libFuzzer|AddressSanitizer)|Fatal error|SUMMARY: " "$log" || true)
  [ "$crashed" -eq 0 ] || status=1
  printf '%-9s %12s %10s %8s %6s\n' "$t" "${runs:-?}" "${time:-?}" "$corpus" "$crashed"
done
exit $status
