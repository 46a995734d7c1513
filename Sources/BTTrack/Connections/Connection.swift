import BTWire
import BTCapture
import BTDecode

/// The transport of a link.
public enum LinkTransport: String, Sendable {
    case le
    case brEdr = "br/edr"
    /// A BR/EDR synchronous (SCO/eSCO) link for voice.
    case sco
    /// The capture started mid-connection and nothing showed which.
    case unknown
}

/// Our side's role on an LE link.
public enum ConnectionRole: String, Sendable {
    case central, peripheral, unknown
}

/// LE connection parameters in HCI units (interval ×1.25 ms, timeout ×10 ms).
public struct ConnectionParameters: Equatable, Sendable {
    public var interval: UInt16
    public var latency: UInt16
    public var supervisionTimeout: UInt16

    public init(interval: UInt16, latency: UInt16, supervisionTimeout: UInt16) {
        self.interval = interval
        self.latency = latency
        self.supervisionTimeout = supervisionTimeout
    }

    /// Connection subrating (LE Subrate Change, Core 5.3; LE Connection Rate Change, 6.2): while the link is
    /// idle one connection event in `subrateFactor` happens; after data, `continuationNumber` more at the base
    /// interval.
    public var subrateFactor: UInt16 = 1
    public var continuationNumber: UInt16 = 0
    /// The interval in 125 µs units when the controller reported it so (LE Connection Rate Change: Shorter
    /// Connection Intervals, Core 6.2, which go below 7.5 ms); nil: `interval` (1.25 ms units) holds.
    public var fineInterval: UInt16?
    /// The unit of `fineInterval` (Core 6.2 Vol 4 Part E §7.7.65.37).
    public static let fineIntervalMilliseconds = 0.125

    public var intervalMilliseconds: Double {
        fineInterval.map { Double($0) * Self.fineIntervalMilliseconds } ?? HCIUnits.intervalToMilliseconds(interval)
    }
    /// The time between the connection events that happen while the link is idle: the interval times the
    /// subrate factor.
    public var effectiveIntervalMilliseconds: Double { intervalMilliseconds * Double(max(1, subrateFactor)) }
    public var supervisionTimeoutMilliseconds: Double { HCIUnits.timeoutToMilliseconds(supervisionTimeout) }
    public var description: String {
        var text = "interval \(Format.ms(intervalMilliseconds)) ms latency \(latency) timeout \(Format.ms(supervisionTimeoutMilliseconds)) ms"
        if subrateFactor > 1 {
            text += ", subrated ×\(subrateFactor): effective interval \(Format.ms(effectiveIntervalMilliseconds)) ms"
        }
        return text
    }
}

