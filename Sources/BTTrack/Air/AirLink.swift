import BTWire
import BTCapture
import BTDecode

/// What an air capture shows of one connection beyond what HCI would: who the two sides are, the access
/// address, the channel map, whether the start or end had to be inferred, and the radio statistics of each phase.
/// A class, held by reference: an HCI link carries only a nil pointer for it, not the statistics.
public final class AirLink: @unchecked Sendable {
    /// The connection's access address (from CONNECT_IND / AUX_CONNECT_REQ, or the packets' own).
    @exclusivity(unchecked) public var accessAddress: UInt32
    /// InitA of the CONNECT_IND; nil when the capture missed it.
    @exclusivity(unchecked) public var centralAddress: BDAddr?
    /// The link was requested by AUX_CONNECT_REQ (on a secondary advertising channel) rather than CONNECT_IND.
    @exclusivity(unchecked) public var auxiliaryRequest = false
    @exclusivity(unchecked) public var centralAddressIsRandom = false
    /// Data channels in use (bit i = channel i), from the CONNECT_IND and later LL_CHANNEL_MAP_IND.
    @exclusivity(unchecked) public var channelMap: UInt64?
    /// The interval was estimated from the spacing of connection events (no CONNECT_IND in the capture).
    @exclusivity(unchecked) public var intervalEstimated = false
    /// The link ended without LL_TERMINATE_IND: no packet for longer than its supervision timeout while the
    /// capture went on (a supervision timeout, or the sniffer lost the link — the air cannot tell which).
    @exclusivity(unchecked) public var endInferred = false
    /// Procedures that change the link at an instant (connection update, channel map, PHY) whose instant
    /// passed without a packet of the link around it: applied when the next packet showed the instant was reached.
    @exclusivity(unchecked) public var lateInstants = 0
    /// Statistics of the link's phases, index for index with `Connection.phases`: the closed ones, then the
    /// current one.
    @exclusivity(unchecked) public internal(set) var closedPhases: [AirLinkStatistics] = []
    @exclusivity(unchecked) public internal(set) var currentPhase = AirLinkStatistics()
    public var phases: [AirLinkStatistics] { closedPhases + [currentPhase] }
    /// Every phase together.
    public var totals: AirLinkStatistics { closedPhases.reduce(currentPhase, +) }

    public init(accessAddress: UInt32) { self.accessAddress = accessAddress }

    /// The link moved to a new phase (`Connection.beginPhase`).
    func beginPhase() {
        closedPhases.append(currentPhase)
        currentPhase = AirLinkStatistics()
    }

    func copy() -> AirLink {
        let c = AirLink(accessAddress: accessAddress)
        c.centralAddress = centralAddress
        c.centralAddressIsRandom = centralAddressIsRandom
        c.auxiliaryRequest = auxiliaryRequest
        c.channelMap = channelMap
        c.intervalEstimated = intervalEstimated
        c.endInferred = endInferred
        c.lateInstants = lateInstants
        c.closedPhases = closedPhases
        c.currentPhase = currentPhase
        return c
    }

    /// `0x50654d3a` style, as sniffer tools print access addresses.
    public var accessAddressText: String { Hex.format(accessAddress, width: 8) }
}

/// How reports name a link: by its HCI handle, or by its access address when it was followed on the air (it has
/// no handle there).
public enum LinkName {
    /// `handle 0x0040` or `AA 0x50654d3a`; `short` leaves out the word for a handle (table cells, labels).
    public static func of(handle: UInt16, accessAddress: UInt32?, short: Bool = false) -> String {
        if let accessAddress { return "AA " + Hex.format(accessAddress, width: 8) }
        return short ? Hex.u16(handle) : "handle " + Hex.u16(handle)
    }
}

extension Connection {
    /// `handle 0x0040`, or `AA 0x50654d3a` for a link followed on the air.
    public var linkName: String { LinkName.of(handle: handle, accessAddress: air?.accessAddress) }
    /// `0x0040` or `AA 0x50654d3a`.
    public var shortLinkName: String { LinkName.of(handle: handle, accessAddress: air?.accessAddress, short: true) }
}

