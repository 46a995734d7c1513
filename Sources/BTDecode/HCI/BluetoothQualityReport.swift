import BTWire

/// A Bluetooth Quality Report: the controller's own account of a link or of itself, which Android asks for
/// (AOSP system/btif/src/btif_bqr.cc, framework BluetoothQualityReport.java) and which arrives as an HCI
/// Vendor Specific event (0xFF) whose first parameter is the BQR sub-event code 0x58, then the report id and
/// its fields, little-endian.
///
/// The link-quality reports (monitoring, approaching supervision timeout, A2DP and SCO choppy, LE Audio choppy,
/// connection failed) share a common part whose length grew with BQR versions; the event does not say its
/// version (the stack knows it from the vendor capabilities), so the common part is read by its length: 48
/// bytes (first version), 72 (ISO counters, v1.01), 79 (peer address and calibration failures, v1.03) or 85
/// (unreceived packets and coexistence, v1.04, BQR v6, Android 15). The id-specific part after it, as
/// BluetoothQualityReport.java reads it, is decoded after an 85-byte common part only.
public struct BluetoothQualityReport: Sendable, Equatable {
    /// The Vendor Specific event's sub-event code for BQR (AOSP hcidefs.h `HCI_VSE_SUBCODE_BQR_SUB_EVT`).
    public static let subeventCode: UInt8 = 0x58

    /// Report ids (AOSP btif_bqr.h `BqrQualityReportId`). Open: unknown ids are kept as they are.
    public struct ID: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let monitoring = ID(rawValue: 0x01)
        public static let approachingLSTO = ID(rawValue: 0x02)
        public static let a2dpChoppy = ID(rawValue: 0x03)
        public static let scoChoppy = ID(rawValue: 0x04)
        public static let rootInflammation = ID(rawValue: 0x05)
        public static let energyMonitor = ID(rawValue: 0x06)
        public static let leAudioChoppy = ID(rawValue: 0x07)
        public static let connectFail = ID(rawValue: 0x08)
        public static let rfStats = ID(rawValue: 0x09)
        public static let vendorQuality = ID(rawValue: 0x10)
        public static let lmpLLMessageTrace = ID(rawValue: 0x11)
        public static let schedulingTrace = ID(rawValue: 0x12)
        public static let controllerDebugInfo = ID(rawValue: 0x13)
        public static let vendorTrace = ID(rawValue: 0x20)

        static let names: [UInt8: String] = [
            0x01: "link quality (monitoring)", 0x02: "approaching link supervision timeout", 0x03: "A2DP audio choppy",
            0x04: "SCO voice choppy", 0x05: "root inflammation (controller error)", 0x06: "energy monitor",
            0x07: "LE Audio choppy", 0x08: "connection failed", 0x09: "RF statistics", 0x10: "vendor quality",
            0x11: "LMP/LL message trace", 0x12: "scheduling trace", 0x13: "controller debug info", 0x20: "vendor trace",
        ]
        public var description: String { Self.names[rawValue] ?? "report \(Hex.u8(rawValue))" }

