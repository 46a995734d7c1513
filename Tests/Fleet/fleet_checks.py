"""The cross-capture answers the fleet examples must give on the farm Tests/Fleet/make-farm.sh writes, checked
against what the generator planted (its truth manifests). Engine-agnostic: `sql` runs one query of
examples/fleet/ on DuckDB or Spark SQL and returns its rows as dicts, so both engines are held to the same answers.
"""
import glob
import json
import os
import re
import struct

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "fleet")
TABLES = ["captures", "connections", "phases", "scans", "advertisers", "att_series", "findings", "energy"]
# A finding and a planted item match when their spans overlap within this many seconds (as GroundTruthTests).
TOLERANCE = 2.0
SERIALS = 4
# btsnoop: a 16-byte file header, then records of a 24-byte header (original length, included length, flags,
# drops, timestamp; big-endian) and the packet.
BTSNOOP_FILE_HEADER = 16
BTSNOOP_RECORD_HEADER = 24


def query(name):
    with open(os.path.join(EXAMPLES, name)) as f:
        return f.read()


def test_of(path):
    m = re.search(r"([^/-]+)-([^/]+)-btsnoop_hci[.]log$", path)
    return m.group(1) if m else None


def build_of(path):
    m = re.search(r"build-([0-9]+)", path)
    return m.group(1) if m else None


def manifests(farm):
    """{capture path: manifest} for every ground-truth capture of the farm."""
    out = {}
    for path in sorted(glob.glob(os.path.join(farm, "truth", "*.truth.json"))):
        build, capture = os.path.basename(path)[: -len(".truth.json")].split("--")
        with open(path) as f:
            out[os.path.join(farm, build, capture)] = json.load(f)
    return out


def matches(finding, item, path):
    return (finding["file"] == path and finding["rule"] == item["rule"]
            and (item["connection"] is None or finding["connection_id"] == item["connection"])
            and (item["attribute_handle"] is None
                 or (finding["attribute_handle"] is not None and int(finding["attribute_handle"], 16) == item["attribute_handle"]))
            and float(finding["start_time"]) <= item["end"] + TOLERANCE
            and float(finding["end_time"]) >= item["start"] - TOLERANCE)


def btsnoop_records(path):
    """{byte offset: (record number, record length)} of a btsnoop file, records numbered from 1."""
    out = {}
    with open(path, "rb") as f:
        data = f.read()
    offset, number = BTSNOOP_FILE_HEADER, 1
    while offset + BTSNOOP_RECORD_HEADER <= len(data):
        included = struct.unpack_from(">I", data, offset + 4)[0]
        length = BTSNOOP_RECORD_HEADER + included
        if offset + length > len(data):
            break
        out[offset] = (number, length)
        offset += length
        number += 1
    return out


