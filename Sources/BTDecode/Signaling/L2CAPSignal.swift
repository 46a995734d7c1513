import BTWire

/// One L2CAP signalling command (Core Vol 3 Part A §4; FORMATS.md §6): header `code u8, identifier u8,
/// length u16`, then `length` bytes of data.
///
/// The LE signalling channel (CID 0x0005) carries exactly one command per PDU: decode it with `init(_:)`. The
/// BR/EDR channel (CID 0x0001) may pack several: walk them with `L2CAPSignal.commands(in:)`.
///
/// Every value is borrowed from the input, so decoding copies and allocates nothing; the command is valid only
/// while those bytes are. Decoding never traps: a short header, a length running past the PDU or data shorter
/// than the code's layout become `.malformed`, an unknown code `.unknown`.
public struct L2CAPSignal {
    /// The command code (0x00 when the PDU is too short to hold one).
    public let code: L2CAPSignalCode
    /// Pairs a response with its request (responses echo the request's identifier); 0 is never valid.
    public let identifier: UInt8
    /// The length field: how many data bytes the header announces.
    public let length: UInt16
    /// The command's data bytes that are present (fewer than `length` when the command was cut short).
    public let data: UnsafeRawBufferPointer
    /// The decoded command.
    public let command: Command

    /// Size of the command header.
    public static let headerLength = 4

    /// A command's typed data. Field names follow the spec (Core Vol 3 Part A §4.1–4.27).
    public enum Command {
        /// 0x01: the peer rejected the command with this identifier. `data` is reason-specific (the MTU for
        /// 0x0001, the local and remote CIDs for 0x0002).
        case commandReject(reason: UInt16, data: UnsafeRawBufferPointer)
        /// 0x02 (BR/EDR): open a channel to `psm`.
        case connectionRequest(psm: L2CAPPSM, sourceCID: UInt16)
        /// 0x03 (BR/EDR)
        case connectionResponse(destinationCID: UInt16, sourceCID: UInt16, result: UInt16, status: UInt16)
        /// 0x04 (BR/EDR): `options` are the raw configuration options (MTU, flush timeout, QoS, …).
        case configurationRequest(destinationCID: UInt16, flags: UInt16, options: UnsafeRawBufferPointer)
        /// 0x05 (BR/EDR)
        case configurationResponse(sourceCID: UInt16, flags: UInt16, result: UInt16, options: UnsafeRawBufferPointer)
        /// 0x06
        case disconnectionRequest(destinationCID: UInt16, sourceCID: UInt16)
        /// 0x07
        case disconnectionResponse(destinationCID: UInt16, sourceCID: UInt16)
        /// 0x08 (BR/EDR)
        case echoRequest(data: UnsafeRawBufferPointer)
        /// 0x09 (BR/EDR)
        case echoResponse(data: UnsafeRawBufferPointer)
        /// 0x0A (BR/EDR): 1 connectionless MTU, 2 extended features, 3 fixed channels.
        case informationRequest(infoType: UInt16)
        /// 0x0B (BR/EDR): `data` is the MTU (type 1), the feature mask (2) or the fixed channel map (3).
        case informationResponse(infoType: UInt16, result: UInt16, data: UnsafeRawBufferPointer)
        /// 0x12 (LE, peripheral → central): HCI units, intervals ×1.25 ms, timeout ×10 ms, latency in events.
        case connectionParameterUpdateRequest(intervalMin: UInt16, intervalMax: UInt16, latency: UInt16, timeout: UInt16)
        /// 0x13 (LE): 0 accepted, 1 rejected.
        case connectionParameterUpdateResponse(result: UInt16)
        /// 0x14 (LE)
        case leCreditBasedConnectionRequest(spsm: L2CAPPSM, sourceCID: UInt16, mtu: UInt16, mps: UInt16,
                                            initialCredits: UInt16)
        /// 0x15 (LE)
        case leCreditBasedConnectionResponse(destinationCID: UInt16, mtu: UInt16, mps: UInt16, initialCredits: UInt16,
                                             result: UInt16)
        /// 0x16: `credits` more K-frames may be sent on `cid`.
        case flowControlCreditIndication(cid: UInt16, credits: UInt16)
        /// 0x17: open up to five channels at once (Enhanced ATT uses this).
        case creditBasedConnectionRequest(spsm: L2CAPPSM, mtu: UInt16, mps: UInt16, initialCredits: UInt16,
                                          sourceCIDs: UInt16List)
        /// 0x18: a destination CID per requested channel, 0 for each refused one.
        case creditBasedConnectionResponse(mtu: UInt16, mps: UInt16, initialCredits: UInt16, result: UInt16,
                                           destinationCIDs: UInt16List)
        /// 0x19
        case creditBasedReconfigureRequest(mtu: UInt16, mps: UInt16, destinationCIDs: UInt16List)
        /// 0x1A
        case creditBasedReconfigureResponse(result: UInt16)
        /// A code this decoder does not know (including AMP's create/move channel); `data` holds its bytes.
        case unknown(data: UnsafeRawBufferPointer)
        /// The header or the data is too short for the layout.
        case malformed(reason: String)
    }