/// One link from its Connection Complete (or first packet) to its Disconnection Complete (or the capture's end).
/// A class: trackers update it in place while the capture is read, and reports share it afterwards.
public final class Connection: @unchecked Sendable {
    /// 1-based order of appearance in the capture (links of an air capture and of HCI in one file are numbered
    /// together when the model is finished).
    @exclusivity(unchecked) public internal(set) var id: Int
    public let controller: UInt16
    public let handle: UInt16
    @exclusivity(unchecked) public internal(set) var transport: LinkTransport
    /// Who drove the link (`LinkOwnership`), set when the model is finished (or the link judged early).
    @exclusivity(unchecked) public internal(set) var ownership: LinkOwnership = .app
    /// The phone's own GATT client used the link (discovery, reads, writes, subscriptions): set with `ownership`.
    /// A link the capture joined midway is judged like any when the app drove it.
    @exclusivity(unchecked) public internal(set) var clientDriven = false
    /// Judged by the per-link rules before the capture ended and slimmed (`LinkRetirement`): its events,
    /// series, runs and ATT working state are gone; what capture-wide rules and the energy total read is kept.
    @exclusivity(unchecked) public internal(set) var isJudged = false
    /// `historyBytes` when the link finished, while it waits whole to be judged (`LinkRetirement.wholeBudget`).
    @exclusivity(unchecked) var heldHistoryBytes = 0
    @exclusivity(unchecked) public internal(set) var role: ConnectionRole = .unknown
    @exclusivity(unchecked) public internal(set) var peerAddress: BDAddr?
    @exclusivity(unchecked) public internal(set) var peerAddressType: AddressType?
    /// The peer's identity address, when it sent it in pairing (SMP Identity Address Information): the same
    /// peer behind changing resolvable private addresses.
    @exclusivity(unchecked) public internal(set) var peerIdentityAddress: BDAddr?
    /// Scanning / advertising was on when the link came up. (Declared here, they fill the padding after the
    /// address: a link costs the same 256 bytes with its `database` pointer.)
    @exclusivity(unchecked) public internal(set) var scanningAtConnect = false
    @exclusivity(unchecked) public internal(set) var advertisingAtConnect = false
    /// Which link to its peer this is: 1 for the first connection to `peerAddress` on this controller and
    /// transport in the capture, 2 for the next, and so on. Links whose peer the capture does not show (it
    /// began mid-connection) are counted among themselves. Unlike `handle`, which the controller picks anew
    /// for every connection, it is the same when a scenario is recorded again: finding fingerprints use it.
    @exclusivity(unchecked) public internal(set) var peerLink = 1
    @exclusivity(unchecked) public internal(set) var start: RecordRef
    /// Our create-connection command for this link, when the capture shows it: connecting took from there to
    /// `start`.
    @exclusivity(unchecked) public internal(set) var connectRequested: RecordRef?
    /// The capture began after this link was set up; `start` is its first packet.
    @exclusivity(unchecked) public internal(set) var implicitStart: Bool
    @exclusivity(unchecked) public internal(set) var end: RecordRef?
    /// Disconnection Complete's reason; nil while open or when the link ended by a reset or the capture's end.
    @exclusivity(unchecked) public internal(set) var disconnectReason: HCIStatus?
    /// The host sent HCI Disconnect for this link.
    public internal(set) var disconnectRequestedLocally: Bool {
        _read { yield working.pointee.disconnectRequestedLocally }
        _modify { yield &working.pointee.disconnectRequestedLocally }
        set { working.pointee.disconnectRequestedLocally = newValue }
    }
    /// Parameters at connection time and now.
    public internal(set) var initialParameters: ConnectionParameters? {
        _read { yield working.pointee.initialParameters }
        _modify { yield &working.pointee.initialParameters }
        set { working.pointee.initialParameters = newValue }
    }
    public internal(set) var parameters: ConnectionParameters? {
        _read { yield working.pointee.parameters }
        _modify { yield &working.pointee.parameters }
        set { working.pointee.parameters = newValue }
    }
    @exclusivity(unchecked) public internal(set) var encrypted = false
    /// A link followed on the air (LE link-layer sniffer capture) rather than through a host's HCI: its access
    /// address, both sides' addresses and what only the air shows. The link is seen from its central, so `role`
    /// is `.central`, `sent` is central → peripheral and `peerAddress` is the peripheral.
    @exclusivity(unchecked) public internal(set) var air: AirLink?
    /// Effective ATT MTU of the unenhanced bearer (23 until an exchange).
    public internal(set) var mtu: Int {
        _read { yield working.pointee.mtu }
        _modify { yield &working.pointee.mtu }
        set { working.pointee.mtu = newValue }
    }
    /// Enhanced ATT bearers opened on the link and their MTU.
    public internal(set) var enhancedATT: EnhancedATTBearers {
        _read { yield working.pointee.enhancedATT }
        _modify { yield &working.pointee.enhancedATT }
        set { working.pointee.enhancedATT = newValue }
    }
    /// Other L2CAP channels being opened by signalling.
    var l2capChannels: L2CAPChannels {
        _read { yield working.pointee.l2capChannels }
        _modify { yield &working.pointee.l2capChannels }
        set { working.pointee.l2capChannels = newValue }
    }
    public internal(set) var gatt: GATTDatabase {
        _read { yield database.pointee.gatt }
        _modify { yield &database.pointee.gatt }
        set { database.pointee.gatt = newValue }
    }
    /// The phone's own GATT server as the peer discovered it (the peer acting as GATT client: ANCS/AMS, a watch
    /// reading the phone's services): kept apart from the peer's database in `gatt`.
    public internal(set) var serverGATT: GATTDatabase {
        _read { yield working.pointee.serverGATT }
        _modify { yield &working.pointee.serverGATT }
        set { working.pointee.serverGATT = newValue }
    }
    /// Per attribute handle.
    public internal(set) var usage: AttributeUsageTable {
        _read { yield database.pointee.usage }
        _modify { yield &database.pointee.usage }
        set { database.pointee.usage = newValue }
    }
    public internal(set) var events: [TimelineEvent] {
        _read { yield working.pointee.events }
        _modify { yield &working.pointee.events }
        set { working.pointee.events = newValue }
    }
    /// Events not kept because of `maximumEventsPerConnection`.
    public internal(set) var droppedEvents: Int {
        _read { yield working.pointee.droppedEvents }
        _modify { yield &working.pointee.droppedEvents }
        set { working.pointee.droppedEvents = newValue }
    }
    /// Activity runs referenced by `.activity` events.
    public internal(set) var runs: [ActivityRun] {
        _read { yield working.pointee.runs }
        _modify { yield &working.pointee.runs }
        set { working.pointee.runs = newValue }
    }
    /// Every operation of a kind on an attribute by one side, over the whole link (`ActivitySeries`), in first-use
    /// order; at most `TrackerOptions.maximumSeriesPerConnection`.
    public internal(set) var series: [ActivitySeries] {
        _read { yield working.pointee.series }
        _modify { yield &working.pointee.series }
        set { working.pointee.series = newValue }
    }
    /// Records of the first operations of series `index` (at most `ActivitySeries.citedRecords`), to cite: taken
    /// from its runs, so a series keeps no array of its own.
    public func records(ofSeries index: Int) -> [RecordRef] {
        var out: [RecordRef] = []
        for run in runs where Int(run.series) == index {
            for r in run.records.prefix(ActivitySeries.citedRecords - out.count) { out.append(r) }
            if out.count == ActivitySeries.citedRecords { break }
        }
        return out
    }

