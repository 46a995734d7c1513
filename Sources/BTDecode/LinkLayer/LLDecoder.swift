import BTWire
import BTCapture

extension CaptureIssue.Code {
    /// An air-sniffer record whose container or LL packet could not be read.
    public static let linkLayerRecord = CaptureIssue.Code(rawValue: "ll.record")
}

/// Decodes air-sniffer records (`.linkLayer`) into `LLFrame`s, keeping per access address what the following
/// PDUs need: the CRCInit and parameters from the CONNECT_IND, the last accepted SN and payload per direction
/// (retransmissions), whether LL_START_ENC made the link encrypted, the event timing that infers a direction,
/// and L2CAP reassembly over LL fragments (the HCI path's `L2CAPDecoder`, one handle per access address).
///
/// Memory: at most `maximumLinks` access addresses, the least recently used forgotten first.
/// Where the decoder leaves the link-layer packet of the record it decoded last (`DecodedFrame.linkLayer`).
final class LLFrameSlot {
    /// Decoded in place: the containers fill `current.packet`, the decoder the rest.
    @exclusivity(unchecked) var current = LLFrame(packet: .none)
    var frame: LLFrame? { current }
}

/// A class: the packet decoder calls it out of line, and a struct mutated there would make the decoder check its
/// own tables' uniqueness again at every record.
public final class LLDecoder {
    /// The last decoded packet, lent to `DecodedFrame` until the next record.
    let slot = LLFrameSlot()
    /// Access addresses followed at once; fuzzed captures and promiscuous sniffers invent many.
    public static let maximumLinks = 64
    /// A gap longer than this between two packets on one access address starts a new connection event: the
    /// interval is at least 7.5 ms, the longest PDU plus T_IFS about 2.3 ms (LINKLAYER.md §3).
    public static let eventGapNanoseconds: Int64 = 3_000_000
    /// The controller number given to the L2CAP decoder: air links are not any controller's.
    static let controller: UInt16 = 0

    final class Link {
        @exclusivity(unchecked) var accessAddress: UInt32 = 0
        /// The capture interface (pcapng) the link was heard on: two sniffers are two radios.
        @exclusivity(unchecked) var interface: UInt16 = 0
        @exclusivity(unchecked) var handle: UInt16 = 0
        @exclusivity(unchecked) var lastUse = 0
        @exclusivity(unchecked) var connection: LLConnectionRequestData?
        /// Per direction (C→P, P→C): the last accepted PDU's SN and payload hash, and whether the other side
        /// has acknowledged it since.
        @exclusivity(unchecked) var central = Sender()
        @exclusivity(unchecked) var peripheral = Sender()
        /// Plaintext LL_START_ENC_REQ seen: later non-empty PDUs are ciphertext.
        @exclusivity(unchecked) var encrypted = false
        /// Event timing for direction inference.
        @exclusivity(unchecked) var lastTime: Int64 = 0
        @exclusivity(unchecked) var lastChannel: UInt8?
        @exclusivity(unchecked) var lastDirection: LLDirection = .unknown

        func reset(accessAddress: UInt32, interface: UInt16) {
            self.accessAddress = accessAddress
            self.interface = interface
            connection = nil
            central = Sender()
            peripheral = Sender()
            encrypted = false
            lastTime = 0
            lastChannel = nil
            lastDirection = .unknown
        }
    }

    /// What one side sent last, for telling resends from new PDUs [Core Vol 6 Part B §4.5.9].
    struct Sender {
        enum Acknowledgement { case unknown, acknowledged, notAcknowledged }
        var sn: UInt8?
        var hash: UInt64 = 0
        var acknowledgement = Acknowledgement.unknown

        /// Takes `sn` and `hash` as this side's latest PDU; true when it resends the previous one: same SN and
        /// payload, and the peer has not acknowledged that one since. A peer's NESN that did acknowledge it
        /// means packets were missed in between (empty PDUs look alike).
        mutating func accept(sn: UInt8, hash: UInt64) -> Bool {
            let resent = self.sn == sn && self.hash == hash && acknowledgement != .acknowledged
            self.sn = sn
            self.hash = hash
            acknowledgement = .unknown
            return resent
        }

        /// The peer sent `nesn`: it acknowledges our last PDU when it differs from that PDU's SN. An
        /// acknowledgement stands: a later NESN equal to the SN acknowledges a PDU the sniffer missed.
        mutating func peer(nesn: UInt8) {
            guard let sn else { return }
            if nesn != sn {
                acknowledgement = .acknowledged
            } else if acknowledgement == .unknown {
                acknowledgement = .notAcknowledged
            }
        }
    }