        /// Reports whose body is the link-quality common part.
        public var isLinkQuality: Bool {
            [Self.monitoring, .approachingLSTO, .a2dpChoppy, .scoChoppy, .leAudioChoppy, .connectFail].contains(self)
        }
        /// Log dumps: a connection handle, then the vendor's bytes.
        public var isLogDump: Bool { [Self.vendorQuality, .lmpLLMessageTrace, .schedulingTrace, .controllerDebugInfo, .vendorTrace].contains(self) }
    }

    /// The link-quality common part (AOSP `BqrLinkQualityEvent`).
    public struct LinkQuality: Sendable, Equatable {
        /// Lengths of the common part by version: first, with ISO counters, with the peer address, BQR v6.
        public static let baseLength = 48, isoLength = 72, addressLength = 79, v6Length = 85

        public var packetType: UInt8
        public var handle: UInt16
        /// 0 central, 1 peripheral.
        public var role: UInt8
        public var txPowerLevel: Int8
        public var rssi: Int8
        public var snr: UInt8
        public var unusedAFHChannels: UInt8
        public var unidealAFHChannels: UInt8
        /// Link supervision timeout, in Bluetooth clocks (0.3125 ms).
        public var supervisionTimeout: UInt16
        public var piconetClock: UInt32
        public var retransmissions: UInt32
        public var noRx: UInt32
        public var naks: UInt32
        public var lastTxAck: UInt32
        public var flowOffs: UInt32
        public var lastFlowOn: UInt32
        public var overflowBytes: UInt32
        public var underflowBytes: UInt32
        public var peer: BDAddr?
        public var calibrationFailures: UInt8?
        /// ISO and packet counters (v1.01): packets sent, not acknowledged, flushed, sent in a CIS event's last
        /// subevent; received with a CRC error, received twice.
        public var txPackets: UInt32?
        public var txUnacked: UInt32?
        public var txFlushed: UInt32?
        public var txLastSubevent: UInt32?
        public var crcErrors: UInt32?
        public var rxDuplicates: UInt32?
        public var rxUnreceived: UInt32?
        public var coexInfo: UInt16?

        /// The share of packets sent again, when the report counts the packets sent.
        public var retransmissionShare: Double? {
            guard let sent = txPackets, sent > 0 else { return nil }
            return Double(retransmissions) / Double(sent)
        }
    }

    /// The Energy Monitor report (BQR v6; AOSP `BqrEnergyMonitorEvent`): the controller's own time and current
    /// over `periodMilliseconds` before the report.
    public struct EnergyMonitor: Sendable, Equatable {
        public static let length = 1 + 2 + 4 * 4 + 4 * 2 + 1 + 4 * 2 + 4 * 2 + 1 + 4 * 2 + 4 + 4 * 6
        public var averageCurrentMilliamps: UInt16
        public var idleMilliseconds: UInt32
        public var idleEntries: UInt32
        public var activeMilliseconds: UInt32
        public var activeEntries: UInt32
        public var brEdrTxMilliseconds: UInt32
        public var brEdrTxEntries: UInt32
        public var brEdrTxPower: Int8
        public var brEdrRxMilliseconds: UInt32
        public var brEdrRxEntries: UInt32
        public var leTxMilliseconds: UInt32
        public var leTxEntries: UInt32
        public var leTxPower: Int8
        public var leRxMilliseconds: UInt32
        public var leRxEntries: UInt32
        public var periodMilliseconds: UInt32
        /// Receive one and two chains, internal and external PA transmit one and two chains (ms).
        public var chainMilliseconds: [UInt32]
    }

    /// The RF statistics report (BQR v6; AOSP `BqrRFStatsEvent`): packet counters over `periodMilliseconds`.
    public struct RFStats: Sendable, Equatable {
        public static let length = 1 + 1 + 4 + 4 * 4 + 4 * 10 + 4 * 5
        public static let rssiBands = [">-50", "-50…-55", "-55…-60", "-60…-65", "-65…-70", "-70…-75", "-75…-80",
                                       "-80…-85", "-85…-90", "<-90"]
        public static let deltaBands = ["<2", "2…5", "5…8", "8…11", ">11"]
        public var extensionInfo: UInt8
        public var periodMilliseconds: UInt32
        /// Packets sent with internal PA beamforming, external PA beamforming, internal PA diversity, external PA diversity.
        public var txPowerPackets: [UInt32]
        /// Packets received in each RSSI band (`rssiBands`, dBm) and by RSSI difference between chains (`deltaBands`, dB).
        public var rssiPackets: [UInt32]
        public var rssiDeltaPackets: [UInt32]
    }

    /// The report's contents by its Quality Report ID.
    public enum Body: Sendable, Equatable {
        /// `specific`: the id-specific fields after a v6 common part, by name.
        case linkQuality(LinkQuality, specific: [Field])
        case energyMonitor(EnergyMonitor)
        case rfStats(RFStats)
        case rootInflammation(errorCode: UInt8, vendorErrorCode: UInt8)
        case logDump(handle: UInt16, vendorBytes: Int)
        /// An id btlens does not know, or a report too short for its id's layout.
        case undecoded(bytes: Int)
    }

    /// One id-specific field: its name (BluetoothQualityReport.java's) and value.
    public struct Field: Sendable, Equatable {
        public var name: String
        public var value: UInt32
    }

    /// Id-specific parts after the common part (name, bytes), as BluetoothQualityReport.java reads them.
    static let specificLayouts: [UInt8: [(String, Int)]] = [
        ID.approachingLSTO.rawValue: [("connection state", 1), ("baseband statistics", 4), ("slots used", 4),
                                      ("coexistence denials", 2), ("tx skipped", 2), ("RF loss", 2), ("native clock", 4),
                                      ("last tx ack", 4)],
        ID.a2dpChoppy.rawValue: [("arrival time", 4), ("schedule time", 4), ("glitches", 2), ("tx coexistence denials", 2),
                                 ("rx coexistence denials", 2), ("ACL tx queue length", 1), ("link quality", 1)],
        ID.scoChoppy.rawValue: [("glitches", 2), ("eSCO interval", 1), ("eSCO window", 1), ("air format", 1),
                                ("instances", 2), ("tx coexistence denials", 2), ("rx coexistence denials", 2),
                                ("tx aborts", 2), ("late dispatches", 2), ("microphone interrupts missed", 2),
                                ("LPA interrupts missed", 2), ("speaker interrupts missed", 2), ("PLC fills", 2),
                                ("PLC discards", 2), ("missed instances", 2), ("tx retransmit slots", 2),
                                ("rx retransmit slots", 2), ("good rx frames", 2)],
        ID.connectFail.rawValue: [("failure reason", 1)],
    ]

    public var id: ID
    public var body: Body

    /// The link the report is about: link-quality reports and log dumps name one.
    public var handle: UInt16? {
        switch body {
        case .linkQuality(let q, _): q.handle
        case .logDump(let h, _): h
        default: nil
        }
    }

    /// Reads a Vendor Specific event's parameters; nil when they are not a BQR sub-event.
    public init?(vendorEventParameters p: UnsafeRawBufferPointer) {
        var r = ByteReader(p)
        guard r.readU8() == Self.subeventCode, let raw = r.readU8() else { return nil }
        id = ID(rawValue: raw)
        let rest = r.rest
        body = Self.body(id, UnsafeRawBufferPointer(rebasing: p[1...])) ?? .undecoded(bytes: rest.count)
    }

    /// `report` starts with the report id (as AOSP's parsers read it).
    static func body(_ id: ID, _ report: UnsafeRawBufferPointer) -> Body? {
        var r = ByteReader(report)
        _ = r.readU8()
        if id.isLinkQuality { return linkQuality(id, &r, length: report.count) }
        switch id {
        case .energyMonitor:
            guard report.count >= EnergyMonitor.length else { return nil }
            return .energyMonitor(energyMonitor(&r))
        case .rfStats:
            guard report.count >= RFStats.length else { return nil }
            let ext = r.readU8() ?? 0, period = r.readU32() ?? 0
            let tx = (0..<4).map { _ in r.readU32() ?? 0 }
            let rssi = (0..<RFStats.rssiBands.count).map { _ in r.readU32() ?? 0 }
            let delta = (0..<RFStats.deltaBands.count).map { _ in r.readU32() ?? 0 }
            return .rfStats(RFStats(extensionInfo: ext, periodMilliseconds: period, txPowerPackets: tx, rssiPackets: rssi,
                                    rssiDeltaPackets: delta))
        case .rootInflammation:
            guard let error = r.readU8(), let vendor = r.readU8() else { return nil }
            return .rootInflammation(errorCode: error, vendorErrorCode: vendor)
        default:
            guard id.isLogDump, let handle = r.readU16() else { return nil }
            return .logDump(handle: handle & 0x0FFF, vendorBytes: r.remaining)
        }
    }

    static func linkQuality(_ id: ID, _ r: inout ByteReader, length: Int) -> Body? {
        guard length >= LinkQuality.baseLength,
              let packetType = r.readU8(), let handle = r.readU16(), let role = r.readU8(), let tx = r.readI8(),
              let rssi = r.readI8(), let snr = r.readU8(), let unused = r.readU8(), let unideal = r.readU8(),
              let lsto = r.readU16(), let clock = r.readU32(), let retransmissions = r.readU32(), let noRx = r.readU32(),
              let naks = r.readU32(), let lastAck = r.readU32(), let flowOffs = r.readU32(), let flowOn = r.readU32(),
              let overflow = r.readU32(), let underflow = r.readU32()
        else { return nil }
        var q = LinkQuality(packetType: packetType, handle: handle & 0x0FFF, role: role, txPowerLevel: tx, rssi: rssi, snr: snr,
                            unusedAFHChannels: unused, unidealAFHChannels: unideal, supervisionTimeout: lsto,
                            piconetClock: clock, retransmissions: retransmissions, noRx: noRx, naks: naks, lastTxAck: lastAck,
                            flowOffs: flowOffs, lastFlowOn: flowOn, overflowBytes: overflow, underflowBytes: underflow)
        if length >= LinkQuality.addressLength {
            q.peer = r.readAddress()
            q.calibrationFailures = r.readU8()
        }
        if length >= LinkQuality.isoLength {
            q.txPackets = r.readU32()
            q.txUnacked = r.readU32()
            q.txFlushed = r.readU32()
            q.txLastSubevent = r.readU32()
            q.crcErrors = r.readU32()
            q.rxDuplicates = r.readU32()
        }
        var specific: [Field] = []
        if length >= LinkQuality.v6Length {
            q.rxUnreceived = r.readU32()
            q.coexInfo = r.readU16()
            for (name, size) in specificLayouts[id.rawValue] ?? [] {
                guard let bytes = r.readBytes(size) else { break }
                let value = bytes.reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
                specific.append(Field(name: name, value: value))
            }
        }
        return .linkQuality(q, specific: specific)
    }

    static func energyMonitor(_ r: inout ByteReader) -> EnergyMonitor {
        func u32() -> UInt32 { r.readU32() ?? 0 }
        let current = r.readU16() ?? 0
        let idle = u32(), idleN = u32(), active = u32(), activeN = u32(), bTx = u32(), bTxN = u32()
        let bPower = r.readI8() ?? 0
        let bRx = u32(), bRxN = u32(), leTx = u32(), leTxN = u32()
        let lePower = r.readI8() ?? 0
        let leRx = u32(), leRxN = u32(), period = u32()
        let chains = (0..<6).map { _ in u32() }
        return EnergyMonitor(averageCurrentMilliamps: current, idleMilliseconds: idle, idleEntries: idleN,
                             activeMilliseconds: active, activeEntries: activeN, brEdrTxMilliseconds: bTx, brEdrTxEntries: bTxN,
                             brEdrTxPower: bPower, brEdrRxMilliseconds: bRx, brEdrRxEntries: bRxN, leTxMilliseconds: leTx,
                             leTxEntries: leTxN, leTxPower: lePower, leRxMilliseconds: leRx, leRxEntries: leRxN,
                             periodMilliseconds: period, chainMilliseconds: chains)
    }
}
