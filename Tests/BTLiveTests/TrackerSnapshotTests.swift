import Foundation
import Testing
import BTCapture
import BTDecode
@testable import BTTrack
import BTRules
import BTScenario
import TestSupport

/// `CaptureTracker.snapshot()`: the model so far for live audits, without disturbing the tracker.
@Suite("Tracker snapshots")
struct TrackerSnapshotTests {
    /// Tracks a capture, calling `every(tracker, record number)` after each record.
    struct Tracking: RecordSourceVisitor {
        var options = TrackerOptions()
        var every: (CaptureTracker, Int) -> Void
        mutating func visit<S: RecordSource>(_ source: S) throws -> CaptureTracker {
            var decoder = PacketDecoder(issues: source.issues)
            let tracker = CaptureTracker(options: options)
            while let r = source.next() {
                tracker.observe(decoder.decode(r))
                every(tracker, r.number)
            }
            return tracker
        }
    }

    static func track(_ path: String, options: TrackerOptions = TrackerOptions(),
                      every: @escaping (CaptureTracker, Int) -> Void = { _, _ in }) throws -> CaptureTracker {
        var visitor = Tracking(options: options, every: every)
        return try OpenedCapture.open(path: path).accept(&visitor)
    }

    /// What a model says, compared field by field where it matters to reports and rules.
    static func digest(_ m: CaptureModel) -> [String] {
        m.connections.map { c in
            "#\(c.id) \(c.handle) open=\(c.isOpen) reason=\(c.disconnectReason.map { "\($0.rawValue)" } ?? "-") events=\(c.events.count) "
                + "runs=\(c.runs.count) discoveries=\(c.discoveries.count) tx=\(c.transactions) gatt=\(c.gatt.characteristics.count)/\(c.gatt.inheritedFrom ?? 0) "
                + "mtu=\(c.mtu) att=\(c.attOpcodeCounts.total)"
        } + ["failed=\(m.failedConnections.count) scans=\(m.scans.count) advertisers=\(m.advertisers.count) records=\(m.records)"]
    }

    @Test("a snapshot at the end says what finish() says", arguments: ScenarioRegistry.names)
    func endEqualsFinish(name: String) throws {
        let tracker = try Self.track(try writeScenario(name))
        let snapshot = tracker.snapshot()
        let finished = tracker.finish()
        #expect(Self.digest(snapshot) == Self.digest(finished))
        let auditor = Auditor()
        #expect(auditor.audit(snapshot, file: name).map(\.fingerprint) == auditor.audit(finished, file: name).map(\.fingerprint))
    }

    @Test("snapshots along the way leave the tracker's result unchanged", arguments: ScenarioRegistry.names)
    func undisturbed(name: String) throws {
        let path = try writeScenario(name)
        let auditor = Auditor()
        var audits = 0
        let watched = try Self.track(path) { tracker, number in
            guard number % 37 == 0 else { return }
            _ = auditor.audit(tracker.snapshot(), file: name)
            audits += 1
        }
        let plain = try Self.track(path)
        let a = watched.finish(), b = plain.finish()
        #expect(audits > 0)
        #expect(Self.digest(a) == Self.digest(b))
        #expect(auditor.audit(a, file: name).map(\.message) == auditor.audit(b, file: name).map(\.message))
    }

    /// A central connects, sends a Write Request that is never answered, then keeps polling RSSI once a second
    /// for 40 s: the link stays up well past the ATT timeout.
    static func unansweredWrite() -> [UInt8] {
        let t: UInt64 = 1_700_000_000_000_000
        var b = CaptureBytes.btsnoopHeader(datalink: 1002)
        // LE Connection Complete: handle 0x0040, central, public peer 11:22:33:44:55:66, 30 ms, 0, 5 s.
        b += CaptureBytes.btsnoopRecord([0x04, 0x3E, 0x13, 0x01, 0x00, 0x40, 0x00, 0x00, 0x00, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,
                                         0x18, 0x00, 0x00, 0x00, 0xF4, 0x01, 0x00], flags: 3, unixMicros: t)
        // ATT Write Request to 0x002a, value 01: never answered.
        b += CaptureBytes.btsnoopRecord([0x02, 0x40, 0x00, 0x08, 0x00, 0x04, 0x00, 0x04, 0x00, 0x12, 0x2A, 0x00, 0x01],
                                        flags: 0, unixMicros: t + 1000)
        for second in 1...40 {
            b += CaptureBytes.btsnoopRecord([0x01, 0x05, 0x14, 0x02, 0x40, 0x00], flags: 2, unixMicros: t + UInt64(second) * 1_000_000)
        }
        return b
    }