    @exclusivity(unchecked) var links: [Link] = []
    /// `interface << 32 | accessAddress` of `links[i]`: the search reads this array, not every link's object.
    @exclusivity(unchecked) var linkKeys: [UInt64] = []
    /// Each interface's sniffer clock (pcapng interfaces are separate sniffers, each with its own clock), for
    /// timing packets within a link: interface 0's (nearly every capture has only it) apart, the others' in
    /// `otherClocks` by interface − 1; interfaces past `maximumClocks` share the last.
    @exclusivity(unchecked) var snifferClock = SnifferClock()
    @exclusivity(unchecked) var otherClocks: [SnifferClock] = []
    static let maximumClocks = 16
    /// The link of the previous data packet: a capture mostly follows one connection.
    @exclusivity(unchecked) var lastLink: Link?
    @exclusivity(unchecked) var clock = 0
    @exclusivity(unchecked) public private(set) var l2cap = L2CAPDecoder()

    public init() {}

    /// Decodes one `.linkLayer` record into `frame.linkLayer`, and `frame.l2cap` when its data PDU completed an
    /// L2CAP PDU (plaintext, CRC not bad, not a retransmission). A container that cannot be read is reported
    /// and leaves `frame.linkLayer` nil.
    public func decode(_ record: CaptureRecord, issues: IssueLog, into decoded: inout DecodedFrame) {
        // BR/EDR baseband and user linktypes are air captures too, but not of the LE link layer.
        guard Linktype.isLELinkLayer(Int(record.sourceType)) else { return }
        slot.current.packet = .none
        if let error = LLContainer.unwrap(linktype: Int(record.sourceType), record.payload,
                                          originalLength: record.originalLength, into: &slot.current.packet) {
            issues.report(.linkLayerRecord, record: record.number, offset: record.offset, error.message)
            return
        }
        slot.current.start()
        slot.current.interface = record.controller
        let captureNanoseconds = record.timestamp.nanoseconds
        if record.controller == 0 {
            slot.current.nanoseconds = snifferClock.nanoseconds(slot.current.packet, captureNanoseconds: captureNanoseconds)
        } else {
            slot.current.nanoseconds = otherClockNanoseconds(interface: record.controller, captureNanoseconds: captureNanoseconds)
        }
        if slot.current.packet.isAdvertising {
            advertising(&slot.current, interface: record.controller)
        } else if slot.current.packet.pduClass != .isochronous {
            decoded.l2cap = dataChannel(&slot.current, record: record, issues: issues)
        }
        decoded.linkLayerSlot = Unmanaged.passUnretained(slot)
    }

    @inline(never)
    func otherClockNanoseconds(interface: UInt16, captureNanoseconds: Int64) -> Int64 {
        let index = min(Int(interface), Self.maximumClocks - 1) - 1
        while otherClocks.count <= index { otherClocks.append(SnifferClock()) }
        return otherClocks[index].nanoseconds(slot.current.packet, captureNanoseconds: captureNanoseconds)
    }

    func advertising(_ frame: inout LLFrame, interface: UInt16) {
        // The packet's fields are read where they are: a copy of the whole packet costs more than its use.
        if frame.crc == .unchecked, let stored = frame.packet.storedCRC,
           frame.packet.accessAddress == LLCapturedPacket.advertisingAccessAddress {
            frame.crc = LLCRC.compute(frame.packet.pdu, initialValue: LLCRC.advertisingInitialValue) == stored ? .good : .bad
        }
        guard frame.crc != .bad, frame.packet.pdu.count >= 2,
              LLAdvertisingPDUType(rawValue: frame.packet.pdu[0] & LLAdvertisingPDU.typeMask) == .connectInd,
              let pdu = LLAdvertisingPDU(frame.packet.pdu), case .connectRequest(_, _, let data) = pdu.body
        else { return }
        // A new CONNECT_IND for an access address starts that connection afresh (the psoc6 sample sends 52
        // with one address).
        let link = self.link(data.accessAddress, interface: interface)
        l2cap.linkClosed(controller: Self.controller, handle: link.handle)
        link.reset(accessAddress: data.accessAddress, interface: interface)
        link.connection = data
    }

