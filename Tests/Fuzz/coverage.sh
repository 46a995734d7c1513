#!/bin/sh
# make fuzz-coverage: the committed corpus of each target (Tests/Fuzz/Corpus/TARGET) replayed by a harness built
# with coverage instrumentation, then the line coverage of BTCapture and BTDecode each target reaches, and all of
# them together.
# Usage: coverage.sh HARNESS PROFILE-DIR [TARGET...]   (FUZZ_CORPORA: another directory of corpora)
set -eu
harness=$1 profiles=$2
shift 2
corpora=${FUZZ_CORPORA:-Tests/Fuzz/Corpus}
targets=${*:-$(ls "$corpora")}
llvm=$(dirname "$(command -v swift)")
[ -x "$llvm/llvm-cov" ] || llvm=/opt/swift/usr/bin
rm -rf "$profiles"
mkdir -p "$profiles"
# Line coverage (percent, lines, missed) of the two libraries in a profile.
cover() {
  "$llvm/llvm-cov" report "$harness" -instr-profile="$1" Sources/BTCapture Sources/BTDecode \
    | awk '$1 == "TOTAL" { printf "%8s %8s %8s\n", $10, $8, $9 }'
}
printf '%-11s %8s %8s %8s\n' target lines total missed
for t in $targets; do
  LLVM_PROFILE_FILE="$profiles/$t-%p.profraw" BTLENS_FUZZ_TARGET=$t "$harness" "$corpora/$t" > /dev/null
  "$llvm/llvm-profdata" merge -sparse "$profiles/$t"-*.profraw -o "$profiles/$t.profdata"
  printf '%-11s %s\n' "$t" "$(cover "$profiles/$t.profdata")"
done
"$llvm/llvm-profdata" merge -sparse "$profiles"/*.profdata -o "$profiles/all.profdata"
printf '%-11s %s\n' all "$(cover "$profiles/all.profdata")"
# Per file, for finding what no target reaches.
"$llvm/llvm-cov" report "$harness" -instr-profile="$profiles/all.profdata" Sources/BTCapture Sources/BTDecode > "$profiles/files.txt"
echo "per file: $profiles/files.txt"