    /// `records(ofSeries:)` of every series, in one pass over the runs (for listing them all).
    public func recordsOfEverySeries() -> [[RecordRef]] {
        var out = [[RecordRef]](repeating: [], count: series.count)
        for run in runs where run.series >= 0 && Int(run.series) < series.count {
            let i = Int(run.series)
            out[i].append(contentsOf: run.records.prefix(ActivitySeries.citedRecords - out[i].count))
        }
        return out
    }

    /// Discovery procedures referenced by `.discovery` events.
    @exclusivity(unchecked) public internal(set) var discoveries: [DiscoveryProcedure] = []
    public internal(set) var transactions: TransactionStatistics {
        _read { yield working.pointee.transactions }
        _modify { yield &working.pointee.transactions }
        set { working.pointee.transactions = newValue }
    }
    /// Answered requests one by one, when `TrackerOptions.keptATTTransactions` asks; past that many, counted.
    public internal(set) var attTransactions: [ATTTransaction] {
        _read { yield working.pointee.attTransactions }
        _modify { yield &working.pointee.attTransactions }
        set { working.pointee.attTransactions = newValue }
    }
    public internal(set) var droppedATTTransactions: Int {
        _read { yield working.pointee.droppedATTTransactions }
        _modify { yield &working.pointee.droppedATTTransactions }
        set { working.pointee.droppedATTTransactions = newValue }
    }
    public internal(set) var firstATT: RecordRef? {
        _read { yield working.pointee.firstATT }
        _modify { yield &working.pointee.firstATT }
        set { working.pointee.firstATT = newValue }
    }
    public internal(set) var lastATT: RecordRef? {
        _read { yield working.pointee.lastATT }
        _modify { yield &working.pointee.lastATT }
        set { working.pointee.lastATT = newValue }
    }
    /// ATT PDUs by opcode.
    public internal(set) var attOpcodeCounts: OpcodeCounts {
        _read { yield working.pointee.attOpcodeCounts }
        _modify { yield &working.pointee.attOpcodeCounts }
        set { working.pointee.attOpcodeCounts = newValue }
    }
    /// ATT PDUs by opcode, only the opcodes seen.
    public var attCounts: [UInt8: Int] { attOpcodeCounts.dictionary }
    /// Packets and bytes of ACL data each way.
    public internal(set) var aclPacketsSent: Int {
        _read { yield working.pointee.aclPacketsSent }
        _modify { yield &working.pointee.aclPacketsSent }
        set { working.pointee.aclPacketsSent = newValue }
    }
    public internal(set) var aclPacketsReceived: Int {
        _read { yield working.pointee.aclPacketsReceived }
        _modify { yield &working.pointee.aclPacketsReceived }
        set { working.pointee.aclPacketsReceived = newValue }
    }
    /// ACL packets the capture cut short (Android's btsnooz keeps 14 bytes of each): no L2CAP or ATT is read
    /// from them, so what they carried is unknown.
    @exclusivity(unchecked) public internal(set) var aclPacketsCutShort = 0
    /// L2CAP PDUs on a fixed channel the specification leaves unassigned on this transport (Apple's private
    /// channel 0x003A to its accessories, for one): a vendor's own protocol, which the OS speaks, not an app.
    @exclusivity(unchecked) public internal(set) var vendorFixedChannelPDUs = 0
    /// Stretches of the link with one set of parameters and PHYs, each with its traffic: what the radio-time
    /// model prices event by event. The first starts at the link's start; at most `maximumPhases`. The current
    /// one is kept apart, so counting a packet touches no array.
    public var phases: [LinkPhase] { closedPhases + (currentPhase.map { [$0] } ?? []) }
    public internal(set) var closedPhases: [LinkPhase] {
        _read { yield working.pointee.closedPhases }
        _modify { yield &working.pointee.closedPhases }
        set { working.pointee.closedPhases = newValue }
    }
    public internal(set) var currentPhase: LinkPhase? {
        _read { yield working.pointee.currentPhase }
        _modify { yield &working.pointee.currentPhase }
        set { working.pointee.currentPhase = newValue }
    }
    public static let maximumPhases = 256
    /// The PHYs now (LE PHY Update Complete; 1M until one is seen).
    public internal(set) var txPHY: UInt8 {
        _read { yield working.pointee.txPHY }
        _modify { yield &working.pointee.txPHY }
        set { working.pointee.txPHY = newValue }
    }
    public internal(set) var rxPHY: UInt8 {
        _read { yield working.pointee.rxPHY }
        _modify { yield &working.pointee.rxPHY }
        set { working.pointee.rxPHY = newValue }
    }