    public init(code: L2CAPSignalCode, identifier: UInt8, length: UInt16, data: UnsafeRawBufferPointer,
                command: Command) {
        self.code = code
        self.identifier = identifier
        self.length = length
        self.data = data
        self.command = command
    }

    /// Decodes the first command in `bytes` (the whole PDU on the LE signalling channel). Never traps.
    public init(_ bytes: UnsafeRawBufferPointer) {
        var reader = ByteReader(bytes)
        self = Self.next(&reader)
    }

    /// The commands packed in a BR/EDR signalling PDU (CID 0x0001). Also fine for an LE PDU, which holds one.
    public static func commands(in bytes: UnsafeRawBufferPointer) -> Commands { Commands(bytes) }

    /// Reads the command at the reader's position and moves past it (to the end after a malformed one).
    static func next(_ r: inout ByteReader) -> L2CAPSignal {
        let empty = UnsafeRawBufferPointer(start: nil, count: 0)
        guard r.remaining >= headerLength, let code = r.readU8(), let identifier = r.readU8(), let length = r.readU16()
        else {
            let code = r.peek(UInt8.self) ?? 0
            let identifier = r.get(UInt8.self, at: r.position + 1) ?? 0
            r.position = r.bytes.count
            return L2CAPSignal(code: L2CAPSignalCode(rawValue: code), identifier: identifier, length: 0, data: empty,
                               command: .malformed(reason: "header too short"))
        }
        let signalCode = L2CAPSignalCode(rawValue: code)
        guard let data = r.readBytes(Int(length)) else {
            return L2CAPSignal(code: signalCode, identifier: identifier, length: length, data: r.readRest(),
                               command: .malformed(reason: "length runs past the end of the PDU"))
        }
        var d = ByteReader(data)
        let command = decodeData(signalCode, &d) ?? .malformed(reason: "too short")
        return L2CAPSignal(code: signalCode, identifier: identifier, length: length, data: data, command: command)
    }