/// Radio statistics only an air capture has, per link phase (`AirLink.phases`) and summed per link.
public struct AirLinkStatistics: Sendable, Equatable {
    /// Connection events in which the sniffer heard at least one packet of the link.
    public var events = 0
    /// Events in which either side sent a new non-empty PDU.
    public var eventsWithData = 0
    /// Data-channel packets with a CRC that is not bad: empty, data, control, retransmissions.
    public var packets = 0
    /// Empty PDUs (LLID 1, length 0): acknowledgements and keep-alives.
    public var emptyPDUs = 0
    /// PDUs the sender had to send again (same SN and payload, unacknowledged).
    public var retransmissions = 0
    /// Packets of the link whose CRC was bad: interference, or the sniffer's own reception.
    public var crcErrors = 0
    /// Non-empty PDUs still encrypted in the file (no key): counted, never decoded.
    public var encryptedPDUs = 0
    /// LL_CHANNEL_MAP_IND procedures that took effect.
    public var channelMapChanges = 0
    /// Packets heard from each side (CRC not bad; empty PDUs and resends included) and their LL payload bytes
    /// (the Length field: MIC included when encrypted): the radio time the link actually took, as far as the
    /// sniffer heard it.
    public var centralPackets = 0
    public var centralPayloadBytes = 0
    public var peripheralPackets = 0
    public var peripheralPayloadBytes = 0
    /// Received signal strength of the link's packets as the sniffer heard them (dBm).
    public var rssiSum = 0
    public var rssiCount = 0
    public var rssiMinimum: Int8?
    public var rssiMaximum: Int8?

    public init() {}

    /// Share of events that carried nothing but empty PDUs.
    public var emptyEventShare: Double? { events > 0 ? Double(events - eventsWithData) / Double(events) : nil }
    public var meanRSSI: Double? { rssiCount > 0 ? Double(rssiSum) / Double(rssiCount) : nil }
    public var isEmpty: Bool { self == AirLinkStatistics() }

    @inline(__always)
    mutating func rssi(_ value: Int8) {
        rssiSum += Int(value)
        rssiCount += 1
        if rssiMinimum.map({ value < $0 }) ?? true { rssiMinimum = value }
        if rssiMaximum.map({ value > $0 }) ?? true { rssiMaximum = value }
    }

    public static func + (a: AirLinkStatistics, b: AirLinkStatistics) -> AirLinkStatistics {
        var s = a
        s.events += b.events
        s.eventsWithData += b.eventsWithData
        s.packets += b.packets
        s.emptyPDUs += b.emptyPDUs
        s.retransmissions += b.retransmissions
        s.crcErrors += b.crcErrors
        s.encryptedPDUs += b.encryptedPDUs
        s.channelMapChanges += b.channelMapChanges
        s.centralPackets += b.centralPackets
        s.centralPayloadBytes += b.centralPayloadBytes
        s.peripheralPackets += b.peripheralPackets
        s.peripheralPayloadBytes += b.peripheralPayloadBytes
        s.rssiSum += b.rssiSum
        s.rssiCount += b.rssiCount
        if let m = b.rssiMinimum { s.rssiMinimum = min(s.rssiMinimum ?? m, m) }
        if let m = b.rssiMaximum { s.rssiMaximum = max(s.rssiMaximum ?? m, m) }
        return s
    }
}

extension Connection {
    /// Part of the link's traffic was ciphertext the capture had no key for (an air capture), or ACL packets the
    /// capture cut short (a btsnooz log): what it carried is unknown, so the absence of ATT traffic (unused
    /// services, idle stretches, unanswered requests) cannot be judged on it.
    public var hidesTraffic: Bool {
        if aclPacketsCutShort > 0 { return true }
        guard let air else { return false }
        return air.currentPhase.encryptedPDUs > 0 || air.closedPhases.contains { $0.encryptedPDUs > 0 }
    }

    /// Reads and writes on an air link whose request the sniffer missed (their responses came alone): each used
    /// some attribute the capture cannot name, so rules that judge attributes unused discount that many. (A
    /// missed discovery request uses nothing.) 0 for HCI links: there a response without its request is the
    /// capture starting mid-transaction.
    public var missedUses: Int { air != nil ? transactions.unsolicitedUseResponses : 0 }

    /// The air statistics of every phase together (nil for links not followed on the air).
    public var airStatistics: AirLinkStatistics? { air?.totals }
}
