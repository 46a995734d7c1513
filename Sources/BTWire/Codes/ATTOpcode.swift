/// ATT PDU opcodes (Core Vol 3 Part F §3.4.8). Bit 6 marks a command, bit 7 a signed PDU.
public struct ATTOpcode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }

    @inlinable public static var errorResponse: ATTOpcode { ATTOpcode(rawValue: 0x01) }
    @inlinable public static var exchangeMTURequest: ATTOpcode { ATTOpcode(rawValue: 0x02) }
    @inlinable public static var exchangeMTUResponse: ATTOpcode { ATTOpcode(rawValue: 0x03) }
    @inlinable public static var findInformationRequest: ATTOpcode { ATTOpcode(rawValue: 0x04) }
    @inlinable public static var findInformationResponse: ATTOpcode { ATTOpcode(rawValue: 0x05) }
    @inlinable public static var findByTypeValueRequest: ATTOpcode { ATTOpcode(rawValue: 0x06) }
    @inlinable public static var findByTypeValueResponse: ATTOpcode { ATTOpcode(rawValue: 0x07) }
    @inlinable public static var readByTypeRequest: ATTOpcode { ATTOpcode(rawValue: 0x08) }
    @inlinable public static var readByTypeResponse: ATTOpcode { ATTOpcode(rawValue: 0x09) }
    @inlinable public static var readRequest: ATTOpcode { ATTOpcode(rawValue: 0x0A) }
    @inlinable public static var readResponse: ATTOpcode { ATTOpcode(rawValue: 0x0B) }
    @inlinable public static var readBlobRequest: ATTOpcode { ATTOpcode(rawValue: 0x0C) }
    @inlinable public static var readBlobResponse: ATTOpcode { ATTOpcode(rawValue: 0x0D) }
    @inlinable public static var readMultipleRequest: ATTOpcode { ATTOpcode(rawValue: 0x0E) }
    @inlinable public static var readMultipleResponse: ATTOpcode { ATTOpcode(rawValue: 0x0F) }
    @inlinable public static var readByGroupTypeRequest: ATTOpcode { ATTOpcode(rawValue: 0x10) }
    @inlinable public static var readByGroupTypeResponse: ATTOpcode { ATTOpcode(rawValue: 0x11) }
    @inlinable public static var writeRequest: ATTOpcode { ATTOpcode(rawValue: 0x12) }
    @inlinable public static var writeResponse: ATTOpcode { ATTOpcode(rawValue: 0x13) }
    @inlinable public static var prepareWriteRequest: ATTOpcode { ATTOpcode(rawValue: 0x16) }
    @inlinable public static var prepareWriteResponse: ATTOpcode { ATTOpcode(rawValue: 0x17) }
    @inlinable public static var executeWriteRequest: ATTOpcode { ATTOpcode(rawValue: 0x18) }
    @inlinable public static var executeWriteResponse: ATTOpcode { ATTOpcode(rawValue: 0x19) }
    @inlinable public static var handleValueNotification: ATTOpcode { ATTOpcode(rawValue: 0x1B) }
    @inlinable public static var handleValueIndication: ATTOpcode { ATTOpcode(rawValue: 0x1D) }
    @inlinable public static var handleValueConfirmation: ATTOpcode { ATTOpcode(rawValue: 0x1E) }
    @inlinable public static var readMultipleVariableRequest: ATTOpcode { ATTOpcode(rawValue: 0x20) }
    @inlinable public static var readMultipleVariableResponse: ATTOpcode { ATTOpcode(rawValue: 0x21) }
    @inlinable public static var multipleHandleValueNotification: ATTOpcode { ATTOpcode(rawValue: 0x23) }
    @inlinable public static var writeCommand: ATTOpcode { ATTOpcode(rawValue: 0x52) }
    @inlinable public static var signedWriteCommand: ATTOpcode { ATTOpcode(rawValue: 0xD2) }

    public var isCommand: Bool { rawValue & 0x40 != 0 }
    public var isSigned: Bool { rawValue & 0x80 != 0 }

    /// Requests expect exactly one response: opcode + 1, or an Error Response naming them.
    public var isRequest: Bool {
        switch rawValue {
        case 0x02, 0x04, 0x06, 0x08, 0x0A, 0x0C, 0x0E, 0x10, 0x12, 0x16, 0x18, 0x20: true
        default: false
        }
    }

    /// Responses (including Error Response).
    public var isResponse: Bool {
        switch rawValue {
        case 0x01, 0x03, 0x05, 0x07, 0x09, 0x0B, 0x0D, 0x0F, 0x11, 0x13, 0x17, 0x19, 0x21: true
        default: false
        }
    }

    /// For a request, the opcode of its successful response.
    public var responseOpcode: ATTOpcode? { isRequest ? ATTOpcode(rawValue: rawValue + 1) : nil }

    public var name: String? { Self.names[rawValue] }
    public var description: String { name ?? "Unknown ATT " + Hex.u8(rawValue) }

    static let names: [UInt8: String] = [
        0x01: "Error Response", 0x02: "Exchange MTU Request", 0x03: "Exchange MTU Response",
        0x04: "Find Information Request", 0x05: "Find Information Response",
        0x06: "Find By Type Value Request", 0x07: "Find By Type Value Response",
        0x08: "Read By Type Request", 0x09: "Read By Type Response", 0x0A: "Read Request",
        0x0B: "Read Response", 0x0C: "Read Blob Request", 0x0D: "Read Blob Response",
        0x0E: "Read Multiple Request", 0x0F: "Read Multiple Response", 0x10: "Read By Group Type Request",
        0x11: "Read By Group Type Response", 0x12: "Write Request", 0x13: "Write Response",
        0x16: "Prepare Write Request", 0x17: "Prepare Write Response", 0x18: "Execute Write Request",
        0x19: "Execute Write Response", 0x1B: "Handle Value Notification", 0x1D: "Handle Value Indication",
        0x1E: "Handle Value Confirmation", 0x20: "Read Multiple Variable Request",
        0x21: "Read Multiple Variable Response", 0x23: "Multiple Handle Value Notification",
        0x52: "Write Command", 0xD2: "Signed Write Command",
    ]
}

