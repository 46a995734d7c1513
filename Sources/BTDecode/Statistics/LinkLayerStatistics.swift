import BTWire
import BTCapture

/// The `link_layer` counts of `btlens stats` for air captures, counted as tshark 4.0 does where it is right:
/// a packet with a bad CRC counts only as a CRC error; advertising PDUs by type; data PDUs once, their
/// retransmissions apart; plaintext control PDUs by opcode. Fixed tables, no growth with the file except the
/// set of data access addresses (bounded).
public struct LinkLayerStatistics {
    /// LE link-layer records decoded (the container could be read).
    public var packets = 0
    /// Advertising PDUs whose CRC is not bad, by PDU type (4 bits).
    public var advertisingPDUs = [Int](repeating: 0, count: 16)
    /// Advertising PDUs with a bad CRC, by the (possibly corrupted) type: how tshark's counts differ from ours.
    public var advertisingCRCErrors = [Int](repeating: 0, count: 16)
    /// CONNECT_IND and AUX_CONNECT_REQ (CRC not bad).
    public var connectRequests = 0
    /// Packets whose CRC is bad, advertising and data.
    public var crcErrors = 0
    /// Packets whose CRC nobody could check (no flag, no CRCInit, or cut before the CRC).
    public var crcUnchecked = 0
    /// Data-channel PDUs, CRC not bad, retransmissions not counted; empty and encrypted ones included.
    public var dataPDUs = 0
    public var emptyPDUs = 0
    /// Data PDUs resent with the same SN and payload (counted once in `dataPDUs`).
    public var retransmissions = 0
    /// Non-empty data PDUs still encrypted in the file (no key): counted, not decoded.
    public var encryptedPDUs = 0
    /// Plaintext LL control PDUs by opcode.
    public var control = [Int](repeating: 0, count: 256)
    /// Encrypted LLID-3 PDUs by their first (ciphertext) byte: what a decoder that ignores encryption reads as
    /// an opcode.
    public var encryptedControlFirstByte = [Int](repeating: 0, count: 256)
    /// Retransmitted plaintext control PDUs by opcode, and retransmitted single-PDU ATT messages (LLID 2,
    /// CID 0x0004, the whole L2CAP PDU in one LL PDU) by ATT opcode: counted once above, but twice by a
    /// decoder that does not know the direction (tshark on linktypes 251 and PHDR type 0).
    public var retransmittedControl = [Int](repeating: 0, count: 256)
    public var retransmittedATT = [Int](repeating: 0, count: 256)
    /// Isochronous PDUs (CIS, BIS): counted, not decoded.
    public var isochronousPDUs = 0
    /// Access addresses that carried a data PDU with a CRC that is not bad.
    public var dataAccessAddresses: Set<UInt32> = []
    /// Connections followed: a CONNECT_IND whose access address then carried a data PDU from the peripheral, or
    /// one whose SN or NESN is 1 (something was acknowledged: the link was established; a central whose first
    /// PDU nobody answered failed to establish it), or an access address without a CONNECT_IND that carried
    /// data PDUs in two connection events (the capture joined the link late) — as the tracker opens links.
    public var connectionsFollowed = 0
    /// LL_TERMINATE_IND (plaintext, CRC not bad, not resent) by reason.
    public var terminations = [Int](repeating: 0, count: 256)
    /// Per access address and interface (`key`): `requested` after its CONNECT_IND, `followed` once counted, else
    /// the time of the first data PDU seen without a request. Two sniffers in one pcapng are two radios.
    var connectionState: [UInt64: Int64] = [:]
    static let requested: Int64 = -1
    static let followed: Int64 = -2
    /// The `time` of a data PDU whose container has no event counter: any two such PDUs count as two events.
    static let noEventCounter: Int64 = -3
    /// Addresses remembered at most; a fuzzed capture cannot grow the set beyond it.
    static let maximumAccessAddresses = 4096
    /// The address inserted last: a capture mostly follows one link for a while, so most PDUs skip the hashing.
    var lastAccessAddress: UInt32?
    /// The address (`key`) last found `followed`, for the same reason.
    var lastFollowed: UInt64?

    @inline(__always) static func key(_ accessAddress: UInt32, _ interface: UInt16) -> UInt64 {
        UInt64(interface) << 32 | UInt64(accessAddress)
    }

