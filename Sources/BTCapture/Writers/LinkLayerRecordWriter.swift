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
    /// Which side sent a link-layer packet, as the sniffer's header says.
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

    /// The header layouts are `NordicBLEHeader`, `LLPseudoHeader` and `PPIHeader`, which the decoder reads.
    static let nordicEventHeaderLength: UInt8 = 10
    static let nordicVersion1HeaderLength: UInt8 = 6
    /// PHDR noise: −128 dBm, flagged invalid.
    static let phdrNoise: UInt8 = 0x80

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
        var flags = LLPseudoHeader.dewhitened | LLPseudoHeader.signalValid | LLPseudoHeader.referenceAccessAddressValid | LLPseudoHeader.crcChecked
        if info.crcOK { flags |= LLPseudoHeader.crcValid }
        flags |= UInt16(info.phy & 3) << LLPseudoHeader.phyShift
        if info.isAdvertising {
            if let aux = info.auxiliaryType {
                flags |= LLPseudoHeader.PDUType.auxiliaryAdvertising.rawValue << LLPseudoHeader.pduTypeShift | UInt16(aux & 3) << LLPseudoHeader.auxTypeShift
            }
        } else {
            switch info.direction {
            case .centralToPeripheral: flags |= LLPseudoHeader.PDUType.dataCentralToPeripheral.rawValue << LLPseudoHeader.pduTypeShift
            case .peripheralToCentral: flags |= LLPseudoHeader.PDUType.dataPeripheralToCentral.rawValue << LLPseudoHeader.pduTypeShift
            case .unknown: break
            }
            if info.encryption == .decrypted { flags |= LLPseudoHeader.decrypted | LLPseudoHeader.micChecked | LLPseudoHeader.micValid }
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
        let id = info.isAdvertising ? NordicBLEHeader.advertisingPacketID : NordicBLEHeader.dataPacketID
        switch version {
        case 0:
            out.append(contentsOf: [UInt8(NordicBLEHeader.legacyMagic >> 8), UInt8(NordicBLEHeader.legacyMagic & 0xFF)])
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
        var flags = info.crcOK ? NordicBLEHeader.crcOK : 0
        flags |= (info.phy << NordicBLEHeader.phyShift) & NordicBLEHeader.phyMask
        if info.isAdvertising {
            if let aux = info.auxiliaryType { flags |= (aux << NordicBLEHeader.auxTypeShift) & NordicBLEHeader.auxTypeMask }
        } else {
            if info.direction == .centralToPeripheral { flags |= NordicBLEHeader.centralToPeripheral }
            switch info.encryption {
            case .plaintext: break
            case .decrypted: flags |= NordicBLEHeader.encrypted | NordicBLEHeader.micOK
            case .encrypted: flags |= NordicBLEHeader.encrypted
            }
        }
        out.append(flags)
        out.append(info.channel)
        out.append(UInt8(clamping: -Int(info.rssi)))
        appendLE16(info.isAdvertising ? 0 : info.eventCounter, &out)
        let time: Int64
        if version >= NordicBLEHeader.firstAbsoluteTimeVersion {
            time = info.microseconds - firmwareEpoch
        } else {
            time = previousEnd.map { max(0, info.microseconds - $0) } ?? 0
        }
        appendLE32(UInt32(truncatingIfNeeded: time), &out)
    }

    func encodePPI(_ info: LinkLayerRecordInfo, into out: inout [UInt8]) {
        out.append(0)  // version
        out.append(0)  // flags
        appendLE16(UInt16(PPIHeader.length + PPIHeader.fieldHeaderLength + PPIHeader.btleFieldLength), &out)
        appendLE32(UInt32(Linktype.bluetoothLELL), &out)
        appendLE16(PPIHeader.btleFieldType, &out)
        appendLE16(UInt16(PPIHeader.btleFieldLength), &out)
        out.append(0)  // btle_version
        appendLE16(UInt16(PPIHeader.baseFrequency + PPIHeader.channelSpacing * Int(Self.rfChannel(index: info.channel))), &out)
        out.append(0)  // clkn_high
        let ticks = (info.microseconds - firmwareEpoch) * 1000 / Int64(PPIHeader.btleClockTickNanoseconds)
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
    @exclusivity(unchecked) public var encoder: LinkLayerRecordEncoder
    let pcap: PcapWriter
    @exclusivity(unchecked) var frame: [UInt8] = []
    /// Bytes in the file so far (pcap file header and record headers included).
    @exclusivity(unchecked) public private(set) var bytesWritten: Int64 = PcapWriter.fileHeaderLength
    @exclusivity(unchecked) public private(set) var records = 0

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
