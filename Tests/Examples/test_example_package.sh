#!/bin/sh
# The example package (examples/reader-package) depends on btlens by version, the way another project would: a
# clone of this repository's HEAD tagged with btlens' version, reached by a file:// URL (offline). It must
# resolve, build and read a sample. Usage: test_example_package.sh [WORK_DIR]
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
work=${1:-$(mktemp -d)}
mkdir -p "$work"
work=$(cd "$work" && pwd)  # a file:// URL needs an absolute path
version=$(sed -n 's/.*static let version = "\([0-9.]*\)".*/\1/p' "$root/Sources/btlens/BTLens.swift" | head -n 1)
[ -n "$version" ] || { echo "example package: btlens' version not found"; exit 1; }
rm -rf "$work/btlens" "$work/example"
git clone --quiet "$root" "$work/btlens"
git -C "$work/btlens" tag "$version"
cp -R "$root/examples/reader-package" "$work/example"
if ! BTLENS_PACKAGE_URL="file://$work/btlens" swift build --package-path "$work/example" --scratch-path "$work/build" \
    > "$work/build.log" 2>&1; then
  tail -n 20 "$work/build.log"; echo "example package: did not build"; exit 1
fi
out=$("$work/build/debug/capture-summary" "$root/samples/wasteful-central.btsnoop")
echo "$out" | head -n 4
echo "$out" | grep -q "^1523 records, 2 links" || { echo "example package: unexpected output"; exit 1; }
echo "$out" | grep -q "BTL001 scan-after-connect" || { echo "example package: no finding printed"; exit 1; }
grep -q "\"version\" *: *\"$version\"" "$work/example/Package.resolved" 2>/dev/null \
  || grep -q "$version" "$work/example/Package.resolved" \
  || { echo "example package: btlens $version not resolved by version"; exit 1; }
echo "example package: 1 passed, 0 failed (btlens $version by version from a file:// clone)"
