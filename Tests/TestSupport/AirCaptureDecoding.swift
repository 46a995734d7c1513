import BTCapture
import BTDecode

/// One air-capture record as the tests look at it, decoded by btlens's own `PacketDecoder`.
public struct DecodedAirPacket: Sendable {
    public var microseconds: Int64
    /// The packet's time on the sniffer's clock (`SnifferClock`), ns.
    public var snifferNanoseconds: Int64
    public var accessAddress: UInt32
    public var isAdvertising: Bool
    public var direction: LLDirection
    public var crc: LLCRCStatus
    public var isRetransmission: Bool
    public var isEncrypted: Bool
    public var channel: UInt8?
    public var eventCounter: UInt16?
    public var phy: LLPHY
    /// Advertising PDUs on a secondary channel: the container's aux type (0 AUX_ADV_IND, 1 AUX_CHAIN_IND, …).
    public var auxiliaryType: UInt8?
    /// PDU header and payload as written.
    public var pdu: [UInt8]
    public var attOpcode: UInt8?
}

/// An air capture read and decoded as `btlens stats` does: its statistics, the issues reading and decoding
/// logged, and every link-layer packet.
public struct DecodedAirCapture {
    public var info: CaptureInfo
    public var statistics: CaptureStatistics
    public var issues: Int
    public var packets: [DecodedAirPacket]

    public static func load(_ path: String) throws -> DecodedAirCapture {
        let loaded = try LoadedCapture.load(path)
        let log = IssueLog()
        var decoder = PacketDecoder(issues: log)
        var statistics = CaptureStatistics()
        var packets: [DecodedAirPacket] = []
        for r in loaded.records {
            r.payload.withUnsafeBytes { raw in
                let record = CaptureRecord(number: r.number, offset: 0, timestamp: r.timestamp, direction: r.direction,
                                           kind: r.kind, controller: r.controller, sourceType: r.sourceType,
                                           originalLength: raw.count, payload: raw)
                let frame = decoder.decode(record)
                statistics.add(frame)
                guard let ll = frame.linkLayer else { return }
                packets.append(DecodedAirPacket(
                    microseconds: r.microseconds, snifferNanoseconds: ll.nanoseconds, accessAddress: ll.packet.accessAddress, isAdvertising: ll.isAdvertising,
                    direction: ll.direction, crc: ll.crc, isRetransmission: ll.isRetransmission,
                    isEncrypted: ll.isEncrypted, channel: ll.packet.channel, eventCounter: ll.packet.eventCounter,
                    phy: ll.packet.phy, auxiliaryType: ll.packet.auxiliaryType, pdu: Array(ll.packet.pdu), attOpcode: frame.attPDU?.first))
            }
        }
        return DecodedAirCapture(info: loaded.info, statistics: statistics, issues: loaded.issueCount + log.count,
                                 packets: packets)
    }
}

/// The counts of an HCI capture decoded as `btlens stats` does.
public func hciStatistics(_ path: String) throws -> CaptureStatistics {
    let loaded = try LoadedCapture.load(path)
    var decoder = PacketDecoder(issues: IssueLog())
    var statistics = CaptureStatistics()
    for r in loaded.records {
        r.payload.withUnsafeBytes { raw in
            let record = CaptureRecord(number: r.number, offset: 0, timestamp: r.timestamp, direction: r.direction,
                                       kind: r.kind, controller: r.controller, sourceType: r.sourceType,
                                       originalLength: raw.count, payload: raw)
            statistics.add(decoder.decode(record))
        }
    }
    return statistics
}