/// ATT error codes (Core Vol 3 Part F §3.4.1.1 and CSS Part B).
public struct ATTErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }

    @inlinable public static var invalidHandle: ATTErrorCode { ATTErrorCode(rawValue: 0x01) }
    @inlinable public static var readNotPermitted: ATTErrorCode { ATTErrorCode(rawValue: 0x02) }
    @inlinable public static var writeNotPermitted: ATTErrorCode { ATTErrorCode(rawValue: 0x03) }
    @inlinable public static var requestNotSupported: ATTErrorCode { ATTErrorCode(rawValue: 0x06) }
    @inlinable public static var attributeNotFound: ATTErrorCode { ATTErrorCode(rawValue: 0x0A) }
    @inlinable public static var insufficientEncryption: ATTErrorCode { ATTErrorCode(rawValue: 0x0F) }

    public var name: String {
        if let n = Self.names[rawValue] { return n }
        if (0x80...0x9F).contains(rawValue) { return "Application Error" }
        return "Reserved"
    }
    public var description: String { name + " (" + Hex.u8(rawValue) + ")" }

    static let names: [UInt8: String] = [
        0x01: "Invalid Handle", 0x02: "Read Not Permitted", 0x03: "Write Not Permitted", 0x04: "Invalid PDU",
        0x05: "Insufficient Authentication", 0x06: "Request Not Supported", 0x07: "Invalid Offset",
        0x08: "Insufficient Authorization", 0x09: "Prepare Queue Full", 0x0A: "Attribute Not Found",
        0x0B: "Attribute Not Long", 0x0C: "Encryption Key Size Too Short", 0x0D: "Invalid Attribute Value Length",
        0x0E: "Unlikely Error", 0x0F: "Insufficient Encryption", 0x10: "Unsupported Group Type",
        0x11: "Insufficient Resources", 0x12: "Database Out Of Sync", 0x13: "Value Not Allowed",
        0xFC: "Write Request Rejected", 0xFD: "CCCD Improperly Configured", 0xFE: "Procedure Already in Progress",
        0xFF: "Out of Range",
    ]
}

/// Characteristic properties (Core Vol 3 Part G §3.3.1.1).
public struct CharacteristicProperties: OptionSet, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }
    @inlinable public static var broadcast: CharacteristicProperties { CharacteristicProperties(rawValue: 0x01) }
    @inlinable public static var read: CharacteristicProperties { CharacteristicProperties(rawValue: 0x02) }
    @inlinable public static var writeWithoutResponse: CharacteristicProperties { CharacteristicProperties(rawValue: 0x04) }
    @inlinable public static var write: CharacteristicProperties { CharacteristicProperties(rawValue: 0x08) }
    @inlinable public static var notify: CharacteristicProperties { CharacteristicProperties(rawValue: 0x10) }
    @inlinable public static var indicate: CharacteristicProperties { CharacteristicProperties(rawValue: 0x20) }
    @inlinable public static var authenticatedSignedWrites: CharacteristicProperties { CharacteristicProperties(rawValue: 0x40) }
    @inlinable public static var extendedProperties: CharacteristicProperties { CharacteristicProperties(rawValue: 0x80) }

    static let labels: [(CharacteristicProperties, String)] = [
        (.broadcast, "broadcast"), (.read, "read"), (.writeWithoutResponse, "write-without-response"),
        (.write, "write"), (.notify, "notify"), (.indicate, "indicate"),
        (.authenticatedSignedWrites, "signed-write"), (.extendedProperties, "extended"),
    ]
    public var names: [String] { Self.labels.filter { contains($0.0) }.map(\.1) }
    public var description: String { names.joined(separator: ",") }
}
