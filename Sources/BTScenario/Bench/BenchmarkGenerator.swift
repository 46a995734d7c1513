#if canImport(Glibc)
import Glibc
#endif
import BTCapture
import BTWire

/// What a benchmark capture contains.
public struct BenchmarkStatistics: Sendable, Equatable {
    public var bytes: Int64 = 0
    public var records = 0
    /// LE Advertising Report and LE Extended Advertising Report events.
    public var advertisingRecords = 0
    /// ACL packets (all carry ATT on CID 4), continuation fragments included.
    public var attRecords = 0
    /// Every other command and event.
    public var hciRecords = 0
    public var connectionsOpened = 0
    public var connectionsClosed = 0

    public var advertisingShare: Double { records == 0 ? 0 : Double(advertisingRecords) / Double(records) }
    public var attShare: Double { records == 0 ? 0 : Double(attRecords) / Double(records) }
}

/// Writes a large, realistic btsnoop H4 capture of about `targetBytes`, streaming: ~60 % advertising reports
/// (legacy, batched and extended, from thousands of devices), ~35 % ATT over ACL (notifications, writes,
/// reads, long values fragmented over several packets) and the rest HCI commands and events (Number Of
/// Completed Packets, connection updates, connects and disconnects, so links come and go). Records are built
/// in place in one reused buffer, so memory stays flat and throughput is limited by the disk. The output
/// depends only on `targetBytes` and the seed; the capture ends at the first record boundary at or past the
/// target.
public final class BenchmarkGenerator {
    public static let defaultSeed: UInt64 = 0x4245_4E43_485F_3031
    public let targetBytes: Int64
    public let shape: BenchShape
    var rng: SplitMix64
    var out: BenchRecordBuffer
    let pool: BenchAdvertiserPool
    var stats = BenchmarkStatistics()
    /// btsnoop time (µs since year 0) of the next record.
    var clock: Int64
    var connections: [BenchConnection] = []
    var nextHandle: UInt16 = BenchConnection.firstHandle
    var pendingCompletions: [(handle: UInt16, count: UInt16)] = []
    var pendingTotal = 0
    /// Scratch for one L2CAP frame before it is fragmented.
    let scratch: UnsafeMutableRawPointer
    /// The `scans` shape's host activity (scan and advertising sessions, known peers).
    var host = BenchHostActivity()
    /// Records written when the current link of the `long-links` shape came up.
    var linkStartRecord = 0

    /// Target shares of records, in percent.
    static let advertisingPercent = 60
    static let attPercent = 35
    static let maximumConnections = 4
    static let minimumConnections = 2
    static let completionBatch = 6
    static let recordGap: ClosedRange<Int64> = 40...2_400
    static let fragmentGap: ClosedRange<Int64> = 10...60
    static let scratchSize = 1 << 12
    /// One address rotation per this many advertising events.
    static let rotationPeriod: UInt64 = 2_000
    /// Records a link of the `long-links` shape stays up for (about 700 MB of capture).
    static let longLinkRecords = 10_000_000

    public init(targetBytes: Int64, seed: UInt64 = BenchmarkGenerator.defaultSeed, shape: BenchShape = .links,
                fd: Int32) {
        self.targetBytes = targetBytes
        self.shape = shape
        self.rng = SplitMix64(seed: seed)
        self.out = BenchRecordBuffer(fd: fd)
        self.pool = BenchAdvertiserPool(rng: &rng)
        self.clock = BTSnoopTime.btsnoopValue(HCIScript.defaultStart)
        self.scratch = UnsafeMutableRawPointer.allocate(byteCount: Self.scratchSize, alignment: 16)
        pendingCompletions.reserveCapacity(Self.maximumConnections)
        connections.reserveCapacity(Self.maximumConnections)
    }

    deinit { scratch.deallocate() }

