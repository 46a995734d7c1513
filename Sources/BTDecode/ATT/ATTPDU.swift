import BTWire

/// One ATT PDU (Core Vol 3 Part F §3.4; FORMATS.md §7), decoded in place.
///
/// Every value and list is a slice **borrowed** from the bytes passed to `init(_:)`: decoding copies nothing and
/// allocates nothing, so it can run on every frame of a large capture. The PDU is valid only as long as those
/// bytes are; copy out what you keep.
///
/// Decoding never traps. A PDU shorter than its opcode's fixed layout becomes `.malformed`; an opcode this
/// decoder does not know becomes `.unknown` with its parameters. Bytes after a fixed layout are tolerated, and a
/// partial entry at the end of a list is left in the list's `trailingBytes`, so the complete entries before it
/// are still usable (btmon and Wireshark also show what they can).
public enum ATTPDU {
    /// 0x01: the request `requestOpcode` for `handle` failed with `error`.
    case errorResponse(requestOpcode: ATTOpcode, handle: UInt16, error: ATTErrorCode)
    /// 0x02: the client's receive MTU.
    case exchangeMTURequest(clientRxMTU: UInt16)
    /// 0x03: the server's receive MTU.
    case exchangeMTUResponse(serverRxMTU: UInt16)
    /// 0x04: discover the descriptors (handle, type) in a range.
    case findInformationRequest(startHandle: UInt16, endHandle: UInt16)
    /// 0x05: (handle, UUID) pairs, all 16-bit (format 1) or all 128-bit (format 2).
    case findInformationResponse(informationData: InformationData)
    /// 0x06: find attributes of a 16-bit type with exactly this value (GATT: a primary service by UUID).
    case findByTypeValueRequest(startHandle: UInt16, endHandle: UInt16, attributeType: BluetoothUUID,
                                attributeValue: UnsafeRawBufferPointer)
    /// 0x07: (found handle, group end handle) pairs.
    case findByTypeValueResponse(handlesInformation: HandlesInformationList)
    /// 0x08: read the values of every attribute of a type in a range (GATT: characteristics, includes).
    case readByTypeRequest(startHandle: UInt16, endHandle: UInt16, attributeType: BluetoothUUID)
    /// 0x09: (handle, value) entries of one length.
    case readByTypeResponse(attributeData: AttributeDataList)
    /// 0x0A
    case readRequest(handle: UInt16)
    /// 0x0B: the value, up to MTU−1 bytes.
    case readResponse(value: UnsafeRawBufferPointer)
    /// 0x0C: read a long value from `offset`.
    case readBlobRequest(handle: UInt16, offset: UInt16)
    /// 0x0D
    case readBlobResponse(partValue: UnsafeRawBufferPointer)
    /// 0x0E: two or more handles whose values have known, fixed lengths.
    case readMultipleRequest(handles: UInt16List)
    /// 0x0F: the values concatenated with no lengths; only the request says how to split them.
    case readMultipleResponse(values: UnsafeRawBufferPointer)
    /// 0x10: read the groups of a grouping type in a range (GATT: all primary services).
    case readByGroupTypeRequest(startHandle: UInt16, endHandle: UInt16, groupType: BluetoothUUID)
    /// 0x11: (handle, end group handle, value) entries of one length.
    case readByGroupTypeResponse(attributeData: AttributeGroupDataList)
    /// 0x12
    case writeRequest(handle: UInt16, value: UnsafeRawBufferPointer)
    /// 0x13
    case writeResponse
    /// 0x16: queue part of a long write.
    case prepareWriteRequest(handle: UInt16, offset: UInt16, partValue: UnsafeRawBufferPointer)
    /// 0x17: echoes the request so the client can check it.
    case prepareWriteResponse(handle: UInt16, offset: UInt16, partValue: UnsafeRawBufferPointer)
    /// 0x18: 0 cancels the queued writes, 1 writes them.
    case executeWriteRequest(flags: UInt8)
    /// 0x19
    case executeWriteResponse
    /// 0x1B: unacknowledged server → client value.
    case handleValueNotification(handle: UInt16, value: UnsafeRawBufferPointer)
    /// 0x1D: acknowledged server → client value (answered by 0x1E).
    case handleValueIndication(handle: UInt16, value: UnsafeRawBufferPointer)
    /// 0x1E
    case handleValueConfirmation
    /// 0x20: handles whose values come back with their lengths.
    case readMultipleVariableRequest(handles: UInt16List)
    /// 0x21: (length, value) tuples.
    case readMultipleVariableResponse(tuples: LengthValueTupleList)
    /// 0x23: (handle, length, value) tuples in one unacknowledged PDU.
    case multipleHandleValueNotification(tuples: HandleLengthValueTupleList)
    /// 0x52: write without response.
    case writeCommand(handle: UInt16, value: UnsafeRawBufferPointer)
    /// 0xD2: write without response followed by a 12-byte authentication signature.
    case signedWriteCommand(handle: UInt16, value: UnsafeRawBufferPointer, signature: UnsafeRawBufferPointer)
    /// An opcode this decoder does not know; `parameters` are the bytes after the opcode.
    case unknown(opcode: ATTOpcode, parameters: UnsafeRawBufferPointer)
    /// The PDU is too short for its opcode's layout, or a field has an impossible value.
    /// `reason` is a literal, which keeps the enum free of references: nothing to release per PDU.
    case malformed(opcode: ATTOpcode, reason: StaticString)