def check(sql, farm, report=print):
    truth = manifests(farm)
    assert len(truth) == 2 * 5 * SERIALS, f"{len(truth)} truth manifests"

    # Every capture has its row; the file that is no capture is a row with its error, the cut one a row too.
    captures = {r["file"]: r for r in sql("SELECT file, sha256, error, problems, records, radio_charge_mc FROM captures")}
    on_disk = [p for p in glob.glob(os.path.join(farm, "build-*", "*")) if os.path.isfile(p)]
    assert sorted(captures) == sorted(on_disk), f"captures rows {len(captures)} vs files {len(on_disk)}"
    foreign = [r for f, r in captures.items() if f.endswith("logcat-R58M41ABCDE.txt")]
    assert foreign and foreign[0]["error"], f"the foreign file is a row with its error: {foreign}"
    cut = [r for f, r in captures.items() if f.endswith("cut-short.btsnoop")][0]
    assert cut["error"] or cut["problems"] > 0, f"the truncated capture shows its damage: {cut}"
    assert all(len(r["sha256"] or "") == 64 for r in captures.values())

    # Counts per rule: every planted problem is found (the finding of its rule, connection, attribute and time),
    # no control is, and the fleet-wide counts per rule are the planted ones.
    findings = sql("SELECT file, rule, connection_id, attribute_handle, start_time, end_time FROM findings")
    planted_per_rule, found_per_rule = {}, {}
    for path, manifest in truth.items():
        mine = [f for f in findings if f["file"] == path]
        for item in manifest["planted"]:
            planted_per_rule[item["rule"]] = planted_per_rule.get(item["rule"], 0) + 1
            assert any(matches(f, item, path) for f in mine), f"{path}: planted {item} not found"
        for item in manifest["controls"]:
            assert not any(matches(f, item, path) for f in mine), f"{path}: control {item} flagged"
        for f in mine:
            found_per_rule[f["rule"]] = found_per_rule.get(f["rule"], 0) + 1
    truth_files = set(truth)
    counted = {}
    for r in sql(query("top_rules_by_count.sql")):
        counted[r["rule"]] = r["findings"]
    for rule, n in planted_per_rule.items():
        assert found_per_rule.get(rule, 0) == n, f"{rule}: {found_per_rule.get(rule, 0)} findings in the truth captures, {n} planted"
        assert counted.get(rule, 0) >= n, f"{rule}: top_rules_by_count says {counted.get(rule)}, {n} planted"
    unexpected = {r: n for r, n in found_per_rule.items() if r not in planted_per_rule}
    assert not unexpected, f"findings of rules nothing planted in the truth captures: {unexpected}"
    report(f"counts per rule match what was planted: {dict(sorted(planted_per_rule.items()))}")
    by_cost = sql(query("top_rules_by_cost.sql"))
    assert sorted(r["rule"] for r in by_cost) == sorted(counted), "top_rules_by_cost names the same rules"
    assert all(by_cost[i]["waste_mc"] >= by_cost[i + 1]["waste_mc"] for i in range(len(by_cost) - 1))

    # The build diff: build 412 planted one more waste in one test, on every device; nothing else changed.
    extra = {}
    for path, manifest in truth.items():
        if build_of(path) == "412":
            base = truth[path.replace("build-412", "build-411")]
            for item in manifest["planted"][len(base["planted"]):]:
                key = (test_of(path), item["rule"])
                extra[key] = extra.get(key, 0) + 1
    assert len(extra) == 1 and list(extra.values()) == [SERIALS], f"the farm plants one waste on {SERIALS} devices: {extra}"
    diff = {(r["test"], r["rule"]): r["head_findings"] - r["base_findings"] for r in sql(query("build_diff.sql"))}
    assert diff == extra, f"build_diff.sql: {diff}, planted {extra}"
    report(f"build diff: {diff}")

    # Radio charge per test per build: the same wherever the builds are the same, more where 412 lingers.
    (changed_test, _), = extra
    charge = {(r["test"], r["build"]): float(r["radio_charge_mc"]) for r in sql(query("radio_charge_per_test.sql"))}
    tests = {t for t, _ in charge}
    assert len(tests) == 7, f"tests: {sorted(tests)}"
    for test in tests:
        base, head = charge.get((test, "411")), charge.get((test, "412"))
        assert base is not None and head is not None, f"{test}: {base} {head}"
        if test == changed_test:
            assert head > base, f"{test}: build 412 lingers, yet {head} <= {base} mC"
        else:
            assert abs(head - base) < 1e-6, f"{test}: {base} vs {head} mC"
    report(f"radio charge of {changed_test}: {charge[(changed_test, '411')]:.3f} -> {charge[(changed_test, '412')]:.3f} mC")

    # Joins back to the bytes: each finding's first record is the record at that byte offset, with that length.
    cache = {}
    rows = sql(query("findings_bytes.sql"))
    assert rows, "findings_bytes.sql returned nothing"
    for r in rows:
        if not r["format"].startswith("btsnoop"):
            continue
        records = cache.setdefault(r["file"], btsnoop_records(r["file"]))
        assert records.get(r["byte_offset"]) == (r["record"], r["length"]), \
            f"{r['file']}: record {r['record']} at byte {r['byte_offset']} ({r['length']} bytes) is {records.get(r['byte_offset'])}"
    report(f"{len(rows)} findings point at their records' bytes")

    # The other example queries run and answer.
    left_on = sql(query("scans_left_on.sql"))
    assert sum(r["scans"] for r in left_on) == sql("SELECT count(*) AS n FROM scans")[0]["n"]
    slowest = sql(query("slowest_discoveries.sql"))
    # The generated peripherals' Device Information names one of these manufacturers (TruthProfiles), which the
    # apps of the ground-truth episodes read.
    named = {r["manufacturer"] for r in slowest} - {"?"}
    assert named and named <= {"Acme", "Nordic Things", "Sensorium"}, f"slowest_discoveries.sql: {slowest}"
    report(f"slowest discovery: {slowest[0]}")