    /// Writes a capture of about `targetBytes` to `path` (created or truncated). Errors give only the cause: the
    /// caller names the file.
    public static func write(to path: String, targetBytes: Int64, seed: UInt64 = BenchmarkGenerator.defaultSeed,
                             shape: BenchShape = .links) throws -> BenchmarkStatistics {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw CaptureError(.cannotOpen, String(cString: strerror(errno))) }
        defer { close(fd) }
        let generator = BenchmarkGenerator(targetBytes: targetBytes, seed: seed, shape: shape, fd: fd)
        return try generator.run()
    }

    /// Generates until the target size is reached and flushes.
    public func run() throws -> BenchmarkStatistics {
        out.fileHeader()
        while out.total < targetBytes {
            try step()
        }
        try out.flush()
        stats.bytes = out.total
        return stats
    }

    /// The same HCI stream translated by an `AirSink` into an air sniffer's capture of about `targetBytes`
    /// (`options.container`; the air formats of `btlens-scenario bench`): advertising PDUs for the reports,
    /// connections with their events (empty PDUs when idle) and the ATT traffic as LL data PDUs. The stream
    /// runs until the air file reaches the target.
    public static func writeAir(to path: String, targetBytes: Int64, seed: UInt64 = BenchmarkGenerator.defaultSeed,
                                options: AirOptions) throws -> BenchmarkStatistics {
        let sink = try AirSink(path: path, options: options)
        let generator = BenchmarkGenerator(targetBytes: targetBytes, seed: seed, fd: -1)
        try sink.begin(controller: ControllerIdentity(address: BDAddr(rawValue: benchLocalAddress)), title: "bench",
                       timestamp: HCIScript.defaultStart)
        generator.out.forward = { indicator, flags, time, packet in
            let kind: RecordKind
            switch indicator {
            case H4PacketType.command: kind = .command
            case H4PacketType.event: kind = .event
            case H4PacketType.acl: kind = .acl
            default: return
            }
            try sink.packet(kind: kind, direction: flags & 1 == 0 ? .sent : .received,
                            timestamp: BTSnoopTime.timestamp(fromBTSnoop: time), payload: packet)
        }
        while sink.bytesWritten < targetBytes {
            try generator.step()
        }
        try sink.finish()
        generator.stats.bytes = sink.bytesWritten
        return generator.stats
    }

    /// The capturing controller's public address in the air benchmark.
    static let benchLocalAddress: UInt64 = 0x00_1B_DC_4A_77_01

    // MARK: Choosing what happens next

    enum Category { case advertising, att, hci }

    /// Mostly the category furthest below its share (so the mix holds at any size), sometimes a random one
    /// (so the sequence is not a fixed pattern).
    func nextCategory() -> Category {
        let total = stats.records + 1
        let advDeficit = Self.advertisingPercent * total - 100 * stats.advertisingRecords
        let attDeficit = Self.attPercent * total - 100 * stats.attRecords
        let hciDeficit = (100 - Self.advertisingPercent - Self.attPercent) * total - 100 * stats.hciRecords
        if rng.chance(1, in: 8) {
            let r = Int(rng.next(below: 100))
            return r < Self.advertisingPercent ? .advertising : r < Self.advertisingPercent + Self.attPercent ? .att : .hci
        }
        if advDeficit >= attDeficit && advDeficit >= hciDeficit { return .advertising }
        return attDeficit >= hciDeficit ? .att : .hci
    }

    var minimumConnections: Int { shape == .longLinks ? 1 : Self.minimumConnections }
    var maximumConnections: Int { shape == .longLinks ? 1 : Self.maximumConnections }

    func step() throws {
        if connections.count < minimumConnections {
            try connect()
            return
        }
        if shape == .scans && stats.records >= host.nextChange { try hostActivity() }
        switch nextCategory() {
        case .advertising:
            // The scans shape hears advertising only while the host scans.
            if shape == .scans && !host.scanning { try attTransaction() } else { try advertisingEvent() }
        case .att: try attTransaction()
        case .hci: try hciProcedure()
        }
    }

    @inline(__always) func tick() { clock &+= rng.int64(in: Self.recordGap) }

    // MARK: Records

    static let commandFlags: UInt32 = 2
    static let eventFlags: UInt32 = 3
    static let aclSentFlags: UInt32 = 0
    static let aclReceivedFlags: UInt32 = 1

    @inline(__always) func beginEvent(_ code: HCIEventCode) -> Int {
        out.begin(flags: Self.eventFlags, timestamp: clock, indicator: H4PacketType.event)
        out.u8(code.rawValue)
        let lengthAt = out.mark
        out.u8(0)
        return lengthAt
    }

    @inline(__always) func endEvent(_ lengthAt: Int) throws {
        out.patch8(at: lengthAt, UInt8(truncatingIfNeeded: out.mark - lengthAt - 1))
        try out.end()
        stats.records += 1
    }

    @inline(__always) func beginCommand(_ opcode: HCIOpcode) -> Int {
        out.begin(flags: Self.commandFlags, timestamp: clock, indicator: H4PacketType.command)
        out.u16(opcode.rawValue)
        let lengthAt = out.mark
        out.u8(0)
        return lengthAt
    }

    /// Ends a command begun with `beginCommand`: its parameter length, then the record.
    @inline(__always) func endCommand(_ lengthAt: Int) throws {
        out.patch8(at: lengthAt, UInt8(truncatingIfNeeded: out.mark - lengthAt - 1))
        try out.end()
        stats.records += 1
        stats.hciRecords += 1
    }

    func commandStatus(_ opcode: HCIOpcode) throws {
        tick()
        let at = beginEvent(.commandStatus)
        out.u8(HCIStatus.success.rawValue)
        out.u8(HCIEvent.defaultCommandCredits)
        out.u16(opcode.rawValue)
        try endEvent(at)
        stats.hciRecords += 1
    }

    // MARK: Advertising

    func advertisingEvent() throws {
        let index = Int(rng.next(below: UInt64(pool.advertisers.count)))
        if rng.next(below: Self.rotationPeriod) == 0 { pool.rotateAddress(of: index, rng: &rng) }
        let advertiser = pool.advertisers[index]
        if advertiser.extended {
            for k in 0..<advertiser.count {
                tick()
                try extendedEvent(advertiser.first + k)
            }
            return
        }
        // Legacy: sometimes several devices in one event; the scan response follows in its own.
        var batch = (advertiser.first, -1, -1)
        if rng.chance(1, in: 5) {
            let other = pool.advertisers[Int(rng.next(below: UInt64(pool.advertisers.count)))]
            if !other.extended { batch.1 = other.first }
        }
        tick()
        try legacyEvent(batch)
        if advertiser.count > 1 && rng.chance(1, in: 2) {
            clock &+= rng.int64(in: Self.fragmentGap)
            try legacyEvent((advertiser.first + 1, -1, -1))
        }
    }

    func legacyEvent(_ t: (Int, Int, Int)) throws {
        let count = t.1 < 0 ? 1 : (t.2 < 0 ? 2 : 3)
        let at = beginEvent(.leMeta)
        out.u8(LESubevent.advertisingReport.rawValue)
        out.u8(UInt8(count))
        writeTemplate(t.0)
        if t.1 >= 0 { writeTemplate(t.1) }
        if t.2 >= 0 { writeTemplate(t.2) }
        try endEvent(at)
        stats.advertisingRecords += 1
    }

    func extendedEvent(_ template: Int) throws {
        let at = beginEvent(.leMeta)
        out.u8(LESubevent.extendedAdvertisingReport.rawValue)
        out.u8(1)
        writeTemplate(template)
        try endEvent(at)
        stats.advertisingRecords += 1
    }

    @inline(__always) func writeTemplate(_ index: Int) {
        let t = pool.templates[index]
        let start = out.mark
        out.copy(pool.arena + t.offset, count: t.length)
        let rssi = Int(Int8(bitPattern: pool.arena.load(fromByteOffset: t.offset + t.rssiOffset, as: UInt8.self)))
        out.patch8(at: start + t.rssiOffset, UInt8(bitPattern: Int8(clamping: rssi + rng.int(in: -3...3))))
    }

    // MARK: ATT

    func attTransaction() throws {
        let c = connections[Int(rng.next(below: UInt64(connections.count)))]
        let r = rng.next(below: 100)
        switch r {
        case 0..<45:
            try notification(c, length: rng.int(in: 2...20))
        case 45..<55:
            try notification(c, length: c.mtu - 3)  // a full-size value: several fragments at 27 bytes
        case 55..<68:
            try attPDU(c, fromHost: true, opcode: .writeCommand, handle: c.writeHandle, length: rng.int(in: 1...20))
        case 68..<84:
            try attPDU(c, fromHost: true, opcode: .writeRequest, handle: c.writeHandle, length: rng.int(in: 1...16))
            try attPDU(c, fromHost: false, opcode: .writeResponse, handle: nil, length: 0)
        default:
            try attPDU(c, fromHost: true, opcode: .readRequest, handle: c.readHandle, length: 0)
            let long = rng.chance(1, in: 4)
            try attPDU(c, fromHost: false, opcode: .readResponse, handle: nil,
                       length: long ? c.mtu - 1 : rng.int(in: 1...24))
        }
        if pendingTotal >= Self.completionBatch { try completedPackets() }
    }

    func notification(_ c: BenchConnection, length: Int) throws {
        try attPDU(c, fromHost: false, opcode: .handleValueNotification, handle: c.notifyHandle, length: length)
    }

    /// Builds the L2CAP frame in the scratch buffer, then writes it as ACL fragments of the link's size.
    /// `handle` is the PDU's first u16 parameter (an attribute handle, or the MTU of an exchange).
    func attPDU(_ c: BenchConnection, fromHost: Bool, opcode: ATTOpcode, handle: UInt16?, length: Int) throws {
        let payload = 1 + (handle == nil ? 0 : 2) + length
        var p = 0
        func put(_ v: UInt8) {
            scratch.storeBytes(of: v, toByteOffset: p, as: UInt8.self)
            p += 1
        }
        put(UInt8(truncatingIfNeeded: payload))
        put(UInt8(truncatingIfNeeded: payload >> 8))
        put(UInt8(truncatingIfNeeded: L2CAPChannelID.att.rawValue))
        put(UInt8(truncatingIfNeeded: L2CAPChannelID.att.rawValue >> 8))
        put(opcode.rawValue)
        if let handle {
            put(UInt8(truncatingIfNeeded: handle))
            put(UInt8(truncatingIfNeeded: handle >> 8))
        }
        var left = length
        var word = rng.next()
        var inWord = 8
        while left > 0 {
            if inWord == 0 {
                word = rng.next()
                inWord = 8
            }
            put(UInt8(truncatingIfNeeded: word))
            word >>= 8
            inWord -= 1
            left -= 1
        }
        let frameLength = p
        var sent = 0
        var fragments = 0
        tick()
        while sent < frameLength {
            let chunk = min(c.dataLength, frameLength - sent)
            let boundary: PacketBoundary = sent > 0 ? .continuation : (fromHost ? .firstNonFlushable : .firstFlushable)
            if sent > 0 { clock &+= rng.int64(in: Self.fragmentGap) }
            out.begin(flags: fromHost ? Self.aclSentFlags : Self.aclReceivedFlags, timestamp: clock,
                      indicator: H4PacketType.acl)
            out.u16(c.handle | boundary.rawValue << HCIFraming.packetBoundaryShift)
            out.u16(UInt16(chunk))
            out.copy(scratch + sent, count: chunk)
            try out.end()
            stats.records += 1
            stats.attRecords += 1
            sent += chunk
            fragments += 1
        }
        if fromHost { owe(c.handle, fragments) }
    }

    func owe(_ handle: UInt16, _ count: Int) {
        pendingTotal += count
        if let i = pendingCompletions.firstIndex(where: { $0.handle == handle }) {
            pendingCompletions[i].count &+= UInt16(count)
        } else {
            pendingCompletions.append((handle, UInt16(count)))
        }
    }

    func completedPackets() throws {
        guard !pendingCompletions.isEmpty else { return }
        tick()
        let at = beginEvent(.numberOfCompletedPackets)
        out.u8(UInt8(pendingCompletions.count))
        for e in pendingCompletions {
            out.u16(e.handle)
            out.u16(e.count)
        }
        try endEvent(at)
        stats.hciRecords += 1
        pendingCompletions.removeAll(keepingCapacity: true)
        pendingTotal = 0
    }

    // MARK: HCI procedures

    func hciProcedure() throws {
        let r = rng.next(below: 100)
        if shape == .longLinks && stats.records - linkStartRecord >= Self.longLinkRecords {
            // The long link goes down; the next step brings up another.
            try disconnect(0)
        } else if r < 20 && connections.count < maximumConnections {
            try connect()
        } else if r < 35 && connections.count > minimumConnections {
            try disconnect(Int(rng.next(below: UInt64(connections.count))))
        } else if r < 70 {
            try connectionUpdate(connections[Int(rng.next(below: UInt64(connections.count)))])
        } else if r < 80 {
            try readRSSI(connections[Int(rng.next(below: UInt64(connections.count)))])
        } else if pendingTotal > 0 {
            try completedPackets()
        } else {
            try connectionUpdate(connections[Int(rng.next(below: UInt64(connections.count)))])
        }
    }

    func connect() throws {
        let handle = nextHandle
        nextHandle = nextHandle >= BenchConnection.lastHandle ? BenchConnection.firstHandle : nextHandle + 1
        let c = BenchConnection(handle: handle, peer: nextPeer(), rng: &rng)
        linkStartRecord = stats.records
        tick()
        let at = beginCommand(.leCreateConnection)
        out.u16(BenchConnection.scanInterval)
        out.u16(BenchConnection.scanInterval)
        out.u8(LEParameter.acceptAll)
        out.u8(LEParameter.randomAddress)
        writeAddress(c.peer)
        out.u8(LEParameter.publicAddress)
        out.u16(c.interval)
        out.u16(c.interval)
        out.u16(0)
        out.u16(BenchConnection.supervisionTimeout)
        out.u16(0)
        out.u16(0)
        try endCommand(at)
        try commandStatus(.leCreateConnection)
        tick()
        let ev = beginEvent(.leMeta)
        out.u8(LESubevent.connectionComplete.rawValue)
        out.u8(HCIStatus.success.rawValue)
        out.u16(handle)
        out.u8(LEParameter.centralRole)
        out.u8(LEParameter.randomAddress)
        writeAddress(c.peer)
        out.u16(c.interval)
        out.u16(0)
        out.u16(BenchConnection.supervisionTimeout)
        out.u8(LEParameter.clockAccuracy500ppm)
        try endEvent(ev)
        stats.hciRecords += 1
        connections.append(c)
        stats.connectionsOpened += 1
        if c.mtu > ATTPDU.defaultMTU {
            // Both sides offer the link's MTU, so every later PDU size is legal for a decoder that tracks it.
            try attPDU(c, fromHost: true, opcode: .exchangeMTURequest, handle: UInt16(c.mtu), length: 0)
            try attPDU(c, fromHost: false, opcode: .exchangeMTUResponse, handle: UInt16(c.mtu), length: 0)
        }
    }

    /// A new random peer, or in the `scans` shape often a known one (reconnected after a scan).
    func nextPeer() -> UInt64 {
        if shape == .scans && rng.chance(1, in: 2) {
            return BenchHostActivity.knownPeerBase | rng.next(below: BenchHostActivity.knownPeers)
        }
        return rng.next() | BenchConnection.staticRandomTag
    }

    func writeAddress(_ raw: UInt64) {
        for i in 0..<6 { out.u8(UInt8(truncatingIfNeeded: raw >> (8 * UInt64(i)))) }
    }

    func disconnect(_ index: Int) throws {
        let c = connections.remove(at: index)
        if pendingTotal > 0 { try completedPackets() }
        tick()
        let at = beginCommand(.disconnect)
        out.u16(c.handle)
        out.u8(HCIStatus.remoteUserTerminatedConnection.rawValue)
        try endCommand(at)
        try commandStatus(.disconnect)
        tick()
        let ev = beginEvent(.disconnectionComplete)
        out.u8(HCIStatus.success.rawValue)
        out.u16(c.handle)
        out.u8(HCIStatus.connectionTerminatedByLocalHost.rawValue)
        try endEvent(ev)
        stats.hciRecords += 1
        stats.connectionsClosed += 1
    }

    func connectionUpdate(_ c: BenchConnection) throws {
        let interval = BenchConnection.intervals[Int(rng.next(below: UInt64(BenchConnection.intervals.count)))]
        tick()
        let at = beginCommand(.leConnectionUpdate)
        out.u16(c.handle)
        out.u16(interval)
        out.u16(interval)
        out.u16(0)
        out.u16(BenchConnection.supervisionTimeout)
        out.u16(0)
        out.u16(0)
        try endCommand(at)
        try commandStatus(.leConnectionUpdate)
        tick()
        let ev = beginEvent(.leMeta)
        out.u8(LESubevent.connectionUpdateComplete.rawValue)
        out.u8(HCIStatus.success.rawValue)
        out.u16(c.handle)
        out.u16(interval)
        out.u16(0)
        out.u16(BenchConnection.supervisionTimeout)
        try endEvent(ev)
        stats.hciRecords += 1
    }

    func readRSSI(_ c: BenchConnection) throws {
        tick()
        let at = beginCommand(.readRSSI)
        out.u16(c.handle)
        try endCommand(at)
        tick()
        let ev = beginEvent(.commandComplete)
        out.u8(HCIEvent.defaultCommandCredits)
        out.u16(HCIOpcode.readRSSI.rawValue)
        out.u8(HCIStatus.success.rawValue)
        out.u16(c.handle)
        out.u8(UInt8(bitPattern: Int8(rng.int(in: -90...(-40)))))
        try endEvent(ev)
        stats.hciRecords += 1
    }
}

