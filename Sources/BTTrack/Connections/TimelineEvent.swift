import BTWire
import BTCapture
import BTDecode

/// One entry of a connection's timeline. Dense ATT traffic is summarised as activity runs and discovery
/// procedures, referenced by index, so a timeline stays readable and bounded.
public struct TimelineEvent: Sendable {
    public var at: RecordRef
    public var kind: Kind
    /// Whether our host started what the event is about (its ATT request, its discovery); false when the peer
    /// did — in the peripheral role the peer is the GATT client. Rules about app behaviour look at the host's.
    public var byHost: Bool = true

    public init(at: RecordRef, kind: Kind, byHost: Bool = true) {
        self.at = at
        self.kind = kind
        self.byHost = byHost
    }

    /// Who asked for new connection parameters: our host, the peripheral's L2CAP request, or the peer's link-layer request.
    public enum ParameterSource: String, Sendable {
        /// HCI LE Connection Update from our host.
        case host
        /// L2CAP Connection Parameter Update Request from the peripheral.
        case l2capRequest = "l2cap-request"
        /// LE Remote Connection Parameter Request (link-layer procedure started by the peer).
        case remoteRequest = "remote-request"
    }

    /// What happened on the link.
    public enum Kind: Sendable {
        case connected(parameters: ConnectionParameters?)
        /// MTU exchange: the client's and server's Rx MTU; effective = the smaller.
        case mtuExchange(client: Int, server: Int?)
        /// Enhanced ATT bearers asked for and opened by one Credit Based Connection Request/Response; `mtu` is
        /// the bearers' ATT_MTU afterwards (nil when none opened yet). `byHost`: our host asked.
        case enhancedATTBearers(requested: Int, opened: Int, result: UInt16, mtu: Int?)
        /// An L2CAP channel request answered (`L2CAPChannels`): `opened` of `requested` channels to `psm`, with
        /// the response's `result` (its meaning depends on the `response` command code).
        case l2capChannel(psm: UInt16, requested: Int, opened: Int, result: UInt16, response: UInt8)
        /// A Credit Based Reconfigure Request/Response on the link's Enhanced ATT bearers (MTU raised).
        case enhancedATTReconfigured(result: UInt16, mtu: Int?)
        case parametersRequested(ConnectionParameterRange, source: ParameterSource)
        case parameterRequestAnswered(accepted: Bool)
        case parametersChanged(ConnectionParameters)
        case phyChanged(tx: UInt8, rx: UInt8)
        case dataLengthChanged(maxTxOctets: UInt16, maxRxOctets: UInt16)
        case encryptionChanged(enabled: Bool, status: HCIStatus)
        /// An SMP PDU (pairing steps, key distribution, failure).
        case pairing(code: SMPCode, sent: Bool, detail: String)
        /// Index into `Connection.discoveries`.
        case discovery(Int)
        /// CCCD write: notifications/indications on or off for a characteristic value handle.
        case subscription(cccdHandle: UInt16, valueHandle: UInt16?, value: UInt16, sent: Bool)
        /// Index into `Connection.runs`.
        case activity(Int)
        /// Execute Write Request: the prepared writes queued since the last one were written (`executed`) or
        /// dropped. `handles` are the attributes they wrote, in first-write order.
        case executeWrite(executed: Bool, prepared: Int, bytes: Int, handles: [UInt16])
        case attError(request: ATTOpcode, handle: UInt16, error: ATTErrorCode)
        /// A request not answered within the ATT timeout (or when the link ended, `timedOut` false).
        case attTimeout(request: ATTOpcode, handle: UInt16?, waited: Duration, timedOut: Bool)
        /// No ATT traffic between `at` and `until`.
        case idle(until: RecordRef)
        case disconnected(reason: HCIStatus?, locallyRequested: Bool)
        /// The controller was reset or removed with the link up.
        case closedByReset
        /// Air captures: an LL control PDU (procedure step) and what it said; `byHost` is true when the central
        /// sent it.
        case linkLayerControl(opcode: LLControlOpcode, summary: LLControlSummary)
        /// Air captures: the link went silent for longer than its supervision timeout while the capture went on,
        /// without LL_TERMINATE_IND: a supervision timeout or the sniffer losing the link (inferred).
        case linkLost(silence: Duration)
    }
}