    /// A BR/EDR link's mode now (Mode Change, Sniff Subrating; a synchronous link's slots): nil on LE links.
    public internal(set) var classicMode: ClassicLinkMode? {
        _read { yield working.pointee.classicMode }
        _modify { yield &working.pointee.classicMode }
        set { working.pointee.classicMode = newValue }
    }
    /// A BR/EDR link changes mode every few seconds on some phones (sniff after 5 s idle, active for each burst):
    /// each mode is a phase, so many more are kept; a few BR/EDR links per capture at most hold them.
    public static let maximumClassicPhases = 16_384

    /// The phase that begins at `at` with the link's parameters, PHYs and mode now.
    func phase(from at: RecordRef) -> LinkPhase {
        var p = LinkPhase(start: at, parameters: parameters, txPHY: txPHY, rxPHY: rxPHY)
        p.classic = classicMode
        return p
    }

    /// New parameters, PHYs or BR/EDR mode: a new phase (past the limit, or at the same record, the current one
    /// changes).
    func beginPhase(at: RecordRef) {
        let limit = classicMode == nil ? Self.maximumPhases : Self.maximumClassicPhases
        if let current = currentPhase, current.start.number == at.number || closedPhases.count + 1 >= limit {
            currentPhase?.parameters = parameters
            currentPhase?.txPHY = txPHY
            currentPhase?.rxPHY = rxPHY
            currentPhase?.classic = classicMode
            return
        }
        if let current = currentPhase {
            closedPhases.append(current)
            air?.beginPhase()
        }
        currentPhase = phase(from: at)
    }

    /// Channel Sounding: the subevent length (µs) of the procedures the controller last enabled on the link.
    public internal(set) var channelSoundingSubeventMicroseconds: Int {
        _read { yield working.pointee.channelSoundingSubeventMicroseconds }
        _modify { yield &working.pointee.channelSoundingSubeventMicroseconds }
        set { working.pointee.channelSoundingSubeventMicroseconds = newValue }
    }

    /// A Channel Sounding subevent on the link: its radio time counts in the current phase.
    func channelSoundingSubevent() {
        if currentPhase == nil { currentPhase = phase(from: start) }
        currentPhase!.channelSoundingSubevents += 1
        currentPhase!.channelSoundingMicroseconds += channelSoundingSubeventMicroseconds
    }

    /// The LE data length each way (LE Data Length Change; 27 until one is seen).
    public internal(set) var maxTxOctets: Int {
        _read { yield working.pointee.maxTxOctets }
        _modify { yield &working.pointee.maxTxOctets }
        set { working.pointee.maxTxOctets = newValue }
    }
    public internal(set) var maxRxOctets: Int {
        _read { yield working.pointee.maxRxOctets }
        _modify { yield &working.pointee.maxRxOctets }
        set { working.pointee.maxRxOctets = newValue }
    }