    func dataChannel(_ frame: inout LLFrame, record: CaptureRecord, issues: IssueLog) -> L2CAPPDU? {
        let link = self.link(frame.packet.accessAddress, interface: record.controller)
        frame.connectionKnown = link.connection != nil
        if frame.crc == .unchecked, let stored = frame.packet.storedCRC, let connection = link.connection {
            frame.crc = LLCRC.compute(frame.packet.pdu, initialValue: connection.crcInit) == stored ? .good : .bad
        }
        let time = frame.nanoseconds
        if frame.direction == .unknown {
            // Each connection event starts with the central; the sides then alternate.
            let newEvent = link.lastDirection == .unknown || time - link.lastTime > Self.eventGapNanoseconds
                || (frame.packet.channel != nil && frame.packet.channel != link.lastChannel)
            frame.direction = newEvent ? .centralToPeripheral : link.lastDirection.opposite
            frame.directionInferred = true
        }
        link.lastTime = time
        link.lastChannel = frame.packet.channel
        link.lastDirection = frame.direction
        // A bad CRC may have corrupted LLID, SN and Length: such a packet counts for RF statistics only.
        guard frame.crc != .bad, let pdu = LLDataPDU(frame.packet.pdu) else { return nil }

        let hash = Self.hash(frame.packet.pdu, header: pdu.header)
        switch frame.direction {
        case .centralToPeripheral:
            frame.isRetransmission = link.central.accept(sn: pdu.header.sn, hash: hash)
            link.peripheral.peer(nesn: pdu.header.nesn)
        case .peripheralToCentral:
            frame.isRetransmission = link.peripheral.accept(sn: pdu.header.sn, hash: hash)
            link.central.peer(nesn: pdu.header.nesn)
        case .unknown:
            break
        }
        switch frame.packet.encryption {
        case .encrypted: frame.isEncrypted = !pdu.header.isEmpty
        case .decrypted, .plaintext: frame.isEncrypted = false
        case .unknown: frame.isEncrypted = link.encrypted && !pdu.header.isEmpty
        }
        guard !frame.isRetransmission, !frame.isEncrypted, !pdu.header.isEmpty else { return nil }

        switch pdu.header.llid {
        case .control:
            // The peripheral sends LL_START_ENC_REQ in plaintext; everything after it is encrypted, starting
            // with the central's LL_START_ENC_RSP [Core Vol 6 Part B §5.1.3.1].
            if frame.packet.encryption == .unknown, pdu.payload.first == LLControlOpcode.startEncReq.rawValue {
                link.encrypted = true
            }
        case .start, .continuation:
            let acl = ACLPacket(handle: link.handle,
                                packetBoundary: pdu.header.llid == .start ? .firstFlushable : .continuation,
                                broadcast: 0, declaredLength: pdu.payload.count, data: pdu.payload)
            var hci = record
            hci.controller = Self.controller
            // The reassembler skips a record cut short; what counts is whether this packet is whole.
            hci.originalLength = frame.packet.isCutShort ? hci.payload.count + 1 : hci.payload.count
            // The reassembler keeps a message per direction: C→P takes the `sent` slot, P→C `received`.
            hci.direction = switch frame.direction {
            case .centralToPeripheral: .sent
            case .peripheralToCentral: .received
            case .unknown: .unknown
            }
            return l2cap.decode(acl, record: hci, issues: issues)
        default:
            break
        }
        return nil
    }

    /// A hash of LLID, Length and payload: what must repeat for a same-SN PDU to be a retransmission. Only ever
    /// compared with the previous PDU's, in memory; eight bytes at a time (a byte-wise FNV-1a was 4 % of `stats`).
    static func hash(_ pdu: UnsafeRawBufferPointer, header: LLDataHeader) -> UInt64 {
        let multiplier: UInt64 = 0x9E37_79B9_7F4A_7C15  // 2^64 / golden ratio, odd: multiplication mixes
        var h = (UInt64(header.llid.rawValue) << 8 | UInt64(header.length)) &* multiplier
        var i = header.size
        let end = pdu.count
        while end - i >= 8 {
            h = (h ^ pdu.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &* multiplier
            h ^= h >> 29
            i += 8
        }
        var tail: UInt64 = 0
        var shift: UInt64 = 0
        while i < end {
            tail |= UInt64(pdu[i]) << shift
            shift += 8
            i += 1
        }
        h = (h ^ tail ^ shift << 56) &* multiplier
        return h ^ h >> 29
    }

    /// The state of `accessAddress` on `interface`, created (or taken from the least recently used) when missing.
    /// The link of the previous packet is checked inline: a capture mostly follows one link at a time.
    @inline(__always)
    func link(_ accessAddress: UInt32, interface: UInt16) -> Link {
        clock += 1
        if let last = lastLink, last.accessAddress == accessAddress, last.interface == interface {
            last.lastUse = clock
            return last
        }
        return findLink(accessAddress, interface: interface)
    }

    @inline(never)
    func findLink(_ accessAddress: UInt32, interface: UInt16) -> Link {
        let key = UInt64(interface) << 32 | UInt64(accessAddress)
        if let i = linkKeys.firstIndex(of: key) {
            let link = links[i]
            lastLink = link
            link.lastUse = clock
            return link
        }
        let link: Link
        if links.count < Self.maximumLinks {
            link = Link()
            link.handle = UInt16(links.count)
            links.append(link)
            linkKeys.append(key)
        } else {
            var oldest = 0
            for i in links.indices where links[i].lastUse < links[oldest].lastUse { oldest = i }
            link = links[oldest]
            linkKeys[oldest] = key
            l2cap.linkClosed(controller: Self.controller, handle: link.handle)
        }
        link.reset(accessAddress: accessAddress, interface: interface)
        link.lastUse = clock
        lastLink = link
        return link
    }
}
