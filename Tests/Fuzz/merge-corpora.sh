#!/bin/sh
# make fuzz-corpus: each target's committed corpus (Tests/Fuzz/Corpus/TARGET) merged with what fuzzing found
# (fuzz-data/corpus-TARGET) and its seeds (fuzz-data/seeds/TARGET), minimised by libFuzzer: the smallest set of
# inputs, the smaller first, that reaches every edge and comparison the fuzzer saw (-set_cover_merge=1; without
# hit counts, -use_counters=0, which would keep three times the inputs for how often a loop ran), within the input
# limits of run-targets.sh.
# Usage: merge-corpora.sh HARNESS [TARGET...]
set -eu
harness=$1
shift
targets=${*:-pipeline readers btsnoop pcap pcapng pklg monitor btsnooz archive decode l2cap ll addata tracker anonymizer}
for t in $targets; do
  mkdir -p "Tests/Fuzz/Corpus/$t" "fuzz-data/corpus-$t" "fuzz-data/seeds/$t"
  rm -rf "fuzz-data/merged-$t"
  mkdir -p "fuzz-data/merged-$t"
  case $t in pipeline|decode|l2cap|ll|tracker|anonymizer) max=4096 ;; addata) max=1650 ;; *) max=16384 ;; esac
  BTLENS_FUZZ_TARGET=$t nice -n 10 "$harness" -set_cover_merge=1 -use_counters=0 -max_len=$max -timeout=10 -rss_limit_mb=2048 \
    "fuzz-data/merged-$t" "Tests/Fuzz/Corpus/$t" "fuzz-data/corpus-$t" "fuzz-data/seeds/$t" > "fuzz-data/logs/merge-$t.log" 2>&1
  rm -rf "Tests/Fuzz/Corpus/$t"
  mv "fuzz-data/merged-$t" "Tests/Fuzz/Corpus/$t"
  printf '%-10s %5s inputs %8s bytes\n' "$t" "$(ls "Tests/Fuzz/Corpus/$t" | wc -l)" "$(cat "Tests/Fuzz/Corpus/$t"/* | wc -c)"
done