    public init() {}

    /// Packets with a bad CRC on the data channel.
    public var dataCRCErrors: Int { crcErrors - advertisingCRCErrors.reduce(0, +) }

    @inline(never)
    mutating func countRetransmitted(_ pdu: UnsafeRawBufferPointer) {
        guard let header = LLDataHeader(pdu), !header.isEmpty, pdu.count > header.size else { return }
        let payload = UnsafeRawBufferPointer(rebasing: pdu[header.size...])
        if header.llid == .control {
            retransmittedControl[Int(payload[0])] += 1
        } else if header.llid == .start, payload.count > L2CAPPDU.headerLength,
                  Int(payload[0]) | Int(payload[1]) << 8 == payload.count - L2CAPPDU.headerLength,
                  UInt16(payload[2]) | UInt16(payload[3]) << 8 == L2CAPChannelID.att.rawValue {
            retransmittedATT[Int(payload[L2CAPPDU.headerLength])] += 1
        }
    }

    public mutating func add(_ frame: LLFrame) {
        packets += 1
        if frame.crc == .unchecked { crcUnchecked += 1 }
        let pdu = frame.packet.pdu
        if frame.isAdvertising {
            let type = pdu.first.map { Int($0 & LLAdvertisingPDU.typeMask) }
            if frame.crc == .bad {
                crcErrors += 1
                if let type { advertisingCRCErrors[type] += 1 }
                return
            }
            guard let type else { return }
            advertisingPDUs[type] += 1
            if type == Int(LLAdvertisingPDUType.connectInd.rawValue) {
                connectRequests += 1
                if let pdu = frame.advertising, case .connectRequest(_, _, let data) = pdu.body {
                    follow(Self.key(data.accessAddress, frame.interface), requested: true, time: 0)
                }
            }
            return
        }
        if frame.crc == .bad {
            crcErrors += 1
            return
        }
        if frame.packet.pduClass == .isochronous {
            isochronousPDUs += 1
            return
        }
        if frame.isRetransmission {
            retransmissions += 1
            if !frame.isEncrypted { countRetransmitted(pdu) }
            return
        }
        dataPDUs += 1
        let aa = frame.packet.accessAddress
        if aa != lastAccessAddress, dataAccessAddresses.count < Self.maximumAccessAddresses {
            dataAccessAddresses.insert(aa)
            lastAccessAddress = aa
        }
        guard let header = LLDataHeader(pdu) else { return }
        let key = Self.key(aa, frame.interface)
        if key != lastFollowed {
            if connectionState[key] == Self.followed {
                lastFollowed = key
            } else {
                follow(key, requested: false, time: frame.packet.eventCounter.map(Int64.init) ?? Self.noEventCounter,
                       established: header.sn != 0 || header.nesn != 0 || frame.direction == .peripheralToCentral)
            }
        }
        if header.isEmpty {
            emptyPDUs += 1
            return
        }
        let first = pdu.count > header.size ? Int(pdu[header.size]) : nil
        if frame.isEncrypted {
            encryptedPDUs += 1
            if header.llid == .control, let first { encryptedControlFirstByte[first] += 1 }
        } else if header.llid == .control, let first {
            control[first] += 1
            if first == LLControlOpcode.terminateInd.rawValue, pdu.count > header.size + 1 {
                terminations[Int(pdu[header.size + 1])] += 1
            }
        }
    }

    /// A CONNECT_IND (`requested`) or a data PDU on access address and interface `key`; `time` tells events apart for a link
    /// without a request (the sniffer's event counter, or `noEventCounter`: then two PDUs are enough).
    @inline(never)
    mutating func follow(_ key: UInt64, requested: Bool, time: Int64, established: Bool = false) {
        if requested {
            if key == lastFollowed { lastFollowed = nil }
            if connectionState.count < Self.maximumAccessAddresses || connectionState[key] != nil {
                connectionState[key] = Self.requested
            }
            return
        }
        switch connectionState[key] {
        case Self.requested?:
            guard established else { return }
            connectionState[key] = Self.followed
            connectionsFollowed += 1
        case let first? where first != time || time == Self.noEventCounter:
            connectionState[key] = Self.followed
            connectionsFollowed += 1
        case nil where connectionState.count < Self.maximumAccessAddresses:
            connectionState[key] = time
        default:
            break
        }
    }
}
