/// The containers an LE air sniffer writes its link-layer packets in (LINKLAYER.md §1), as btlens writes them:
/// - `.leLL` (251): the bare packet, no metadata.
/// - `.pseudoHeader` (256, LE_LL_WITH_PHDR): RF channel, signal, reference AA, flags (dewhitened, signal valid,
///   reference AA valid, PDU type with the direction, CRC checked/valid, decrypted and MIC checked/valid, PHY).
/// - `.nordic` (272, NORDIC_BLE): the nRF Sniffer's header in version 0–3 (board id, packet counter, id) and
///   its event header (flags, channel index, RSSI, event counter, time: v3 firmware µs, v0–v2 the gap since the
///   end of the previous packet).
/// - `.ppi` (192): a PPI header with Ubertooth's BTLE field (channel in MHz, 100 ns clock, RSSI), inner DLT 251.
public enum LinkLayerContainer: Equatable, Sendable {
    case leLL
    case pseudoHeader
    case nordic(version: UInt8, board: UInt8)
    case ppi

    public var linktype: Int {
        switch self {
        case .leLL: Linktype.bluetoothLELL
        case .pseudoHeader: Linktype.bluetoothLELLWithPHDR
        case .nordic: Linktype.nordicBLE
        case .ppi: Linktype.ppi
        }
    }
}

/// What a sniffer's container says about one packet besides the packet itself.
public struct LinkLayerRecordInfo: Sendable {
    public enum Direction: UInt8, Sendable { case unknown, centralToPeripheral, peripheralToCentral }
    /// How the payload stands in the file.
    public enum Encryption: UInt8, Sendable {
        /// Not encrypted on air.
        case plaintext
        /// Encrypted on air; the sniffer had the key: plaintext in the file, MIC checked and removed.
        case decrypted
        /// Encrypted on air and in the file (ciphertext and MIC).
        case encrypted
    }

    /// Start of the packet on air, µs since the Unix epoch: the pcap time.
    public var microseconds: Int64
    /// Channel index 0–39 (37–39 primary advertising).
    public var channel: UInt8
    public var rssi: Int8
    public var isAdvertising: Bool
    public var direction: Direction
    public var crcOK: Bool
    public var encryption: Encryption
    /// 0 1M, 1 2M, 2 Coded (the PHDR and nRF coding).
    public var phy: UInt8
    /// An advertising PDU on a secondary channel: 0 AUX_ADV_IND, 1 AUX_CHAIN_IND, 2 AUX_SYNC_IND, 3 AUX_SCAN_RSP.
    public var auxiliaryType: UInt8?
    /// nRF: the connection event counter (0 on advertising).
    public var eventCounter: UInt16
    /// Air time of the packet in µs (nRF v0–v2 count their time from the end of the previous packet).
    public var airMicroseconds: Int64

    public init(microseconds: Int64, channel: UInt8, rssi: Int8, isAdvertising: Bool,
                direction: Direction = .unknown, crcOK: Bool = true, encryption: Encryption = .plaintext,
                phy: UInt8 = 0, auxiliaryType: UInt8? = nil, eventCounter: UInt16 = 0, airMicroseconds: Int64 = 0) {
        self.microseconds = microseconds
        self.channel = channel
        self.rssi = rssi
        self.isAdvertising = isAdvertising
        self.direction = direction
        self.crcOK = crcOK
        self.encryption = encryption
        self.phy = phy
        self.auxiliaryType = auxiliaryType
        self.eventCounter = eventCounter
        self.airMicroseconds = airMicroseconds
    }
}

/// Builds the records of one container: the header for each packet, with the state some headers keep (the nRF
/// packet counter and time base). `LinkLayerRecordWriter` writes them into pcap; tests and fuzz seeds use the
/// bytes directly.
public struct LinkLayerRecordEncoder: Sendable {
    public let container: LinkLayerContainer
    /// nRF v3 firmware time at the Unix epoch µs `firmwareEpoch`: the sniffer's clock starts there at 0.
    public var firmwareEpoch: Int64
    var packetCounter: UInt16 = 0
    /// End of the previous packet on air (µs), for nRF v0–v2 time deltas.
    var previousEnd: Int64?

