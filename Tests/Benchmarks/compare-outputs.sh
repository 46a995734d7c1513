#!/bin/sh
# A performance change must not change any output: runs two btlens builds on the samples, the real captures
# (../shared/captures/real, when present) and any further captures given, and compares byte for byte the
# outputs of audit (JSON), timeline, energy and devices (JSON) and stats, with their exit codes.
# Usage: compare-outputs.sh OLD_BTLENS NEW_BTLENS [CAPTURE...]   (exit 1 when an output differs)
set -u
old=$1
new=$2
shift 2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
here=$(dirname "$0")/../..
real=${REAL_CAPTURES:-$here/../shared/captures/real}
set -- "$here"/samples/*.btsnoop "$here"/samples/*.pcap "$here"/samples/*.pklg "$@"
if [ -d "$real" ]; then
  for f in "$real"/*; do
    case $(basename "$f") in MANIFEST.tsv | expected*) ;; *) set -- "$@" "$f" ;; esac
  done
else
  echo "NOTE: $real absent: real captures not compared"
fi
compared=0
differ=0
for f in "$@"; do
  for cmd in "audit --format json" "timeline --json" "energy --json" "devices --json" "stats"; do
    # shellcheck disable=SC2086 # the command's words split on purpose
    "$old" $cmd "$f" > "$out/old" 2>&1; echo "exit $?" >> "$out/old"
    # shellcheck disable=SC2086
    "$new" $cmd "$f" > "$out/new" 2>&1; echo "exit $?" >> "$out/new"
    compared=$((compared + 1))
    if ! cmp -s "$out/old" "$out/new"; then
      echo "DIFFERS: btlens $cmd $f"
      differ=$((differ + 1))
    fi
  done
done
echo "$compared outputs compared, $differ differ"
[ "$differ" -eq 0 ]
