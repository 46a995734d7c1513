#!/bin/sh
# make fuzz-corpus: each target's committed corpus (Tests/Fuzz/Corpus/TARGET) merged with what fuzzing found
# (fuzz-data/corpus-TARGET) and its seeds (fuzz-data/seeds/TARGET), minimised by libFuzzer (-merge=1: the
# smallest inputs that keep every feature the fuzzer saw).
# Usage: merge-corpora.sh HARNESS [TARGET...]
set -eu
harness=$1
shift
targets=${*:-pipeline readers btsnoop pcap pcapng pklg monitor btsnooz archive decode l2cap ll addata tracker anonymizer}
for t in $targets; do
  mkdir -p "Tests/Fuzz/Corpus/$t" "fuzz-data/corpus-$t" "fuzz-data/seeds/$t"
  rm -rf "fuzz-data/merged-$t"
  mkdir -p "fuzz-data/merged-$t"
  BTLENS_FUZZ_TARGET=$t nice -n 10 "$harness" -merge=1 -max_len=16384 -timeout=10 -rss_limit_mb=2048 \
    "fuzz-data/merged-$t" "Tests/Fuzz/Corpus/$t" "fuzz-data/corpus-$t" "fuzz-data/seeds/$t" > "fuzz-data/logs/merge-$t.log" 2>&1
  rm -rf "Tests/Fuzz/Corpus/$t"
  mv "fuzz-data/merged-$t" "Tests/Fuzz/Corpus/$t"
  printf '%-10s %5s inputs %6s KiB\n' "$t" "$(ls "Tests/Fuzz/Corpus/$t" | wc -l)" "$(du -sk "Tests/Fuzz/Corpus/$t" | cut -f1)"
done
