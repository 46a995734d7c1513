import BTWire
import BTCapture

/// The counts of `btlens stats`. Fixed-size tables indexed by code keep the per-record cost to a few
/// increments; nothing here grows with the file.
public struct CaptureStatistics {
    public var records = 0
    public var firstTimestamp: Timestamp?
    public var lastTimestamp: Timestamp?
    /// Indexed by opcode.
    public var commands = [Int](repeating: 0, count: 1 << 16)
    /// Indexed by event code.
    public var events = [Int](repeating: 0, count: 256)
    public var leSubevents = [Int](repeating: 0, count: 256)
    public var aclSent = 0
    public var aclReceived = 0
    /// ACL without a direction (pcap linktype 187).
    public var aclUnknownDirection = 0
    /// ACL packets that are a Qualcomm controller's debug log (counted among the ACL packets too).
    public var controllerDebugLog = 0
    public var advertisingReports = 0
    /// Successful LE, LE Enhanced (v1, v2) and BR/EDR Connection Complete events, and the connections an air
    /// capture followed (`LinkLayerStatistics.connectionsFollowed`).
    public var connections: Int { hciConnections + linkLayerCounts.statistics.connectionsFollowed }
    var hciConnections = 0
    /// Disconnection Complete with status 0, and LL_TERMINATE_IND on the air, by reason.
    public var disconnections: [Int] {
        let air = linkLayerCounts.statistics.terminations
        return zip(hciDisconnections, air).map { $0 + $1 }
    }
    var hciDisconnections = [Int](repeating: 0, count: 256)
    /// Complete ATT PDUs by opcode, after reassembly.
    /// ATT PDUs by opcode: those over HCI ACL and those an air capture's link layer carried.
    public var att: [Int] {
        zip(hciATT, linkLayerCounts.att).map { $0 + $1 }
    }
    var hciATT = [Int](repeating: 0, count: 256)
    public var recordsByKind = [Int](repeating: 0, count: RecordKind.allCases.count)
    /// Records with a problem (reader and decoder issues).
    public var malformed = 0
    /// Air captures: the LE link layer.
    public var linkLayer: LinkLayerStatistics { linkLayerCounts.statistics }
    /// Kept behind a reference: counting into it out of line, from a record loop that mutates this struct's
    /// tables, would make every table increment check its array's uniqueness again. (Copies of the statistics
    /// share it; they are only ever the finished counts.)
    let linkLayerCounts = LinkLayerCounts()

    public init() {}

    @inline(__always)
    public mutating func add(_ frame: DecodedFrame) {
        let record = frame.record
        records += 1
        if firstTimestamp == nil { firstTimestamp = record.timestamp }
        lastTimestamp = record.timestamp
        recordsByKind[Int(record.kind.rawValue)] += 1
        guard let hci = frame.hci else {
            // Only the two fields it needs cross the call: passed the frame, `add` copied every record's frame.
            if let slot = frame.linkLayerSlot { Self.addLinkLayer(slot, attOpcode: frame.attPDU?.first, to: linkLayerCounts) }
            return
        }
        switch hci {
        case .command(let c):
            commands[Int(c.opcode.rawValue)] += 1
        case .event(let e):
            events[Int(e.code.rawValue)] += 1
            if e.code == .leMeta, let sub = e.subevent {
                leSubevents[Int(sub.rawValue)] += 1
                advertisingReports += frame.advertisingReports
                if sub == .connectionComplete || sub == .enhancedConnectionComplete
                    || sub == .enhancedConnectionCompleteV2
                {
                    if e.parameters.count >= 2 && e.parameters[1] == HCIStatus.success.rawValue { hciConnections += 1 }
                }
            } else if e.code == .connectionComplete {
                if e.parameters.first == HCIStatus.success.rawValue { hciConnections += 1 }
            } else if e.code == .disconnectionComplete {
                if e.parameters.count >= 4 && e.parameters[0] == HCIStatus.success.rawValue {
                    hciDisconnections[Int(e.parameters[3])] += 1
                }
            }
        case .acl:
            switch record.direction {
            case .sent: aclSent += 1
            case .received: aclReceived += 1
            case .unknown: aclUnknownDirection += 1
            }
            if frame.isControllerDebugLog { controllerDebugLog += 1 }
            if let pdu = frame.attPDU, let opcode = pdu.first { hciATT[Int(opcode)] += 1 }
        case .sco, .iso:
            break
        }
    }

    /// Out of line: only air captures come here.
    @inline(never)
    static func addLinkLayer(_ slot: Unmanaged<LLFrameSlot>, attOpcode: UInt8?, to counts: LinkLayerCounts) {
        // The slot's frame in place: a copy of it (packet included) costs more than counting it.
        counts.statistics.add(slot.takeUnretainedValue().current)
        if let opcode = attOpcode { counts.att[Int(opcode)] += 1 }
    }

    /// Non-zero entries of a table as (code, count), in code order.
    public static func nonZero(_ table: [Int]) -> [(code: Int, count: Int)] {
        table.indices.compactMap { table[$0] == 0 ? nil : ($0, Int(table[$0])) }
    }
}

/// The link-layer counts of `CaptureStatistics`.
final class LinkLayerCounts {
    @exclusivity(unchecked) var statistics = LinkLayerStatistics()
    @exclusivity(unchecked) var att = [Int](repeating: 0, count: 256)
}

/// Reads a whole capture into statistics: the `stats` pipeline, generic over the reader type.
public struct StatisticsCollector: RecordSourceVisitor {
    public var statistics = CaptureStatistics()
    public var progress: ((Int64) -> Void)?
    public init(progress: ((Int64) -> Void)? = nil) { self.progress = progress }

    public mutating func visit<S: RecordSource>(_ source: S) throws -> CaptureStatistics {
        if let linktype = source.info.format.linktype, Linktype.isLinkLayerSniffer(linktype) {
            return visitAirCapture(source)
        }
        var decoder = PacketDecoder(issues: source.issues)
        var stats = CaptureStatistics()
        while let record = source.next() {
            let frame = decoder.decode(record)
            stats.add(frame)
            if let progress, record.number & 0xFFFF == 0 { progress(record.offset) }
        }
        stats.malformed = source.issues.count
        statistics = stats
        return stats
    }

    /// The loop of an air sniffer's capture (its first interface's linktype says so): its records are decoded in
    /// place (`PacketDecoder.decodeLinkLayer`); through `decode` each frame was copied (air `stats` 15 % slower).
    /// A loop of its own, out of line, because testing every record's kind in the loop above made HCI `stats`
    /// 3–4 % slower. Other records (another interface of a pcapng) still go through `decode`.
    @inline(never)
    mutating func visitAirCapture<S: RecordSource>(_ source: S) -> CaptureStatistics {
        var decoder = PacketDecoder(issues: source.issues)
        var stats = CaptureStatistics()
        while let record = source.next() {
            stats.add(record.kind == .linkLayer ? decoder.decodeLinkLayer(record) : decoder.decode(record))
            if let progress, record.number & 0xFFFF == 0 { progress(record.offset) }
        }
        stats.malformed = source.issues.count
        statistics = stats
        return stats
    }
}