    // PHDR flags [LINKLAYER.md §1.3].
    static let phdrDewhitened: UInt16 = 0x0001
    static let phdrSignalValid: UInt16 = 0x0002
    static let phdrDecrypted: UInt16 = 0x0008
    static let phdrReferenceAAValid: UInt16 = 0x0010
    static let phdrPDUTypeShift: UInt16 = 7
    static let phdrAuxiliaryAdvertising: UInt16 = 1
    static let phdrDataCentralToPeripheral: UInt16 = 2
    static let phdrDataPeripheralToCentral: UInt16 = 3
    static let phdrCRCChecked: UInt16 = 0x0400
    static let phdrCRCValid: UInt16 = 0x0800
    static let phdrAuxTypeShift: UInt16 = 12
    static let phdrMICChecked: UInt16 = 0x1000
    static let phdrMICValid: UInt16 = 0x2000
    static let phdrPHYShift: UInt16 = 14
    static let phdrNoise: UInt8 = 0x80  // −128 dBm, flagged invalid
    // nRF [LINKLAYER.md §1.4].
    static let nordicLegacyMagic: [UInt8] = [0xBE, 0xEF]
    static let nordicEventHeaderLength: UInt8 = 10
    static let nordicVersion1HeaderLength: UInt8 = 6
    static let nordicAdvertisingID: UInt8 = 0x02
    static let nordicDataID: UInt8 = 0x06
    static let nordicCRCOK: UInt8 = 0x01
    static let nordicCentralToPeripheral: UInt8 = 0x02
    static let nordicEncrypted: UInt8 = 0x04
    static let nordicMICOK: UInt8 = 0x08
    static let nordicPHYShift: UInt8 = 4
    static let nordicAuxTypeShift: UInt8 = 1
    static let nordicSecondaryFlag: UInt8 = 0x04
    // PPI with Ubertooth's BTLE field [LINKLAYER.md §1.5].
    static let ppiHeaderLength: UInt16 = 24
    static let ppiBTLEField: UInt16 = 30006
    static let ppiBTLEFieldLength: UInt16 = 12
    static let ppiBaseMHz = 2402
    static let ppiClockTickNanoseconds: Int64 = 100

    public init(container: LinkLayerContainer, firmwareEpoch: Int64 = 0) {
        self.container = container
        self.firmwareEpoch = firmwareEpoch
    }

    /// The RF channel (2402 + 2k MHz) of channel index `index`.
    public static func rfChannel(index: UInt8) -> UInt8 {
        switch index {
        case 37: 0
        case 38: 12
        case 39: 39
        case 0...10: index + 1
        default: index + 2
        }
    }

    /// Appends the record of `packet` (access address through CRC) to `out`.
    public mutating func encode(_ info: LinkLayerRecordInfo, packet: UnsafeRawBufferPointer, into out: inout [UInt8]) {
        switch container {
        case .leLL:
            break
        case .pseudoHeader:
            encodePseudoHeader(info, packet: packet, into: &out)
        case .nordic(let version, let board):
            encodeNordic(info, version: version, board: board, packetLength: packet.count, into: &out)
        case .ppi:
            encodePPI(info, into: &out)
        }
        out.append(contentsOf: packet)
        previousEnd = info.microseconds + info.airMicroseconds
    }

    func encodePseudoHeader(_ info: LinkLayerRecordInfo, packet: UnsafeRawBufferPointer, into out: inout [UInt8]) {
        var flags = Self.phdrDewhitened | Self.phdrSignalValid | Self.phdrReferenceAAValid | Self.phdrCRCChecked
        if info.crcOK { flags |= Self.phdrCRCValid }
        flags |= UInt16(info.phy & 3) << Self.phdrPHYShift
        if info.isAdvertising {
            if let aux = info.auxiliaryType {
                flags |= Self.phdrAuxiliaryAdvertising << Self.phdrPDUTypeShift | UInt16(aux & 3) << Self.phdrAuxTypeShift
            }
        } else {
            switch info.direction {
            case .centralToPeripheral: flags |= Self.phdrDataCentralToPeripheral << Self.phdrPDUTypeShift
            case .peripheralToCentral: flags |= Self.phdrDataPeripheralToCentral << Self.phdrPDUTypeShift
            case .unknown: break
            }
            if info.encryption == .decrypted { flags |= Self.phdrDecrypted | Self.phdrMICChecked | Self.phdrMICValid }
        }
        out.append(Self.rfChannel(index: info.channel))
        out.append(UInt8(bitPattern: info.rssi))
        out.append(Self.phdrNoise)
        out.append(0)  // access address offenses
        out.append(contentsOf: packet.prefix(4))  // reference AA: the packet's own
        appendLE16(flags, &out)
    }