    /// Length of the Signed Write Command's authentication signature.
    public static let signatureLength = 12

    /// Decodes one ATT PDU (opcode first). Never traps; empty input is `.malformed` with opcode 0x00.
    public init(_ bytes: UnsafeRawBufferPointer) {
        var reader = ByteReader(bytes)
        guard let raw = reader.readU8() else {
            self = .malformed(opcode: ATTOpcode(rawValue: 0), reason: "empty PDU")
            return
        }
        let opcode = ATTOpcode(rawValue: raw)
        self = Self.decodeParameters(opcode, &reader) ?? .malformed(opcode: opcode, reason: "too short")
    }

    /// Decodes the parameters after the opcode; nil when they are shorter than the opcode's fixed layout.
    private static func decodeParameters(_ opcode: ATTOpcode, _ r: inout ByteReader) -> ATTPDU? {
        switch opcode.rawValue {
        case 0x01:
            guard let request = r.readU8(), let handle = r.readU16(), let error = r.readU8() else { return nil }
            return .errorResponse(requestOpcode: ATTOpcode(rawValue: request), handle: handle,
                                  error: ATTErrorCode(rawValue: error))
        case 0x02:
            guard let mtu = r.readU16() else { return nil }
            return .exchangeMTURequest(clientRxMTU: mtu)
        case 0x03:
            guard let mtu = r.readU16() else { return nil }
            return .exchangeMTUResponse(serverRxMTU: mtu)
        case 0x04:
            guard let start = r.readU16(), let end = r.readU16() else { return nil }
            return .findInformationRequest(startHandle: start, endHandle: end)
        case 0x05:
            guard let format = r.readU8() else { return nil }
            guard format == 1 || format == 2 else {
                return .malformed(opcode: opcode, reason: "format must be 1 (16-bit) or 2 (128-bit)")
            }
            return .findInformationResponse(informationData: InformationData(format: format, bytes: r.readRest()))
        case 0x06:
            guard let start = r.readU16(), let end = r.readU16(), let type = r.readU16() else { return nil }
            return .findByTypeValueRequest(startHandle: start, endHandle: end,
                                           attributeType: BluetoothUUID(uuid16: type), attributeValue: r.readRest())
        case 0x07:
            return .findByTypeValueResponse(handlesInformation: HandlesInformationList(r.readRest()))
        case 0x08, 0x10:
            guard let start = r.readU16(), let end = r.readU16() else { return nil }
            guard let type = BluetoothUUID(littleEndianBytes: r.rest), r.remaining == 2 || r.remaining == 16 else {
                return .malformed(opcode: opcode, reason: "attribute type must be a 16- or 128-bit UUID")
            }
            return opcode.rawValue == 0x08
                ? .readByTypeRequest(startHandle: start, endHandle: end, attributeType: type)
                : .readByGroupTypeRequest(startHandle: start, endHandle: end, groupType: type)
        case 0x09:
            guard let length = r.readU8() else { return nil }
            guard length >= AttributeDataList.minimumLength else {
                return .malformed(opcode: opcode, reason: "entry length shorter than a handle")
            }
            return .readByTypeResponse(attributeData: AttributeDataList(length: length, bytes: r.readRest()))
        case 0x0A:
            guard let handle = r.readU16() else { return nil }
            return .readRequest(handle: handle)
        case 0x0B:
            return .readResponse(value: r.readRest())
        case 0x0C:
            guard let handle = r.readU16(), let offset = r.readU16() else { return nil }
            return .readBlobRequest(handle: handle, offset: offset)
        case 0x0D:
            return .readBlobResponse(partValue: r.readRest())
        case 0x0E:
            return .readMultipleRequest(handles: UInt16List(r.readRest()))
        case 0x0F:
            return .readMultipleResponse(values: r.readRest())
        case 0x11:
            guard let length = r.readU8() else { return nil }
            guard length >= AttributeGroupDataList.minimumLength else {
                return .malformed(opcode: opcode, reason: "entry length shorter than two handles")
            }
            return .readByGroupTypeResponse(attributeData: AttributeGroupDataList(length: length, bytes: r.readRest()))
        case 0x12:
            guard let handle = r.readU16() else { return nil }
            return .writeRequest(handle: handle, value: r.readRest())
        case 0x13:
            return .writeResponse
        case 0x16, 0x17:
            guard let handle = r.readU16(), let offset = r.readU16() else { return nil }
            let part = r.readRest()
            return opcode.rawValue == 0x16
                ? .prepareWriteRequest(handle: handle, offset: offset, partValue: part)
                : .prepareWriteResponse(handle: handle, offset: offset, partValue: part)
        case 0x18:
            guard let flags = r.readU8() else { return nil }
            return .executeWriteRequest(flags: flags)
        case 0x19:
            return .executeWriteResponse
        case 0x1B:
            guard let handle = r.readU16() else { return nil }
            return .handleValueNotification(handle: handle, value: r.readRest())
        case 0x1D:
            guard let handle = r.readU16() else { return nil }
            return .handleValueIndication(handle: handle, value: r.readRest())
        case 0x1E:
            return .handleValueConfirmation
        case 0x20:
            return .readMultipleVariableRequest(handles: UInt16List(r.readRest()))
        case 0x21:
            return .readMultipleVariableResponse(tuples: LengthValueTupleList(r.readRest()))
        case 0x23:
            return .multipleHandleValueNotification(tuples: HandleLengthValueTupleList(r.readRest()))
        case 0x52:
            guard let handle = r.readU16() else { return nil }
            return .writeCommand(handle: handle, value: r.readRest())
        case 0xD2:
            guard let handle = r.readU16(), r.remaining >= signatureLength,
                let value = r.readBytes(r.remaining - signatureLength), let signature = r.readBytes(signatureLength)
            else { return nil }
            return .signedWriteCommand(handle: handle, value: value, signature: signature)
        default:
            return .unknown(opcode: opcode, parameters: r.readRest())
        }
    }