    /// One reassembled L2CAP PDU of `l2capBytes` (header included) each way: it crossed the air as
    /// ⌈bytes / data length⌉ link-layer PDUs (ENERGY.md §3.1), whatever the HCI fragments were.
    @inline(__always)
    func countLinkLayer(l2capBytes: Int, sent: Bool) {
        if currentPhase == nil { currentPhase = phase(from: start) }
        if sent {
            currentPhase!.sent.add(bytes: l2capBytes, octets: maxTxOctets)
        } else {
            currentPhase!.received.add(bytes: l2capBytes, octets: maxRxOctets)
        }
    }

    var session: ATTSession {
        _read { yield working.pointee.session }
        _modify { yield &working.pointee.session }
        set { working.pointee.session = newValue }
    }
    /// What only an open link and the timeline need, apart: released when the link is slimmed. Held through a
    /// pointer, not a class reference: a class reference in a `var` is retained around every in-place change of
    /// one of its fields (several per ATT PDU), a pointer costs no reference counting or exclusivity check.
    /// Owned by this link, except the shared `ConnectionWorkingState.released` of slimmed links.
    @exclusivity(unchecked) var working: UnsafeMutablePointer<ConnectionWorkingState>
    /// The peer's GATT database and the link's use of it, apart from `working`: all a judged link with a
    /// database keeps of its working state (a peer's later links inherit it; redundant discovery compares it),
    /// in a box of its own rather than the whole working state (about 950 bytes). Owned by this link, except the
    /// shared `LinkDatabase.empty` of links without one.
    @exclusivity(unchecked) var database: UnsafeMutablePointer<LinkDatabase>
    @inline(__always)
    func withUsage(_ handle: UInt16, _ body: (inout AttributeUsage) -> Void) {
        usage.update(handle, body)
    }

    init(id: Int, controller: UInt16, handle: UInt16, transport: LinkTransport, start: RecordRef, implicitStart: Bool,
         options: TrackerOptions) {
        self.id = id
        self.controller = controller
        self.handle = handle
        self.transport = transport
        self.start = start
        self.implicitStart = implicitStart
        self.working = .holding(ConnectionWorkingState(options: options))
        self.database = .holding(LinkDatabase())
    }

    deinit {
        working.free(unless: ConnectionWorkingState.released)
        database.free(unless: LinkDatabase.empty)
    }

    public var isOpen: Bool { end == nil }
    /// A BR/EDR ACL or SCO/eSCO link.
    public var isClassic: Bool { transport == .brEdr || transport == .sco }
    /// The link was lost rather than closed: a supervision or LL response timeout, or (on the air) it went silent
    /// without LL_TERMINATE_IND. The radio's or the peer's doing, not a choice of either host.
    public var wasLost: Bool {
        guard end != nil else { return false }
        return disconnectReason == .connectionTimeout || disconnectReason == .lmpResponseTimeout
            || (air != nil && disconnectReason == nil)
    }

    /// Duration until `end`, or until `captureEnd` when still open.
    public func duration(captureEnd: Timestamp?) -> Duration? {
        guard let endTime = end?.timestamp ?? captureEnd else { return nil }
        return endTime - start.timestamp
    }

    /// Adds an event in time order. Events found late (timeouts, idle gaps) go back to their place, after the
    /// events of the same record, so the timeline is always sorted and closing a link needs no sort.
    func append(_ event: TimelineEvent, limit: Int) {
        guard events.count < limit else {
            droppedEvents += 1
            return
        }
        var i = events.count
        while i > 0 && events[i - 1].at.number > event.at.number { i -= 1 }
        if i == events.count { events.append(event) } else { events.insert(event, at: i) }
    }

    /// A finished link keeps its history but not its working state: drop the ATT session's tables and the
    /// arrays' growth slack, since finished connections are what memory grows with on long captures. Copying
    /// an array to shed its slack costs per element, so only arrays with much spare room are copied.
    func compact() {
        session = ATTSession(options: session.options)
        usage.compact()
        if Self.hasSlack(events) { events = events.map { $0 } }
        if Self.hasSlack(runs) { runs = runs.map { $0 } }
        if Self.hasSlack(series) { series = series.map { $0 } }
    }