    mutating func encodeNordic(_ info: LinkLayerRecordInfo, version: UInt8, board: UInt8, packetLength: Int,
                               into out: inout [UInt8]) {
        let payloadLength = Int(Self.nordicEventHeaderLength) + packetLength
        let counter = packetCounter
        packetCounter &+= 1
        let id = info.isAdvertising ? Self.nordicAdvertisingID : Self.nordicDataID
        switch version {
        case 0:
            out.append(contentsOf: Self.nordicLegacyMagic)
            out.append(id)
            appendLE16(counter, &out)
            out.append(0)
            out.append(0)
            out.append(UInt8(truncatingIfNeeded: payloadLength - 1))  // no length byte in v0's event header
        case 1:
            out.append(board)
            out.append(Self.nordicVersion1HeaderLength)
            out.append(UInt8(truncatingIfNeeded: payloadLength))
            out.append(1)
            appendLE16(counter, &out)
            out.append(id)
        default:
            out.append(board)
            appendLE16(UInt16(truncatingIfNeeded: payloadLength), &out)
            out.append(version)
            appendLE16(counter, &out)
            out.append(id)
        }
        if version != 0 { out.append(Self.nordicEventHeaderLength) }
        var flags = info.crcOK ? Self.nordicCRCOK : 0
        flags |= (info.phy & 7) << Self.nordicPHYShift
        if info.isAdvertising {
            if let aux = info.auxiliaryType { flags |= Self.nordicSecondaryFlag | (aux & 3) << Self.nordicAuxTypeShift }
        } else {
            if info.direction == .centralToPeripheral { flags |= Self.nordicCentralToPeripheral }
            switch info.encryption {
            case .plaintext: break
            case .decrypted: flags |= Self.nordicEncrypted | Self.nordicMICOK
            case .encrypted: flags |= Self.nordicEncrypted
            }
        }
        out.append(flags)
        out.append(info.channel)
        out.append(UInt8(clamping: -Int(info.rssi)))
        appendLE16(info.isAdvertising ? 0 : info.eventCounter, &out)
        let time: Int64
        if version >= 3 {
            time = info.microseconds - firmwareEpoch
        } else {
            time = previousEnd.map { max(0, info.microseconds - $0) } ?? 0
        }
        appendLE32(UInt32(truncatingIfNeeded: time), &out)
    }

    func encodePPI(_ info: LinkLayerRecordInfo, into out: inout [UInt8]) {
        out.append(0)  // version
        out.append(0)  // flags
        appendLE16(Self.ppiHeaderLength, &out)
        appendLE32(UInt32(Linktype.bluetoothLELL), &out)
        appendLE16(Self.ppiBTLEField, &out)
        appendLE16(Self.ppiBTLEFieldLength, &out)
        out.append(0)  // btle_version
        appendLE16(UInt16(Self.ppiBaseMHz + 2 * Int(Self.rfChannel(index: info.channel))), &out)
        out.append(0)  // clkn_high
        let ticks = (info.microseconds - firmwareEpoch) * 1000 / Self.ppiClockTickNanoseconds
        appendLE32(UInt32(truncatingIfNeeded: ticks), &out)
        let rssi = UInt8(bitPattern: info.rssi)
        out.append(rssi)  // max
        out.append(rssi)  // min
        out.append(rssi)  // average
        out.append(1)  // count
    }

    @inline(__always) func appendLE16(_ v: UInt16, _ out: inout [UInt8]) {
        out.append(UInt8(truncatingIfNeeded: v))
        out.append(UInt8(truncatingIfNeeded: v >> 8))
    }

    @inline(__always) func appendLE32(_ v: UInt32, _ out: inout [UInt8]) {
        for i in 0..<4 { out.append(UInt8(truncatingIfNeeded: v >> (8 * UInt32(i)))) }
    }
}

/// Writes LE link-layer packets as an air sniffer would (pcap with the container's linktype, µs timestamps).
public final class LinkLayerRecordWriter {
    public var encoder: LinkLayerRecordEncoder
    let pcap: PcapWriter
    var frame: [UInt8] = []
    /// Bytes in the file so far (pcap file header and record headers included).
    public private(set) var bytesWritten: Int64 = PcapWriter.fileHeaderLength
    public private(set) var records = 0

    public init(path: String, container: LinkLayerContainer, firmwareEpoch: Int64 = 0) throws {
        encoder = LinkLayerRecordEncoder(container: container, firmwareEpoch: firmwareEpoch)
        pcap = try PcapWriter(path: path, linktype: container.linktype)
        frame.reserveCapacity(512)
    }

    public func write(_ info: LinkLayerRecordInfo, packet: UnsafeRawBufferPointer) throws {
        frame.removeAll(keepingCapacity: true)
        encoder.encode(info, packet: packet, into: &frame)
        try frame.withUnsafeBytes { try pcap.writeFrame(timestamp: Timestamp(unixMicroseconds: info.microseconds), frame: $0) }
        bytesWritten += PcapWriter.recordHeaderLength + Int64(frame.count)
        records += 1
    }

    public func finish() throws { try pcap.finish() }
}

extension PcapWriter {
    /// The classic pcap file header and record header sizes.
    public static let fileHeaderLength: Int64 = 24
    public static let recordHeaderLength: Int64 = 16
}