/// One link in the benchmark capture.
struct BenchConnection {
    var handle: UInt16
    var peer: UInt64
    var interval: UInt16
    var mtu: Int
    var dataLength: Int
    var notifyHandle: UInt16
    var readHandle: UInt16
    var writeHandle: UInt16

    static let firstHandle: UInt16 = 0x0040
    static let lastHandle: UInt16 = 0x0EFF
    /// Random static addresses have the top two bits set.
    static let staticRandomTag: UInt64 = 0xC0_00_00_00_00_00
    static let scanInterval = HCIUnits.slots(microseconds: Micros.ms(60))
    static let supervisionTimeout = HCIUnits.supervisionTimeout(microseconds: Micros.seconds(4))
    static let intervals: [UInt16] = [7_500, 15_000, 30_000, 45_000, 100_000].map {
        HCIUnits.connectionInterval(microseconds: $0)
    }
    static let mtus = [23, 185, 247]
    static let dataLengths = [HCIFraming.leMinimumACLDataLength, HCIFraming.leMinimumACLDataLength,
                              HCIFraming.leMaximumACLDataLength]
    static let firstValueHandle: UInt16 = 0x000E

    init(handle: UInt16, peer: UInt64, rng: inout SplitMix64) {
        self.handle = handle
        self.peer = peer
        self.interval = Self.intervals[Int(rng.next(below: UInt64(Self.intervals.count)))]
        self.mtu = Self.mtus[Int(rng.next(below: UInt64(Self.mtus.count)))]
        self.dataLength = Self.dataLengths[Int(rng.next(below: UInt64(Self.dataLengths.count)))]
        let base = Self.firstValueHandle + UInt16(rng.next(below: 16)) * 3
        self.notifyHandle = base
        self.readHandle = base + 3
        self.writeHandle = base + 6
    }
}