    /// After the per-link rules judged it and its phases were priced (`LinkRetirement`): keeps what the
    /// capture-wide rules and the audit's notes read — identity, times, parameters, counters, and the GATT database with
    /// its discoveries and use when it has one (a peer's later links inherit it; redundant discovery compares it)
    /// — and releases the history only the per-link rules and the timeline read.
    func slim() {
        isJudged = true
        events = []
        runs = []
        series = []
        // Priced by the judge (the energy total's `PricedPhases`); counted by opcode only for stats and timeline.
        closedPhases = []
        working.free(unless: ConnectionWorkingState.released)
        working = ConnectionWorkingState.released
        if gatt.isEmpty && discoveries.isEmpty {
            database.free(unless: LinkDatabase.empty)
            database = LinkDatabase.empty
        }
    }

    /// Whether anything reads more of this judged link than its `LinkSummary`: a link with a GATT database
    /// (its own: a peer's later links inherit it, redundant discovery compares it; or inherited: discover-all-
    /// services judges a discovery by what every link using its database touched) or discoveries, or one that
    /// showed its peer's identity address (which ties the peer's other addresses together when databases are
    /// shared at the capture's end).
    var isReadAfterJudgement: Bool { !gatt.isEmpty || !discoveries.isEmpty || peerIdentityAddress != nil }

    /// About what the history a finished link keeps until judged costs: its events, runs (with their cited
    /// records), series, phases and answered requests. Read once, when it finishes.
    var historyBytes: Int {
        var bytes = events.capacity * MemoryLayout<TimelineEvent>.stride
            + runs.capacity * MemoryLayout<ActivityRun>.stride
            + series.capacity * MemoryLayout<ActivitySeries>.stride
            + closedPhases.capacity * MemoryLayout<LinkPhase>.stride
            + attTransactions.capacity * MemoryLayout<ATTTransaction>.stride
        for run in runs where run.records.capacity > 0 {
            bytes += run.records.capacity * MemoryLayout<RecordRef>.stride + Self.arrayHeaderBytes
        }
        return bytes
    }

    /// What an array's storage holds beside its elements (object header, count and capacity).
    static let arrayHeaderBytes = 32

    static func hasSlack<T>(_ array: [T]) -> Bool { array.capacity - array.count > max(8, array.count / 4) }


    /// The GATT characteristic whose value or descriptors contain `handle`.
    public func characteristic(containing handle: UInt16) -> GATTCharacteristic? { gatt.characteristic(containing: handle) }
}

/// A stretch of a link with one set of parameters and PHYs, from `start` to the next phase's start (or the link's
/// end), and the link-layer traffic in it each way.
public struct LinkPhase: Sendable {
    public static let phy1M: UInt8 = 1
    public var start: RecordRef
    /// nil when the capture joined the link midway and never saw its parameters.
    public var parameters: ConnectionParameters?
    public var txPHY: UInt8
    public var rxPHY: UInt8
    public var sent = LinkLayerTraffic()
    public var received = LinkLayerTraffic()
    /// Channel Sounding subevents the controller reported in the phase, and their radio time (µs): ranging on
    /// the link's radio, beside its connection events.
    public var channelSoundingSubevents = 0
    public var channelSoundingMicroseconds = 0
    /// A BR/EDR link's mode in the phase (nil on LE links): `sent` and `received` then count baseband packets.
    public var classic: ClassicLinkMode?

    public init(start: RecordRef, parameters: ConnectionParameters?, txPHY: UInt8, rxPHY: UInt8) {
        self.start = start
        self.parameters = parameters
        self.txPHY = txPHY
        self.rxPHY = rxPHY
    }
}

/// L2CAP traffic of one direction as link-layer data PDUs: what the radio carried.
public struct LinkLayerTraffic: Sendable, Equatable {
    /// The LE data length every controller supports (Core Vol 6 Part B §4.5.10).
    public static let minimumOctets = 27
    /// Link-layer data PDUs (fragments of L2CAP PDUs at the data length of the time).
    public internal(set) var pdus = 0
    /// Their payload bytes (L2CAP headers included, MICs not).
    public internal(set) var bytes = 0

    public init() {}

    @inline(__always)
    mutating func add(bytes n: Int, octets: Int) {
        bytes &+= n
        // Most PDUs fit one link-layer PDU: no division for them.
        pdus &+= n <= octets ? 1 : (n + octets - 1) / octets
    }
}

