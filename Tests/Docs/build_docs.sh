#!/bin/sh
# make docs: DocC documentation of the library's readers (BTCapture), decoders (BTDecode) and model (BTTrack),
# from the symbol graphs of the debug build and each module's catalog (Sources/MODULE/MODULE.docc), into
# BUILD_DIR/docs/MODULE.doccarchive. Then checks that every public type of them is documented and that DocC
# resolved every link of the catalogs (its warnings about parameter docs are left in BUILD_DIR/docs/MODULE.log). Usage: build_docs.sh BUILD_DIR
set -eu
build=${1:-.build}
out="$build/docs"
graphs="$build/symbol-graphs"
rm -rf "$out" "$graphs"
mkdir -p "$out" "$graphs"
triple=$(swift -print-target-info | sed -n 's/.*"triple": "\([^"]*\)".*/\1/p' | head -n 1)
includes="-I $build/debug/Modules -I $build/debug/CStreamSupport.build -I Sources/CStreamSupport/include"
for d in Sources/CArchive Sources/CPcap Sources/CZlib Sources/CBluetooth Sources/CMalloc; do includes="$includes -I $d"; done
for module in BTCapture BTDecode BTTrack; do
  mkdir -p "$graphs/$module"
  # shellcheck disable=SC2086
  swift-symbolgraph-extract -module-name "$module" -target "$triple" $includes -minimum-access-level public \
    -output-dir "$graphs/$module"
  docc convert "Sources/$module/$module.docc" --additional-symbol-graph-dir "$graphs/$module" \
    --fallback-display-name "$module" --fallback-bundle-identifier "org.btlens.$module" \
    --output-path "$out/$module.doccarchive" > "$out/$module.log" 2>&1 \
    || { cat "$out/$module.log"; echo "docs: DocC failed for $module"; exit 1; }
  # A topic or symbol link of the catalog that names nothing: the page would silently miss it.
  if grep -q "doesn't exist at\|can't be resolved" "$out/$module.log"; then
    grep -A6 "doesn't exist at\|can't be resolved" "$out/$module.log"; echo "docs: $module's documentation has links DocC cannot resolve"; exit 1
  fi
done
python3 Tests/Docs/check_docs.py "$graphs" "$out"
