import BTWire
import BTCapture

/// What the capture-wide rules and the audit's notes read of a link: who and when, how it ended, whose it was.
/// `btlens audit` keeps only this of a link judged before the capture ended (`LinkRetirement.Keeping.summary`)
/// when nothing else will read the link — 128 bytes in one array instead of a 256-byte object — so a capture of
/// 100,000 links costs half the memory it did. Field names are `Connection`'s.
///
/// Stored flat, largest fields first, so that it packs into 128 bytes: the records' controller is the link's
/// (but for an end the capture's last record gave, kept apart), and the create-connection command is only ever
/// read for its time.
public struct LinkSummary: Sendable {
    private var startNumber: Int
    private var startOffset: Int64
    private var startTime: Timestamp
    private var endNumber: Int
    private var endOffset: Int64
    private var endTime: Timestamp
    private var requestedTime: Timestamp
    private var peer: UInt64
    /// The link's ownership (`LinkOwnership`), as decided when it was judged or the model finished.
    public let ownership: LinkOwnership
    private var startLength: UInt32
    private var endLength: UInt32
    private var storedAccessAddress: UInt32
    private var storedID: Int32
    private var storedPeerLink: Int32
    private var storedCutShort: Int32
    private var storedMissedUses: Int32
    private var endController: UInt16
    public let controller: UInt16
    public let handle: UInt16
    public let disconnectReason: HCIStatus?
    public let transport: LinkTransport
    public let role: ConnectionRole
    private var flags: Flags

    private struct Flags: OptionSet, Sendable {
        let rawValue: UInt8
        static let ended = Flags(rawValue: 1 << 0)
        static let requested = Flags(rawValue: 1 << 1)
        static let hasPeer = Flags(rawValue: 1 << 2)
        static let hasAccessAddress = Flags(rawValue: 1 << 3)
        static let implicitStart = Flags(rawValue: 1 << 4)
        static let encrypted = Flags(rawValue: 1 << 5)
        static let hidesTraffic = Flags(rawValue: 1 << 6)
        static let clientDriven = Flags(rawValue: 1 << 7)
    }

    public init(_ c: Connection) {
        startNumber = c.start.number
        startOffset = c.start.offset
        startTime = c.start.timestamp
        startLength = UInt32(clamping: c.start.length)
        endNumber = c.end?.number ?? 0
        endOffset = c.end?.offset ?? 0
        endTime = c.end?.timestamp ?? Timestamp(nanoseconds: 0)
        endLength = UInt32(clamping: c.end?.length ?? 0)
        endController = c.end?.controller ?? c.controller
        requestedTime = c.connectRequested?.timestamp ?? Timestamp(nanoseconds: 0)
        peer = c.peerAddress?.rawValue ?? 0
        storedAccessAddress = c.air?.accessAddress ?? 0
        ownership = c.ownership
        storedID = Int32(clamping: c.id)
        storedPeerLink = Int32(clamping: c.peerLink)
        storedCutShort = Int32(clamping: c.aclPacketsCutShort)
        storedMissedUses = Int32(clamping: c.missedUses)
        controller = c.controller
        handle = c.handle
        disconnectReason = c.disconnectReason
        transport = c.transport
        role = c.role
        var flags: Flags = []
        if c.end != nil { flags.insert(.ended) }
        if c.connectRequested != nil { flags.insert(.requested) }
        if c.peerAddress != nil { flags.insert(.hasPeer) }
        if c.air != nil { flags.insert(.hasAccessAddress) }
        if c.implicitStart { flags.insert(.implicitStart) }
        if c.encrypted { flags.insert(.encrypted) }
        if c.hidesTraffic { flags.insert(.hidesTraffic) }
        if c.clientDriven { flags.insert(.clientDriven) }
        self.flags = flags
    }

    /// 1-based order of appearance in the capture (`Connection.id`).
    public internal(set) var id: Int {
        get { Int(storedID) }
        set { storedID = Int32(clamping: newValue) }
    }
    public var start: RecordRef {
        RecordRef(number: startNumber, offset: startOffset, timestamp: startTime, controller: controller, length: Int(startLength))
    }
    public var end: RecordRef? {
        guard flags.contains(.ended) else { return nil }
        return RecordRef(number: endNumber, offset: endOffset, timestamp: endTime, controller: endController, length: Int(endLength))
    }
    /// When our create-connection command for this link was sent (`Connection.connectRequested`'s time).
    public var connectRequestedTime: Timestamp? { flags.contains(.requested) ? requestedTime : nil }
    public var peerAddress: BDAddr? { flags.contains(.hasPeer) ? BDAddr(rawValue: peer) : nil }
    /// Air captures: the link's access address (it has no HCI handle).
    public var accessAddress: UInt32? { flags.contains(.hasAccessAddress) ? storedAccessAddress : nil }
    public var implicitStart: Bool { flags.contains(.implicitStart) }
    public var encrypted: Bool { flags.contains(.encrypted) }
    /// `Connection.hidesTraffic`: ciphertext without the key or payloads cut short.
    public var hidesTraffic: Bool { flags.contains(.hidesTraffic) }
    /// The phone's own GATT client used the link (`Connection.clientDriven`).
    public var clientDriven: Bool { flags.contains(.clientDriven) }
    /// Which link to its peer this is (`Connection.peerLink`).
    public var peerLink: Int { Int(storedPeerLink) }
    /// ACL packets the capture cut short (`Connection.aclPacketsCutShort`).
    public var aclPacketsCutShort: Int { Int(storedCutShort) }
    /// Reads and writes whose request the sniffer missed (`Connection.missedUses`).
    public var missedUses: Int { Int(storedMissedUses) }

    /// `handle 0x0040`, or `AA 0x50654d3a` for a link followed on the air.
    public var linkName: String { LinkName.of(handle: handle, accessAddress: accessAddress) }
    /// `0x0040` or `AA 0x50654d3a`.
    public var shortLinkName: String { LinkName.of(handle: handle, accessAddress: accessAddress, short: true) }
}

extension LinkSummary: PlainSetAsideValue {}

extension SetAsideArray where Element == LinkSummary {
    /// The places of the summaries in id order (position k holds the summary at `order[k]`), or nil when they are
    /// in id order already. Reads each summary once, in the order stored; keeps 4 bytes per summary, not a copy.
    func orderByID() -> [Int32]? { map { Int32(clamping: $0.id) }.placesInOrder() }
}

/// Every link of a model as `LinkSummary`, in id order, without making an array of them: the summaries the
/// model kept (`CaptureModel.summarizedLinks`, set aside in a file on a long capture), or each made from its
/// link when read. A rule that needs some of them keeps their indexes, not copies (100,000 summaries are
/// 12.8 MB).
public struct LinkSummaries: RandomAccessCollection, Sendable {
    /// The model's summaries, when it kept them (`fromSummaries`); read in place, never copied per read.
    let summaries: SetAsideArray<LinkSummary>
    let fromSummaries: Bool
    /// Where the `k`th summary in id order is in `summaries`; empty when they are stored in id order.
    let order: [Int32]
    let connections: [Connection]

    init(summaries: SetAsideArray<LinkSummary>?, order: [Int32]?, connections: [Connection]) {
        self.summaries = summaries ?? []
        fromSummaries = summaries != nil
        self.order = order ?? []
        self.connections = connections
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { fromSummaries ? summaries.count : connections.count }

    public subscript(position: Int) -> LinkSummary {
        guard fromSummaries else { return LinkSummary(connections[position]) }
        return summaries[order.isEmpty ? position : Int(order[position])]
    }
}
