import BTWire

/// ATT PDUs (Core Vol 3 Part F §3.4), each as the bytes of an L2CAP payload on CID 4.
public enum ATTPDU {
    public static let defaultMTU = 23

    public static func errorResponse(request: ATTOpcode, handle: UInt16, error: ATTErrorCode) -> [UInt8] {
        ByteWriter.build { w in
            w.u8(ATTOpcode.errorResponse.rawValue)
            w.u8(request.rawValue)
            w.u16(handle)
            w.u8(error.rawValue)
        }
    }

    public static func exchangeMTURequest(_ mtu: UInt16) -> [UInt8] { opcodeAnd16(.exchangeMTURequest, mtu) }
    public static func exchangeMTUResponse(_ mtu: UInt16) -> [UInt8] { opcodeAnd16(.exchangeMTUResponse, mtu) }

    public static func findInformationRequest(start: UInt16, end: UInt16) -> [UInt8] {
        range(.findInformationRequest, start, end)
    }

    public static func findByTypeValueRequest(start: UInt16, end: UInt16, type: UInt16, value: [UInt8]) -> [UInt8] {
        ByteWriter.build { w in
            w.u8(ATTOpcode.findByTypeValueRequest.rawValue)
            w.u16(start)
            w.u16(end)
            w.u16(type)
            w.append(value)
        }
    }

    public static func readByTypeRequest(start: UInt16, end: UInt16, type: BluetoothUUID) -> [UInt8] {
        ByteWriter.build { w in
            w.u8(ATTOpcode.readByTypeRequest.rawValue)
            w.u16(start)
            w.u16(end)
            w.uuid(type)
        }
    }

    public static func readByGroupTypeRequest(start: UInt16, end: UInt16, type: BluetoothUUID) -> [UInt8] {
        ByteWriter.build { w in
            w.u8(ATTOpcode.readByGroupTypeRequest.rawValue)
            w.u16(start)
            w.u16(end)
            w.uuid(type)
        }
    }

    public static func readRequest(handle: UInt16) -> [UInt8] { opcodeAnd16(.readRequest, handle) }

    public static func readBlobRequest(handle: UInt16, offset: UInt16) -> [UInt8] {
        range(.readBlobRequest, handle, offset)
    }

    public static func writeRequest(handle: UInt16, value: [UInt8]) -> [UInt8] {
        handleValue(.writeRequest, handle, value)
    }

    public static let writeResponse: [UInt8] = [ATTOpcode.writeResponse.rawValue]

    public static func writeCommand(handle: UInt16, value: [UInt8]) -> [UInt8] {
        handleValue(.writeCommand, handle, value)
    }

    public static func prepareWriteRequest(handle: UInt16, offset: UInt16, part: ArraySlice<UInt8>) -> [UInt8] {
        ByteWriter.build { w in
            w.u8(ATTOpcode.prepareWriteRequest.rawValue)
            w.u16(handle)
            w.u16(offset)
            w.append(part)
        }
    }

    /// Execute Write Request flags: 0 cancel, 1 write.
    public static let executeWriteCancel: UInt8 = 0x00
    public static let executeWriteCommit: UInt8 = 0x01

    public static func executeWriteRequest(commit: Bool) -> [UInt8] {
        [ATTOpcode.executeWriteRequest.rawValue, commit ? executeWriteCommit : executeWriteCancel]
    }

    public static let executeWriteResponse: [UInt8] = [ATTOpcode.executeWriteResponse.rawValue]

    public static func notification(handle: UInt16, value: [UInt8]) -> [UInt8] {
        handleValue(.handleValueNotification, handle, value)
    }

    public static func indication(handle: UInt16, value: [UInt8]) -> [UInt8] {
        handleValue(.handleValueIndication, handle, value)
    }

    public static let confirmation: [UInt8] = [ATTOpcode.handleValueConfirmation.rawValue]

    /// CCCD values: notifications, indications, off.
    public static let cccdNotify: [UInt8] = [0x01, 0x00]
    public static let cccdIndicate: [UInt8] = [0x02, 0x00]
    public static let cccdOff: [UInt8] = [0x00, 0x00]

    static func opcodeAnd16(_ op: ATTOpcode, _ v: UInt16) -> [UInt8] {
        [op.rawValue, UInt8(truncatingIfNeeded: v), UInt8(truncatingIfNeeded: v >> 8)]
    }

    static func range(_ op: ATTOpcode, _ a: UInt16, _ b: UInt16) -> [UInt8] {
        ByteWriter.build { w in
            w.u8(op.rawValue)
            w.u16(a)
            w.u16(b)
        }
    }

    static func handleValue(_ op: ATTOpcode, _ handle: UInt16, _ value: [UInt8]) -> [UInt8] {
        ByteWriter.build(capacity: 3 + value.count) { w in
            w.u8(op.rawValue)
            w.u16(handle)
            w.append(value)
        }
    }
}