    @Test("an ATT request unanswered for 30 s shows as a timeout while its link is still up")
    func earlyTimeout() throws {
        let dir = try TemporaryDirectory()
        let path = try dir.write("unanswered.log", Self.unansweredWrite())
        let auditor = Auditor()
        var firstSeen: Int?
        let tracker = try Self.track(path) { tracker, number in
            guard firstSeen == nil else { return }
            let model = tracker.snapshot()
            if auditor.audit(model, file: "").contains(where: { $0.id == "BTL010" }) {
                #expect(model.connections.first?.isOpen == true)
                firstSeen = number
            }
        }
        // Record 2 is the request at 0.001 s; record 33 is the poll at 31 s, the first after the 30 s mark.
        #expect(firstSeen == 33)
        // The tracker itself still has the request pending: finishing now reports it once.
        let final = auditor.audit(tracker.finish(), file: "").filter { $0.id == "BTL010" }
        #expect(final.count == 1)
    }

    @Test("a snapshot copy of a link copies every stored property (a new property must be copied too)")
    func copiesEverything() throws {
        let tracker = try Self.track(try writeScenario("wasteful-central"))
        let model = tracker.finish()
        #expect(!model.connections.isEmpty)
        for c in model.connections {
            let copy = c.snapshotCopy(finishingAt: nil)
            // The working state and the database are held through pointers (`Connection.working`, `.database`):
            // their fields are compared, not their addresses.
            func fields(_ c: Connection) -> [Mirror.Child] {
                Mirror(reflecting: c).children.filter { !["usageCache", "working", "database"].contains($0.label) }
                    + Mirror(reflecting: c.working.pointee).children + Mirror(reflecting: c.database.pointee).children
            }
            let original = fields(c)
            let copied = fields(copy)
            #expect(original.count > 40)
            #expect(original.map(\.label) == copied.map(\.label))
            for (a, b) in zip(original, copied) {
                #expect(String(describing: a.value) == String(describing: b.value), "\(a.label ?? "?") differs")
            }
            #expect(copy !== c)
        }
    }

    @Test("link counters and lookups follow links opening, closing and failing")
    func counters() throws {
        var seen: [CaptureTracker.LinkCounters] = []
        let tracker = try Self.track(try writeScenario("connection-churn")) { tracker, _ in
            let now = tracker.linkCounters
            if seen.last != now { seen.append(now) }
        }
        let last = try #require(seen.last)
        let model = tracker.snapshot()
        #expect(last.opened == model.connections.count)
        #expect(last.failed == model.failedConnections.count)
        #expect(last.closed == model.connections.filter { !$0.isOpen }.count)
        #expect(tracker.closedConnections(after: 0).count == last.closed)
        #expect(tracker.failedConnections(after: last.failed).isEmpty)
        for id in 1...last.opened { #expect(tracker.connection(id: id)?.id == id) }
        #expect(tracker.connection(id: last.opened + 1) == nil)
    }

    @Test("past maximumConnections closed links are not kept but still counted and handed to a live view")
    func closuresPastTheLimit() throws {
        var options = TrackerOptions()
        options.maximumConnections = 2
        var previous: CaptureTracker.LinkCounters?
        var reported: [Int] = []
        let tracker = try Self.track(try writeScenario("connection-churn"), options: options) { tracker, _ in
            let now = tracker.linkCounters
            reported += tracker.closedConnections(after: previous?.closed ?? 0).map(\.id)
            previous = now
        }
        let everything = try Self.track(try writeScenario("connection-churn"))
        let all = everything.snapshot().connections.filter { !$0.isOpen }
        #expect(all.count > 2, "the scenario must close more links than the limit")
        // Every closure was reported once, in closing order, although only two links were kept.
        #expect(reported == all.sorted { ($0.end?.number ?? 0, $0.id) < ($1.end?.number ?? 0, $1.id) }.map(\.id))
        #expect(previous?.closed == all.count)
        let model = tracker.finish()
        #expect(model.connections.filter { !$0.isOpen }.count == 2)
        #expect(model.droppedConnections == all.count - 2)
    }
}
