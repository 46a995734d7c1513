#!/bin/sh
# make fuzz / fuzz-long: every target of the harness (BTLENS_FUZZ_TARGET) under libFuzzer for SECONDS each, JOBS
# at a time, each growing its own corpus in fuzz-data/corpus-TARGET from its committed one (Tests/Fuzz/Corpus/
# TARGET) and its seeds (fuzz-data/seeds/TARGET, when `make fuzz-corpus` wrote them); then the executions, the
# executions per second, the corpus size and whether it failed, per target.
# Usage: run-targets.sh HARNESS SECONDS JOBS [TARGET...]
set -eu
harness=$1 seconds=$2 jobs=$3
shift 3
targets=${*:-pipeline readers btsnoop pcap pcapng pklg monitor btsnooz archive decode l2cap ll addata tracker anonymizer}
mkdir -p fuzz-data/artifacts fuzz-data/logs
for t in $targets; do mkdir -p "fuzz-data/corpus-$t" "Tests/Fuzz/Corpus/$t"; rm -f "fuzz-data/logs/$t.log" "fuzz-data/logs/$t.time"; done
# Inputs of at most 16 KiB for the readers (whole small captures); 4 KiB of framed packets (a dozen to a hundred
# records) for the decoder, tracker and anonymizer targets, and for the whole pipeline, whose reports grow with the
# records: longer inputs find little more there and cost executions; 1650 bytes, extended advertising's most, for
# advertising data.
# The whole pipeline reaches some 80,000 coverage features per input: the entropic schedule's bookkeeping of rare
# features (libFuzzer's own) took more processor time than btlens did, so that target runs the plain schedule.
echo "$targets" | tr ' ' '\n' | xargs -P "$jobs" -I{} sh -c '
  seeds=; [ -d fuzz-data/seeds/{} ] && seeds=fuzz-data/seeds/{}
  case {} in pipeline|decode|l2cap|ll|tracker|anonymizer) max=4096 ;; addata) max=1650 ;; *) max=16384 ;; esac
  schedule=; [ {} = pipeline ] && schedule=-entropic=0
  BTLENS_FUZZ_TARGET={} nice -n 10 /usr/bin/time -f "%U %S" -o fuzz-data/logs/{}.time "$0" $schedule -max_len=$max -timeout=10 -rss_limit_mb=2048 -max_total_time="$1" -print_final_stats=1 \
    -artifact_prefix=fuzz-data/artifacts/{}- fuzz-data/corpus-{} Tests/Fuzz/Corpus/{} $seeds > fuzz-data/logs/{}.log 2>&1 \
    || echo "{}: FAILED (fuzz-data/logs/{}.log, artifacts in fuzz-data/artifacts/)"' "$harness" "$seconds"
status=0
# exec/s is libFuzzer's, over wall time: on a machine busy with other work it says how busy; exec/cpu-s divides
# the executions by the processor time the fuzzer had (user and system), which says what one core does.
printf '%-10s %12s %10s %12s %8s %6s\n' target executions exec/s exec/cpu-s corpus failed
for t in $targets; do
  log=fuzz-data/logs/$t.log
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
  corpus=$(ls "fuzz-data/corpus-$t" "Tests/Fuzz/Corpus/$t" | grep -vc -e '^$' -e ':$')
  cpu=$(tail -n 1 "fuzz-data/logs/$t.time" 2>/dev/null | awk '{ print $1 + $2 }' || true)
  per_cpu=$(awk -v r="${runs:-0}" -v c="${cpu:-0}" 'BEGIN { if (c > 0) printf "%d", r / c; else print "?" }')
  failed=$(grep -c -E "ERROR: (libFuzzer|AddressSanitizer|LeakSanitizer)|Fatal error|SUMMARY: " "$log" || true)
  [ "$failed" -eq 0 ] || status=1
  printf '%-10s %12s %10s %12s %8s %6s\n' "$t" "${runs:-?}" "${rate:-?}" "$per_cpu" "$corpus" "$failed"
done
exit $status
