# btlens — build, test, run, benchmark. Every target installs what it needs on Debian.
SWIFT      ?= swift
PREFIX     ?= /usr/local
BUILD_DIR  ?= .build
APT_PKGS   := libpcap-dev libbluetooth-dev libarchive-dev zlib1g-dev pkg-config python3
SAMPLE     := samples/wasteful-central.btsnoop
SUDO       := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all deps test-deps build release run test output-digests test-fleet test-example docs test-spark test-asan test-tsan samples rule-docs bench bench-fleet bench-large fuzz fuzz-build fuzz-long fuzz-corpus fuzz-coverage install uninstall man clean assigned-numbers screenshots

all: build

# System libraries btlens links against (libpcap, libbluetooth, libarchive and zlib headers).
deps:
	@missing=""; for p in $(APT_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

build: deps
	$(SWIFT) build --product btlens

# Release builds optimise across modules (readers, decoders, tracking): the per-packet calls between them are
# inlined and specialised, which takes every command 3-13 % less time (docs/PERFORMANCE.md). Passed here, not in
# Package.swift, so that packages depending on the library are not built with an unsafe flag. The Swift runtime
# and Foundation are linked in: the binary runs where no Swift toolchain is installed, starts in about two thirds of
# the time, and an audit takes about 5 % less processor time (calls into the runtime are direct).
RELEASE_FLAGS ?= -Xswiftc -cross-module-optimization --static-swift-stdlib
release: deps
	$(SWIFT) build -c release $(RELEASE_FLAGS) --product btlens
	$(SWIFT) build -c release $(RELEASE_FLAGS) --product btlens-scenario

# The main job on a bundled sample: what the app did on the radio, and what it wasted.
run: build
	@echo "== btlens timeline $(SAMPLE)"
	@$(BUILD_DIR)/debug/btlens timeline $(SAMPLE)
	@echo
	@echo "== btlens audit $(SAMPLE)"
	@$(BUILD_DIR)/debug/btlens audit --fail-on never $(SAMPLE)

# The tests validate JSON output against the schemas with Python's jsonschema, and drive the HTML report in a
# real headless browser (Debian's chromium through chromium-driver, with Selenium from PyPI; axe-core from PyPI's
# axe-selenium-python checks its accessibility).
test-deps: deps
	@python3 -c "import jsonschema" 2>/dev/null || python3 -m pip install --quiet jsonschema || \
	  (DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq python3-jsonschema)
	@# The fleet test loads the exported tables into DuckDB's Python package.
	@python3 -c "import duckdb" 2>/dev/null || python3 -m pip install --quiet duckdb || \
	  python3 -m pip install --quiet --break-system-packages duckdb
	@(command -v chromium >/dev/null && command -v chromedriver >/dev/null) || ($(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq chromium chromium-driver >/dev/null)
	@python3 -c "import selenium" 2>/dev/null || python3 -m pip install --quiet selenium || \
	  python3 -m pip install --quiet --break-system-packages selenium || \
	  (DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq python3-selenium)
	@# The HTML report's accessibility test runs axe-core in the browser (bundled by axe-selenium-python).
	@python3 -c "import axe_selenium_python" 2>/dev/null || python3 -m pip install --quiet axe-selenium-python || \
	  python3 -m pip install --quiet --break-system-packages axe-selenium-python
	@python3 -c "import perfetto.protos.perfetto.trace.perfetto_trace_pb2" 2>/dev/null || python3 -m pip install --quiet perfetto
	@# The README's CI recipes: their YAML parsed, their JUnit loaded as a CI would (Scripts/check_readme_recipes.py).
	@python3 -c "import yaml" 2>/dev/null || python3 -m pip install --quiet PyYAML
	@python3 -c "import junitparser" 2>/dev/null || python3 -m pip install --quiet junitparser
	@# The man page's check (`make man`) renders it with man-db and groff.
	@(command -v man >/dev/null && command -v groff >/dev/null) || ($(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq man-db groff-base >/dev/null)

# The example package builds the library again in its own folder (about 40 s): it runs beside `swift test`, which
# leaves a core idle much of the time, and its output follows the suite's.
test: test-deps
	$(SWIFT) build --build-tests
	@mkdir -p $(BUILD_DIR)
	@sh Tests/Examples/test_example_package.sh $(BUILD_DIR)/example-test > $(BUILD_DIR)/example-test.log 2>&1 & example=$$!; \
	  $(SWIFT) test --skip-build; suite=$$?; wait $$example; built=$$?; cat $(BUILD_DIR)/example-test.log; \
	  [ $$suite -eq 0 ] && [ $$built -eq 0 ]
	@$(MAKE) --no-print-directory test-fleet
	@sh Tests/Docs/build_docs.sh $(BUILD_DIR)
	@$(MAKE) --no-print-directory man

# Rewrites Tests/CLITests/OutputDigests/*.tsv, the sha256 of every report on every sample, real capture of ../shared
# and ground-truth seed, from the current code (OutputDigestTests compares them in `make test`). Only for a deliberate
# output change, committed with it and the reason. Without ../shared, real.tsv is left as it is.
output-digests: deps
	$(SWIFT) build --build-tests
	UPDATE_OUTPUT_DIGESTS=1 $(SWIFT) test --skip-build --filter OutputDigestTests

# The fleet test (Tests/Fleet): ~50 captures of a generated device farm, two builds apart by one planted waste,
# exported with `btlens export --format jsonl`, validated against the schemas, loaded into DuckDB and queried with
# examples/fleet/*.sql; the answers are checked against what the generator planted. About 15 s.
FLEET_DIR ?= $(BUILD_DIR)/fleet-test
test-fleet:
	python3 Tests/Fleet/test_fleet.py $(BUILD_DIR)/debug/btlens $(BUILD_DIR)/debug/btlens-scenario $(FLEET_DIR)

# DocC documentation of the library (readers, decoders, model) into $(BUILD_DIR)/docs/MODULE.doccarchive, from the
# debug build's modules; fails when a public type lacks a doc comment or a catalog link does not resolve.
# Preview with `docc preview Sources/BTTrack/BTTrack.docc --additional-symbol-graph-dir $(BUILD_DIR)/symbol-graphs/BTTrack`.
docs: build
	sh Tests/Docs/build_docs.sh $(BUILD_DIR)

# examples/reader-package, a package of its own that depends on btlens by version, built against a clone of this
# repository's HEAD tagged with btlens' version and reached by a file:// URL (offline). About a minute.
test-example:
	sh Tests/Examples/test_example_package.sh $(BUILD_DIR)/example-test

# The same farm through examples/fleet/spark_btlens.py in Spark's local mode, held to the same answers. Installs a
# Java runtime (Debian's default-jre-headless) and pyspark (PyPI) when missing. Not part of `make test`.
test-spark: test-deps
	@command -v java >/dev/null || ($(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq default-jre-headless >/dev/null)
	@python3 -c "import pyspark" 2>/dev/null || python3 -m pip install --quiet pyspark || \
	  python3 -m pip install --quiet --break-system-packages pyspark
	$(SWIFT) build --product btlens
	$(SWIFT) build --product btlens-scenario
	python3 Tests/Fleet/test_spark.py $(BUILD_DIR)/debug/btlens $(BUILD_DIR)/debug/btlens-scenario $(FLEET_DIR)

# The whole suite under AddressSanitizer, in its own build directory: decoders hand out views that borrow the
# read buffer, and a view kept past its buffer (in the code or a test) reads freed memory that a plain build
# often gets away with. Slower (about 5 minutes of tests on 2 cores); not part of `make test`.
test-asan: test-deps
	$(SWIFT) build --build-tests --sanitize=address --scratch-path .build-asan
	ASAN_OPTIONS=detect_leaks=0 $(SWIFT) test --skip-build --sanitize=address --scratch-path .build-asan

# The whole suite under ThreadSanitizer (in .build-tsan): tracking runs on two threads (reading and decoding on
# one, links on the other) and the CLI reads files in parallel. About 6 minutes of tests on 2 cores.
test-tsan: test-deps
	$(SWIFT) build --build-tests --sanitize=thread --scratch-path .build-tsan
	$(SWIFT) test --skip-build --sanitize=thread --scratch-path .build-tsan

# Rebuilds samples/ byte for byte from the scripted scenarios.
samples: deps
	$(SWIFT) build --product btlens-scenario
	$(BUILD_DIR)/debug/btlens-scenario samples samples

# Rewrites docs/rules/ (a page per audit rule and their index) from the rules' descriptions in Sources/BTRules,
# each page with the rule's findings on its first triggering fixture (written here by btlens-scenario). RuleDocsTests
# fails while the committed pages differ from what this writes; commit the pages with the rule change.
rule-docs: deps
	$(SWIFT) build --product btlens
	$(SWIFT) build --product btlens-scenario
	@fixtures="$$(mktemp -d)" && trap 'rm -rf "$$fixtures"' EXIT && \
	for s in $$($(BUILD_DIR)/debug/btlens rules --json | python3 -c 'import json, sys; \
	  print(" ".join(dict.fromkeys(f["scenario"] for r in json.load(sys.stdin) for f in r["fixtures"] if f["findings"] > 0)))'); do \
	  $(BUILD_DIR)/debug/btlens-scenario write "$$s" "$$fixtures/$$s.btsnoop" || exit 1; \
	done && \
	$(BUILD_DIR)/debug/btlens rules --markdown docs/rules --fixtures "$$fixtures"

# docs/html-report.png, the README's picture of the HTML report: a sample's audit in headless chromium.
SCREENSHOT_SAMPLE := samples/wasteful-central.btsnoop
screenshots: build test-deps
	@mkdir -p docs $(BUILD_DIR)/screenshots
	$(BUILD_DIR)/debug/btlens audit --fail-on never --format html -o $(BUILD_DIR)/screenshots/html-report.html $(SCREENSHOT_SAMPLE)
	python3 Tests/CLITests/html_report_screenshot.py $(BUILD_DIR)/screenshots/html-report.html docs/html-report.png

# Regenerates the Bluetooth SIG's UUID and company names (SIGTables.swift) from Wireshark's copy (Debian tshark).
assigned-numbers:
	@command -v tshark >/dev/null || (DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq tshark)
	python3 Sources/BTWire/AssignedNumbers/generate.py Sources/BTWire/AssignedNumbers/SIGTables.swift

# Release build, a generated ≥1 GB capture, MB/s, records/s, peak RSS and processor time of `btlens stats`,
# tracking and audit, and btmon -a (Debian bluez) as the speed anchor.
bench: release
	@command -v btmon >/dev/null || ($(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq bluez)
	@sh Tests/Benchmarks/run-bench.sh $(BUILD_DIR)/release
	@sh Tests/Benchmarks/run-bench-fleet.sh $(BUILD_DIR)/release

# `make bench`'s figures on 1 GB and a generated 10 GB capture (one round each; about 10 GB of disk and ten
# minutes): how time and peak memory grow with the file.
bench-large: release
	@sh Tests/Benchmarks/run-bench-large.sh $(BUILD_DIR)/release

# Only the fleet figures of `make bench`: `btlens export --format jsonl` over 1,000 generated captures of mixed
# size (captures/s, MB/s) and the size of the tables per 1,000 captures.
bench-fleet: release
	@sh Tests/Benchmarks/run-bench-fleet.sh $(BUILD_DIR)/release

# Coverage-guided fuzzing (libFuzzer, AddressSanitizer, LeakSanitizer), a target per layer fed from memory
# (BTLENS_FUZZ_TARGET): pipeline (everything btlens does to a capture, archives included, one thread and two
# compared), readers (any container by content), btsnoop, pcap, pcapng, pklg, monitor, btsnooz, archive (with its
# decompression-bomb limits), decode (HCI, L2CAP, ATT, EATT, SMP, described), l2cap, ll (link layer, every
# container), addata, tracker (with the rules) and anonymizer (nothing of the input's identifiers in its copy);
# the tracker's and anonymizer's inputs are mutated as HCI packets (Tests/Fuzz/Harness/HCIMutator.swift).
# A crash, a leak, a hang (10 s on one input of at most 16 KiB), too much memory or a broken promise stops a
# target and leaves the input in fuzz-data/artifacts/. `.build/debug/btlens-fuzz FILE...` replays inputs without
# the fuzzer (BTLENS_FUZZ_TARGET picks the target).
# Each target starts from its committed, minimised corpus (Tests/Fuzz/Corpus/TARGET) and grows its own in
# fuzz-data/corpus-TARGET.
#   make fuzz            every target FUZZ_SECONDS, FUZZ_JOBS at a time; prints executions per second per target
#   make fuzz-long HOURS=N   the same for N hours per target (HOURS=0.5: half an hour)
#   make fuzz-corpus     seeds from samples/ and Tests/Fuzz/Seeds (seed-corpora.sh) and what fuzz-data/ found,
#                        minimised (libFuzzer -merge=1) into Tests/Fuzz/Corpus/TARGET
#   make fuzz-coverage   the committed corpora replayed by a coverage build: line coverage of BTCapture and
#                        BTDecode per target and for all of them
FUZZ_SECONDS ?= 120
FUZZ_JOBS    ?= 2
FUZZ_TARGETS ?=
HOURS        ?= 1
FUZZ_HARNESS  = .build-fuzz/release/btlens-fuzz
fuzz-build: deps
	$(SWIFT) build -c release --product btlens-fuzz --scratch-path .build-fuzz -Xswiftc -use-ld=lld \
	  -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING -Xcc -fsanitize=address

fuzz: fuzz-build
	sh Tests/Fuzz/run-targets.sh $(FUZZ_HARNESS) $(FUZZ_SECONDS) $(FUZZ_JOBS) $(FUZZ_TARGETS)

fuzz-long: fuzz-build
	sh Tests/Fuzz/run-targets.sh $(FUZZ_HARNESS) $$(awk 'BEGIN { printf "%d", $(HOURS) * 3600 }') $(FUZZ_JOBS) $(FUZZ_TARGETS)

fuzz-corpus: fuzz-build
	sh Tests/Fuzz/seed-corpora.sh $(FUZZ_HARNESS) fuzz-data/seeds
	sh Tests/Fuzz/merge-corpora.sh $(FUZZ_HARNESS) $(FUZZ_TARGETS)

fuzz-coverage: deps
	$(SWIFT) build --product btlens-fuzz --scratch-path .build-coverage -Xswiftc -profile-generate \
	  -Xswiftc -profile-coverage-mapping
	sh Tests/Fuzz/coverage.sh .build-coverage/debug/btlens-fuzz fuzz-data/coverage $(FUZZ_TARGETS)

install: release
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(BUILD_DIR)/release/btlens $(DESTDIR)$(PREFIX)/bin/btlens
	install -m 644 man/btlens.1 $(DESTDIR)$(PREFIX)/share/man/man1/btlens.1

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/btlens $(DESTDIR)$(PREFIX)/share/man/man1/btlens.1

# Checks the man page renders without warnings. man exits 0 even when it warns, so any warning on stderr fails.
man:
	@warnings="$$(LC_ALL=C.UTF-8 MANWIDTH=100 man --warnings -l man/btlens.1 2>&1 >/dev/null)"; \
	if [ -n "$$warnings" ]; then echo "$$warnings" >&2; exit 1; fi

clean:
	rm -rf $(BUILD_DIR) .build-fuzz .build-coverage .build-asan .build-tsan bench-data fuzz-data