    /// The PDU's opcode (for `.malformed` and `.unknown`, the one on the wire).
    public var opcode: ATTOpcode {
        switch self {
        case .errorResponse: .errorResponse
        case .exchangeMTURequest: .exchangeMTURequest
        case .exchangeMTUResponse: .exchangeMTUResponse
        case .findInformationRequest: .findInformationRequest
        case .findInformationResponse: .findInformationResponse
        case .findByTypeValueRequest: .findByTypeValueRequest
        case .findByTypeValueResponse: .findByTypeValueResponse
        case .readByTypeRequest: .readByTypeRequest
        case .readByTypeResponse: .readByTypeResponse
        case .readRequest: .readRequest
        case .readResponse: .readResponse
        case .readBlobRequest: .readBlobRequest
        case .readBlobResponse: .readBlobResponse
        case .readMultipleRequest: .readMultipleRequest
        case .readMultipleResponse: .readMultipleResponse
        case .readByGroupTypeRequest: .readByGroupTypeRequest
        case .readByGroupTypeResponse: .readByGroupTypeResponse
        case .writeRequest: .writeRequest
        case .writeResponse: .writeResponse
        case .prepareWriteRequest: .prepareWriteRequest
        case .prepareWriteResponse: .prepareWriteResponse
        case .executeWriteRequest: .executeWriteRequest
        case .executeWriteResponse: .executeWriteResponse
        case .handleValueNotification: .handleValueNotification
        case .handleValueIndication: .handleValueIndication
        case .handleValueConfirmation: .handleValueConfirmation
        case .readMultipleVariableRequest: .readMultipleVariableRequest
        case .readMultipleVariableResponse: .readMultipleVariableResponse
        case .multipleHandleValueNotification: .multipleHandleValueNotification
        case .writeCommand: .writeCommand
        case .signedWriteCommand: .signedWriteCommand
        case .unknown(let opcode, _), .malformed(let opcode, _): opcode
        }
    }

    /// The one attribute handle this PDU concerns, when it has exactly one: the handle of a read, write,
    /// prepared write, notification or indication, or the handle an Error Response names. Range requests,
    /// lists and responses that carry no handle give nil.
    public var attributeHandle: UInt16? {
        switch self {
        case .errorResponse(_, let handle, _), .readRequest(let handle), .readBlobRequest(let handle, _),
            .writeRequest(let handle, _), .prepareWriteRequest(let handle, _, _),
            .prepareWriteResponse(let handle, _, _), .handleValueNotification(let handle, _),
            .handleValueIndication(let handle, _), .writeCommand(let handle, _), .signedWriteCommand(let handle, _, _):
            handle
        default:
            nil
        }
    }

    /// The attribute value this PDU carries, when it carries exactly one (reads, writes, notifications).
    public var attributeValue: UnsafeRawBufferPointer? {
        switch self {
        case .readResponse(let value), .readBlobResponse(let value), .writeRequest(_, let value),
            .prepareWriteRequest(_, _, let value), .prepareWriteResponse(_, _, let value),
            .handleValueNotification(_, let value), .handleValueIndication(_, let value),
            .writeCommand(_, let value), .signedWriteCommand(_, let value, _):
            value
        default:
            nil
        }
    }

    public var isMalformed: Bool {
        if case .malformed = self { return true }
        return false
    }
}