/// What an LL control PDU said, as far as a timeline needs it [Core Vol 6 Part B §2.4.2].
public enum LLControlSummary: Sendable, Equatable {
    /// LL_CONNECTION_UPDATE_IND: new parameters from `instant` on.
    case connectionUpdate(ConnectionParameters, instant: UInt16)
    /// LL_CHANNEL_MAP_IND: `used` data channels from `instant` on.
    case channelMap(used: Int, instant: UInt16)
    /// LL_CONNECTION_PARAM_REQ/RSP.
    case parameterRange(ConnectionParameterRange)
    case features(UInt64)
    case version(versionNumber: UInt8, companyID: UInt16, subversion: UInt16)
    case dataLength(maxRxOctets: UInt16, maxTxOctets: UInt16)
    /// LL_PHY_REQ/RSP preferences (bit 0 1M, bit 1 2M, bit 2 Coded).
    case phys(tx: UInt8, rx: UInt8)
    /// LL_PHY_UPDATE_IND (PHY numbers after the instant; 0 unchanged).
    case phyUpdate(centralToPeripheral: UInt8, peripheralToCentral: UInt8, instant: UInt16)
    /// LL_REJECT_IND, LL_REJECT_EXT_IND (with the rejected opcode), LL_UNKNOWN_RSP.
    case rejected(opcode: LLControlOpcode?, reason: HCIStatus?)
    /// Nothing worth a field (LL_START_ENC_REQ, LL_PING_REQ, …).
    case plain
}

/// What kind of ATT operation a run counts.
public enum ActivityKind: String, Sendable, CaseIterable {
    case read, readBlob = "read-blob", readMultiple = "read-multiple", readByType = "read-by-type"
    case write, writeCommand = "write-command", signedWrite = "signed-write", preparedWrite = "prepared-write"
    case notification, indication

    /// A small number per kind, for packed keys.
    var code: UInt8 {
        switch self {
        case .read: 0
        case .readBlob: 1
        case .readMultiple: 2
        case .readByType: 3
        case .write: 4
        case .writeCommand: 5
        case .signedWrite: 6
        case .preparedWrite: 7
        case .notification: 8
        case .indication: 9
        }
    }

    /// The operation as a noun, for one: `1 write without response`.
    public var singular: String {
        switch self {
        case .read: "read"
        case .readBlob: "blob read"
        case .readMultiple: "multiple read"
        case .readByType: "read by type"
        case .write: "write"
        case .writeCommand: "write without response"
        case .signedWrite: "signed write"
        case .preparedWrite: "prepared write"
        case .notification: "notification"
        case .indication: "indication"
        }
    }

    /// The operation as a noun, for several: `10 writes without response`.
    public var plural: String {
        switch self {
        case .readByType: "reads by type"
        case .writeCommand: "writes without response"
        default: singular + "s"
        }
    }
}

/// Consecutive ATT operations of one kind on one handle, with timing statistics for rate and regularity.
public struct ActivityRun: Sendable {
    public var kind: ActivityKind
    public var handle: UInt16
    /// Who sent the operations (`true`: our host).
    public var sent: Bool
    /// Index of the run's series in `Connection.series` (-1 past `maximumSeriesPerConnection`). 32 bits fill the
    /// padding after `sent`, so runs do not grow.
    public internal(set) var series: Int32 = -1
    public var count = 0
    public var first: RecordRef
    public var last: RecordRef
    /// Value bytes: written or notified, or for reads returned (with the blob reads that continued them).
    public var bytes = 0
    /// Read Blob Requests that carried on the run's reads where their values ended: long reads (Core Vol 3
    /// Part G §4.8.3). They are not operations of their own.
    public var blobReads = 0
    /// Records of the first few operations, to cite.
    public var records: [RecordRef] = []

    public static let citedRecords = 8

    init(kind: ActivityKind, handle: UInt16, sent: Bool, at: RecordRef) {
        self.kind = kind
        self.handle = handle
        self.sent = sent
        self.first = at
        self.last = at
    }

    @inline(__always)
    mutating func add(at: RecordRef, bytes: Int) {
        count += 1
        self.bytes &+= bytes
        last = at
        // `records` holds the first min(count, citedRecords) operations; checking `count` spares a load.
        if count <= Self.citedRecords {
            // Room for all the cited records at the second: growing 1, 2, 4, 8 cost a copy at each step, and
            // a lone operation (one read) keeps its small array.
            if count == 2 { records.reserveCapacity(Self.citedRecords) }
            records.append(at)
        }
    }

    /// Mean seconds between operations.
    /// The gaps add up to the run's span, so it needs no sum of its own. (Regularity is judged on the whole
    /// series, `ActivitySeries`.)
    public var meanInterval: Double? {
        count > 1 ? Double(last.timestamp.nanoseconds &- first.timestamp.nanoseconds) / 1e9 / Double(count - 1) : nil
    }
    /// Operations per second over the run.
    public var rate: Double? { meanInterval.map { $0 > 0 ? 1 / $0 : 0 } }
}

extension Duration {
    /// Seconds as a Double.
    public var seconds: Double {
        let (s, atto) = components
        return Double(s) + Double(atto) / 1e18
    }
}
