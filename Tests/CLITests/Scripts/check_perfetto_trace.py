#!/usr/bin/env python3
"""Checks a trace written by `btlens export --format perfetto` with Perfetto's own trace schema (the `perfetto`
package on PyPI ships perfetto_trace_pb2), and against `timeline --json`, `audit --format json` and
`energy --json` of the same single capture when given.

usage: check_perfetto_trace.py TRACE [--processes N] [--timeline T.json --audit A.json --energy E.json]
Prints one line per problem and exits 1 when there is any; prints a one-line summary otherwise."""
import argparse
import collections
import decimal
import json
import sys

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

REALTIME = pb.BUILTIN_CLOCK_REALTIME
SLOW_NS = 100_000_000
KEPT_TRANSACTIONS = 20_000  # PerfettoExport.keptATTTransactions
problems = []


def problem(text):
    problems.append(text)


def ns(seconds):
    """JSON decimal seconds (read as Decimal: exact) as integer nanoseconds."""
    return int(decimal.Decimal(seconds) * 1_000_000_000)


def load(path):
    return json.load(open(path), parse_float=decimal.Decimal)


def near(a, b, slack=1_000):
    return abs(a - b) <= slack


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--processes", type=int)
    ap.add_argument("--timeline")
    ap.add_argument("--audit")
    ap.add_argument("--energy")
    # For the checker's own test: break the trace first (drop the first slice end, or the first flow's end) and
    # expect a failure.
    ap.add_argument("--break", dest="breaking", choices=["slice-end", "flow-end"])
    args = ap.parse_args()

    trace = pb.Trace()
    trace.ParseFromString(open(args.trace, "rb").read())
    packets = list(trace.packet)
    if args.breaking == "slice-end":
        packets.remove(next(p for p in packets if p.HasField("track_event") and p.track_event.type == pb.TrackEvent.TYPE_SLICE_END))
    elif args.breaking == "flow-end":
        next(p for p in packets if p.HasField("track_event") and p.track_event.terminating_flow_ids).track_event.ClearField("terminating_flow_ids")
    if not packets:
        problem("no packets")
        return

    # The clock: REALTIME declared by the first packet, and every timestamp on it.
    first = packets[0]
    if not first.HasField("clock_snapshot") or first.clock_snapshot.primary_trace_clock != REALTIME:
        problem("the first packet does not declare REALTIME as the trace clock")
    for p in packets:
        if p.HasField("timestamp") and p.timestamp_clock_id != REALTIME:
            problem(f"packet at {p.timestamp} is not on the REALTIME clock")

    # Tracks: unique uuids, parents declared first, one pid per process.
    tracks, processes, pids = {}, {}, set()
    for p in packets:
        if not p.HasField("track_descriptor"):
            continue
        d = p.track_descriptor
        if d.uuid in tracks:
            problem(f"track uuid {d.uuid} declared twice")
        if d.HasField("process"):
            if d.process.pid in pids:
                problem(f"pid {d.process.pid} used twice")
            pids.add(d.process.pid)
            processes[d.uuid] = d.process.process_name
        elif d.parent_uuid not in tracks:
            problem(f"track {d.name!r} declared before its parent")
        tracks[d.uuid] = d
    if args.processes is not None and len(processes) < args.processes:
        problem(f"{len(processes)} processes, expected at least {args.processes}")

    def process_of(uuid):
        while uuid in tracks and tracks[uuid].parent_uuid:
            uuid = tracks[uuid].parent_uuid
        return uuid

    def base_name(uuid):
        """A lane's track name without its " (2)" suffix."""
        name = tracks[uuid].name
        if name.endswith(")") and " (" in name and name.rsplit(" (", 1)[1][:-1].isdigit():
            return name.rsplit(" (", 1)[0]
        return name

    # Events, as the trace processor orders them: by timestamp, file order among equal ones.
    events = [(p.timestamp, i, p.track_event) for i, p in enumerate(packets) if p.HasField("track_event")]
    last_in_file = {}
    for ts, _, e in events:
        if e.track_uuid not in tracks:
            problem(f"event {e.name!r} on an undeclared track {e.track_uuid}")
            continue
        # Slices are written track by track in time order (instants, such as findings, may come later).
        if e.type in (pb.TrackEvent.TYPE_SLICE_BEGIN, pb.TrackEvent.TYPE_SLICE_END) and ts < last_in_file.get(e.track_uuid, 0):
            problem(f"track {tracks[e.track_uuid].name!r}: event {e.name!r} written out of time order")
        last_in_file[e.track_uuid] = ts
    events.sort(key=lambda x: (x[0], x[1]))

    slices = collections.defaultdict(list)  # track -> [(begin, end, name, category, annotations)]
    instants = collections.defaultdict(list)
    counters = collections.defaultdict(list)
    flows_out, flows_in = {}, {}
    stacks = collections.defaultdict(list)
    for ts, _, e in events:
        t = e.track_uuid
        annotations = {a.name: a for a in e.debug_annotations}
        if e.type == pb.TrackEvent.TYPE_SLICE_BEGIN:
            stacks[t].append((ts, e.name, e.categories[0] if e.categories else "", annotations))
        elif e.type == pb.TrackEvent.TYPE_SLICE_END:
            if not stacks[t]:
                problem(f"track {tracks[t].name!r}: a slice ends at {ts} that never began")
                continue
            begin, name, category, a = stacks[t].pop()
            if ts < begin:
                problem(f"slice {name!r} ends before it starts")
            if stacks[t] and begin < stacks[t][-1][0]:
                problem(f"slice {name!r} starts before its parent")
            slices[t].append((begin, ts, name, category, a))
        elif e.type == pb.TrackEvent.TYPE_INSTANT:
            instants[t].append((ts, e.name, e.categories[0] if e.categories else "", annotations))
        elif e.type == pb.TrackEvent.TYPE_COUNTER:
            if not tracks[t].HasField("counter"):
                problem(f"counter value on a slice track {tracks[t].name!r}")
            counters[t].append((ts, e.double_counter_value))
        for f in e.flow_ids:
            if f in flows_out:
                problem(f"flow {f} starts twice")
            flows_out[f] = (ts, t)
        for f in e.terminating_flow_ids:
            if f in flows_in:
                problem(f"flow {f} ends twice")
            flows_in[f] = (ts, t)
    for t, stack in stacks.items():
        for begin, name, _, _ in stack:
            problem(f"slice {name!r} on {tracks[t].name!r} never ends")

    # Flows: each joins a request to its response on one ATT track, over 100 ms apart.
    if set(flows_out) != set(flows_in):
        problem("flows without both ends: " + str(sorted(set(flows_out) ^ set(flows_in))[:5]))
    for f, (ts, t) in flows_out.items():
        if f in flows_in:
            end, t2 = flows_in[f]
            if t != t2 or not base_name(t).startswith("ATT #"):
                problem(f"flow {f} is not on one ATT track")
            if end - ts <= SLOW_NS:
                problem(f"flow {f} joins a transaction of {(end - ts) / 1e6} ms")

    # Counters: currents and rates never negative, cumulative charges never fall, RSSI in dBm.
    for t, values in counters.items():
        name = tracks[t].name
        if not values:
            problem(f"counter {name!r} has no values")
        vs = [v for _, v in values]
        if "cumulative" in name and any(b < a - 1e-6 for a, b in zip(vs, vs[1:])):
            problem(f"counter {name!r} decreases")
        if ("current" in name or "reports/s" in name) and min(vs) < -1e-9:
            problem(f"counter {name!r} goes negative")
        if name.startswith("RSSI") and not all(-127 <= v <= 20 for v in vs):
            problem(f"counter {name!r} outside -127..20 dBm")

    summary = (f"{len(processes)} processes, {len(tracks)} tracks, {sum(map(len, slices.values()))} slices, "
               f"{sum(map(len, instants.values()))} instants, {sum(map(len, counters.values()))} counter values, "
               f"{len(flows_out)} flows")

    if args.timeline:
        compare(load(args.timeline), tracks, processes, slices, instants, counters, flows_out, base_name, process_of)
    if args.audit:
        findings = load(args.audit)["findings"]
        got = sorted((a["rule"].string_value, ts // 1000) for t in instants for ts, _, c, a in instants[t] if c == "finding")
        want = sorted((f["id"], ns(f["start"]) // 1000) for f in findings)
        if got != want:
            problem(f"finding events {got[:6]} differ from the audit's {want[:6]} ({len(got)} against {len(want)})")
        for t in instants:
            for ts, name, c, a in instants[t]:
                if c == "finding":
                    for key in ("rule", "severity", "message", "records", "cost_phone_mc"):
                        if key not in a and not (key == "cost_phone_mc"):
                            problem(f"finding {name!r} has no {key} annotation")
    if args.energy:
        # The trace draws the model's charge, activity by activity: energy's own model total (its lead total
        # takes the controller's counters where a capture holds them).
        t = load(args.energy)["total"]
        total = t.get("phone_model", t["phone"])["charge_mc"]
        charge = sum(values[-1][1] for t, values in counters.items() if tracks[t].name.startswith("Phone radio charge"))
        total = float(total)
        if abs(charge - total) > max(0.01, 1e-4 * total):
            problem(f"the cumulative phone charge ends at {charge:.4f} mC, energy says {total} mC")
    print(summary)


def compare(timeline, tracks, processes, slices, instants, counters, flows_out, base_name, process_of):
    last = ns(timeline["last_timestamp"]) if timeline["last_timestamp"] is not None else None
    # Connections: one track each, the link as its first slice, from the create command (or the link's start) to
    # its end (or the capture's).
    by_name = collections.defaultdict(list)
    for uuid, d in tracks.items():
        if not d.HasField("process") and not d.HasField("counter"):
            by_name[base_name(uuid)].append(uuid)
    connection_tracks = {}
    for name, uuids in by_name.items():
        if name.startswith("Connection #") and tracks[uuids[0]].parent_uuid in processes:
            connection_tracks[int(name.split()[1][1:])] = uuids[0]
    if sorted(connection_tracks) != sorted(c["id"] for c in timeline["connections"]):
        problem(f"connection tracks {sorted(connection_tracks)} against timeline's {[c['id'] for c in timeline['connections']]}")
    for c in timeline["connections"]:
        t = connection_tracks.get(c["id"])
        if t is None:
            continue
        roots = [s for s in slices[t] if s[3] == "connection" and s[2].startswith("Connection #")]
        if len(roots) != 1:
            problem(f"connection #{c['id']}: {len(roots)} link slices")
            continue
        begin, end = roots[0][0], roots[0][1]
        want_begin = ns(c["connect_requested"] if c["connect_requested"] is not None else c["start"])
        want_end = ns(c["end"]) if c["end"] is not None else last
        if not near(begin, want_begin) or (want_end is not None and not near(end, max(want_end, want_begin))):
            problem(f"connection #{c['id']}: slice {begin}–{end}, timeline {want_begin}–{want_end}")
        lanes = [u for u in by_name[base_name(t)] if process_of(u) == process_of(t)]
        inside = [s for u in lanes for s in slices[u]] + [(ts, ts) for u in lanes for ts, _, cat, _ in instants[u] if cat != "finding"]
        if any(s[0] < begin or s[1] > end for s in inside):
            problem(f"connection #{c['id']}: a phase lies outside the link")
        # ATT transactions: every answered request (while no more than the export keeps), and the timeouts.
        att = [u for name, us in by_name.items() if name == f"ATT #{c['id']}" for u in us
               if process_of(u) == process_of(t)]
        drawn = sum(1 for u in att for s in slices[u] if s[3] == "att")
        answered = c["att"]["transactions"]
        timeouts = sum(1 for e in c["events"] if e["type"] == "att_timeout")
        if answered <= KEPT_TRANSACTIONS and drawn != answered + timeouts:
            problem(f"connection #{c['id']}: {drawn} ATT slices, timeline has {answered} transactions and {timeouts} timeouts")
        slow = c["att"]["max_latency_ms"] > SLOW_NS / 1_000_000
        flowed = any(tr in att for _, tr in flows_out.values())
        if answered <= KEPT_TRANSACTIONS and slow != flowed:
            problem(f"connection #{c['id']}: max latency {c['att']['max_latency_ms']} ms but flows: {flowed}")

    def lane_slices(base, category):
        return sorted(s[0] for name, us in by_name.items() if name == base or name.startswith(base)
                      for u in us for s in slices[u] if s[3] == category)
    scans = lane_slices("Scanning", "scan")
    want = sorted(ns(s["start"]) for s in timeline["scans"])
    if len(scans) != len(want) or not all(near(a, b) for a, b in zip(scans, want)):
        problem(f"{len(scans)} scan slices, timeline has {len(want)} scans")
    adverts = lane_slices("Advertising set", "advertising")
    if len(adverts) != len(timeline["advertising"]):
        problem(f"{len(adverts)} advertising slices, timeline has {len(timeline['advertising'])} sessions")
    attempts = lane_slices("Connection attempts", "connection")
    if len(attempts) != len(timeline["failed_connections"]):
        problem(f"{len(attempts)} attempt slices, timeline has {len(timeline['failed_connections'])}")
    names = [tracks[t].name for t in counters]
    if any(s["reports"] > 0 for s in timeline["scans"]) and not any(n.startswith("Advertising reports/s") for n in names):
        problem("scans with reports but no reports/s counter")
    # Reports per second: every advertising report of the scans, each in its second.
    counted = sum(v for t, values in counters.items() if tracks[t].name.startswith("Advertising reports/s") for _, v in values)
    reports = sum(s["reports"] for s in timeline["scans"])
    if counted not in (reports, reports + sum(s["late_reports"] for s in timeline["scans"])):
        problem(f"the reports/s counter adds up to {counted}, the scans have {reports} reports")
    if (timeline["connections"] or timeline["scans"]) and not any(n.startswith("Phone radio current") for n in names):
        problem("no phone radio current counter")


main()
for p in problems[:40]:
    print(p)
sys.exit(1 if problems else 0)
