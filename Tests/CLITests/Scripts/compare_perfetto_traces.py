#!/usr/bin/env python3
"""Compares two traces written by `btlens export --format perfetto` as sets of packets: the same packets, in
whatever order (the export draws a link when it is judged, or at the capture's end, so packets move and track
uuids and flow ids are numbered differently). Each track is named by its path (process name / … / track name),
each flow by where it starts; every packet, so renamed, is counted, and the two multisets must be equal.

usage: compare_perfetto_traces.py A B
Prints the differences and exits 1 when there are any; prints a one-line summary otherwise, with how many tracks
are declared at another place in B than in A (drawn earlier or later)."""
import collections
import sys

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb


def packets(path):
    trace = pb.Trace()
    trace.ParseFromString(open(path, "rb").read())
    return list(trace.packet)


def normalized(path):
    ps = packets(path)
    tracks = {p.track_descriptor.uuid: p.track_descriptor for p in ps if p.HasField("track_descriptor")}

    def track_path(uuid):
        names = []
        while uuid in tracks:
            d = tracks[uuid]
            names.append(d.process.process_name if d.HasField("process") else d.name)
            uuid = d.parent_uuid
        return " / ".join(reversed(names))

    # A flow is where it starts: its track and time.
    flow_origin = {}
    for p in ps:
        if p.HasField("track_event"):
            for f in p.track_event.flow_ids:
                flow_origin[f] = f"{track_path(p.track_event.track_uuid)} @ {p.timestamp}"
    order = [track_path(p.track_descriptor.uuid) for p in ps if p.HasField("track_descriptor")]
    counted = collections.Counter()
    for p in ps:
        q = pb.TracePacket()
        q.CopyFrom(p)
        where = ""
        if q.HasField("track_descriptor"):
            d = q.track_descriptor
            where = track_path(d.uuid)
            d.ClearField("uuid")
            d.ClearField("parent_uuid")
        elif q.HasField("track_event"):
            e = q.track_event
            where = track_path(e.track_uuid)
            e.ClearField("track_uuid")
            flows = [flow_origin.get(f, "?") for f in e.flow_ids]
            ends = [flow_origin.get(f, "?") for f in e.terminating_flow_ids]
            e.ClearField("flow_ids")
            e.ClearField("terminating_flow_ids")
            where += f" flows {flows} ends {ends}"
        counted[(where, q.SerializeToString(deterministic=True))] += 1
    return counted, len(ps), order


def describe(key):
    where, raw = key
    p = pb.TracePacket()
    p.ParseFromString(raw)
    return f"{where}: {str(p).strip()[:300]!r}"


def main():
    a, na, order_a = normalized(sys.argv[1])
    b, nb, order_b = normalized(sys.argv[2])
    only_a, only_b = a - b, b - a
    for key, n in list(only_a.items())[:10]:
        print(f"only in {sys.argv[1]} ({n}x): {describe(key)}")
    for key, n in list(only_b.items())[:10]:
        print(f"only in {sys.argv[2]} ({n}x): {describe(key)}")
    if only_a or only_b:
        print(f"{sum(only_a.values())} packets only in the first, {sum(only_b.values())} only in the second")
        sys.exit(1)
    moved = sum(1 for x, y in zip(order_a, order_b) if x != y)
    print(f"{na} packets, the same in both; {moved} tracks declared at another place")


main()