/// Request/response latency and outcome counts.
public struct TransactionStatistics: Sendable, Equatable {
    public var completed = 0
    public var errors = 0
    public var timeouts = 0
    /// Unanswered when the link ended, before 30 s had passed.
    public var unansweredAtEnd = 0
    /// Indications never confirmed (whoever sent them): no request, so none of the counts above.
    public var unconfirmedIndications = 0
    /// Responses without a request (capture started mid-transaction, or a misbehaving peer).
    public var unsolicitedResponses = 0
    /// Of those, responses to a read or a write: an attribute was used, but the capture does not say which.
    public var unsolicitedUseResponses = 0
    /// Nanoseconds: `Duration` arithmetic (128-bit) costs a library call per response.
    var totalLatencyNanoseconds: Int64 = 0
    var maximumLatencyNanoseconds: Int64 = 0

    public var totalLatency: Duration { .nanoseconds(totalLatencyNanoseconds) }
    public var maximumLatency: Duration { .nanoseconds(maximumLatencyNanoseconds) }
    public var meanLatency: Duration? { completed + errors > 0 ? totalLatency / (completed + errors) : nil }

    @inline(__always)
    mutating func answered(after nanoseconds: Int64) {
        totalLatencyNanoseconds &+= nanoseconds
        if nanoseconds > maximumLatencyNanoseconds { maximumLatencyNanoseconds = nanoseconds }
    }
}

/// A link's ATT session tables, L2CAP reassembly and EATT bearers (what only an open link needs), and the phone's
/// server database and answered requests (what only the timeline and the exports read): one allocation the
/// slimmed link lets go of (`Connection.slim`), so a judged link costs only what capture-wide rules read.
struct ConnectionWorkingState {
    var session: ATTSession
    var l2capChannels = L2CAPChannels()
    var enhancedATT = EnhancedATTBearers()
    var serverGATT = GATTDatabase()
    var attTransactions: [ATTTransaction] = []
    // Read per packet while the link is open.
    var transactions = TransactionStatistics()
    var firstATT: RecordRef?
    var lastATT: RecordRef?
    var attOpcodeCounts = OpcodeCounts()
    var currentPhase: LinkPhase?
    // What the per-link rules, the timeline and the energy model read.
    var disconnectRequestedLocally: Bool = false
    var initialParameters: ConnectionParameters?
    var parameters: ConnectionParameters?
    var mtu: Int = ATTSession.defaultMTU
    var events: [TimelineEvent] = []
    var droppedEvents: Int = 0
    var runs: [ActivityRun] = []
    var series: [ActivitySeries] = []
    var droppedATTTransactions: Int = 0
    var aclPacketsSent = 0
    var aclPacketsReceived = 0
    var closedPhases: [LinkPhase] = []
    var txPHY: UInt8 = LinkPhase.phy1M
    var rxPHY: UInt8 = LinkPhase.phy1M
    var channelSoundingSubeventMicroseconds: Int = 0
    var classicMode: ClassicLinkMode?
    var maxTxOctets = LinkLayerTraffic.minimumOctets
    var maxRxOctets = LinkLayerTraffic.minimumOctets

    init(options: TrackerOptions) { session = ATTSession(options: options) }

    /// Every slimmed link's: empty, and never written again (nothing is added to a finished link).
    nonisolated(unsafe) static let released = UnsafeMutablePointer.holding(ConnectionWorkingState(options: TrackerOptions()))
}

/// A link's GATT database (the peer's, as discovered or inherited) and its use of each attribute
/// (`Connection.database`).
struct LinkDatabase {
    var gatt = GATTDatabase()
    var usage = AttributeUsageTable()

    /// Every link's without a database once judged: empty, and never written again.
    nonisolated(unsafe) static let empty = UnsafeMutablePointer.holding(LinkDatabase())
}

/// The blocks a link holds through pointers (`Connection.working`, `.database`).
extension UnsafeMutablePointer {
    /// A new block holding `value`.
    static func holding(_ value: Pointee) -> Self {
        let p = allocate(capacity: 1)
        p.initialize(to: value)
        return p
    }

    /// Frees a block a link owns; `shared`, the empty block judged links point to instead, stays.
    func free(unless shared: Self) {
        guard self != shared else { return }
        deinitialize(count: 1)
        deallocate()
    }
}