    /// Decodes a command's data; nil when it is shorter than the code's fixed layout.
    private static func decodeData(_ code: L2CAPSignalCode, _ d: inout ByteReader) -> Command? {
        switch code.rawValue {
        case 0x01:
            guard let reason = d.readU16() else { return nil }
            return .commandReject(reason: reason, data: d.readRest())
        case 0x02:
            guard let psm = d.readU16(), let scid = d.readU16() else { return nil }
            return .connectionRequest(psm: L2CAPPSM(rawValue: psm), sourceCID: scid)
        case 0x03:
            guard let dcid = d.readU16(), let scid = d.readU16(), let result = d.readU16(), let status = d.readU16()
            else { return nil }
            return .connectionResponse(destinationCID: dcid, sourceCID: scid, result: result, status: status)
        case 0x04:
            guard let dcid = d.readU16(), let flags = d.readU16() else { return nil }
            return .configurationRequest(destinationCID: dcid, flags: flags, options: d.readRest())
        case 0x05:
            guard let scid = d.readU16(), let flags = d.readU16(), let result = d.readU16() else { return nil }
            return .configurationResponse(sourceCID: scid, flags: flags, result: result, options: d.readRest())
        case 0x06, 0x07:
            guard let dcid = d.readU16(), let scid = d.readU16() else { return nil }
            return code.rawValue == 0x06
                ? .disconnectionRequest(destinationCID: dcid, sourceCID: scid)
                : .disconnectionResponse(destinationCID: dcid, sourceCID: scid)
        case 0x08:
            return .echoRequest(data: d.readRest())
        case 0x09:
            return .echoResponse(data: d.readRest())
        case 0x0A:
            guard let type = d.readU16() else { return nil }
            return .informationRequest(infoType: type)
        case 0x0B:
            guard let type = d.readU16(), let result = d.readU16() else { return nil }
            return .informationResponse(infoType: type, result: result, data: d.readRest())
        case 0x12:
            guard let min = d.readU16(), let max = d.readU16(), let latency = d.readU16(), let timeout = d.readU16()
            else { return nil }
            return .connectionParameterUpdateRequest(intervalMin: min, intervalMax: max, latency: latency,
                                                     timeout: timeout)
        case 0x13:
            guard let result = d.readU16() else { return nil }
            return .connectionParameterUpdateResponse(result: result)
        case 0x14:
            guard let spsm = d.readU16(), let scid = d.readU16(), let mtu = d.readU16(), let mps = d.readU16(),
                let credits = d.readU16()
            else { return nil }
            return .leCreditBasedConnectionRequest(spsm: L2CAPPSM(rawValue: spsm), sourceCID: scid, mtu: mtu, mps: mps,
                                                   initialCredits: credits)
        case 0x15:
            guard let dcid = d.readU16(), let mtu = d.readU16(), let mps = d.readU16(), let credits = d.readU16(),
                let result = d.readU16()
            else { return nil }
            return .leCreditBasedConnectionResponse(destinationCID: dcid, mtu: mtu, mps: mps, initialCredits: credits,
                                                    result: result)
        case 0x16:
            guard let cid = d.readU16(), let credits = d.readU16() else { return nil }
            return .flowControlCreditIndication(cid: cid, credits: credits)
        case 0x17:
            guard let spsm = d.readU16(), let mtu = d.readU16(), let mps = d.readU16(), let credits = d.readU16()
            else { return nil }
            return .creditBasedConnectionRequest(spsm: L2CAPPSM(rawValue: spsm), mtu: mtu, mps: mps,
                                                 initialCredits: credits, sourceCIDs: UInt16List(d.readRest()))
        case 0x18:
            guard let mtu = d.readU16(), let mps = d.readU16(), let credits = d.readU16(), let result = d.readU16()
            else { return nil }
            return .creditBasedConnectionResponse(mtu: mtu, mps: mps, initialCredits: credits, result: result,
                                                  destinationCIDs: UInt16List(d.readRest()))
        case 0x19:
            guard let mtu = d.readU16(), let mps = d.readU16() else { return nil }
            return .creditBasedReconfigureRequest(mtu: mtu, mps: mps, destinationCIDs: UInt16List(d.readRest()))
        case 0x1A:
            guard let result = d.readU16() else { return nil }
            return .creditBasedReconfigureResponse(result: result)
        default:
            return .unknown(data: d.readRest())
        }
    }

    public var isMalformed: Bool {
        if case .malformed = command { return true }
        return false
    }

    /// The commands of one signalling PDU, read in place. After a malformed command (short header, or a length
    /// running past the PDU) iteration stops, since the next header's position is unknown.
    public struct Commands: Sequence {
        public let bytes: UnsafeRawBufferPointer
        public init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

        public struct Iterator: IteratorProtocol {
            var reader: ByteReader
            public mutating func next() -> L2CAPSignal? {
                guard !reader.isAtEnd else { return nil }
                return L2CAPSignal.next(&reader)
            }
        }

        public func makeIterator() -> Iterator { Iterator(reader: ByteReader(bytes)) }
    }
}
