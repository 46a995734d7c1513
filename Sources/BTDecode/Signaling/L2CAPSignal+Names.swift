import BTWire

/// Names of the result, status, reason and type values carried by signalling commands (Core Vol 3 Part A §4).
/// Each command has its own result space, so the lookup is keyed by the command code.
extension L2CAPSignal {
    /// The name of `result` in the command `code` (Connection, Configuration, Information, Connection Parameter
    /// Update, LE/Enhanced Credit Based Connection and Reconfigure responses); nil when reserved or unknown.
    public static func resultName(_ result: UInt16, for code: L2CAPSignalCode) -> String? {
        switch code.rawValue {
        case 0x03: connectionResults[result]
        case 0x05: configurationResults[result]
        case 0x0B: result == 0 ? "Success" : result == 1 ? "Not supported" : nil
        case 0x13: result == 0 ? "accepted" : result == 1 ? "rejected" : nil
        case 0x15: leCreditBasedConnectionResults[result]
        case 0x18: creditBasedConnectionResults[result]
        case 0x1A: reconfigureResults[result]
        default: nil
        }
    }

    /// Command Reject reasons (§4.1).
    public static func rejectReasonName(_ reason: UInt16) -> String? {
        switch reason {
        case 0x0000: "Command not understood"
        case 0x0001: "Signaling MTU exceeded"
        case 0x0002: "Invalid CID in request"
        default: nil
        }
    }

    /// Connection Response status, meaningful when the result is 1 (pending) (§4.3).
    public static func connectionStatusName(_ status: UInt16) -> String? {
        switch status {
        case 0x0000: "No further information available"
        case 0x0001: "Authentication pending"
        case 0x0002: "Authorization pending"
        default: nil
        }
    }

    /// Information Request/Response InfoType (§4.10).
    public static func infoTypeName(_ type: UInt16) -> String? {
        switch type {
        case 0x0001: "Connectionless MTU"
        case 0x0002: "Extended features supported"
        case 0x0003: "Fixed channels supported"
        default: nil
        }
    }

    static let connectionResults: [UInt16: String] = [
        0x0000: "Connection successful", 0x0001: "Connection pending",
        0x0002: "Connection refused - PSM not supported", 0x0003: "Connection refused - security block",
        0x0004: "Connection refused - no resources available", 0x0006: "Connection refused - invalid Source CID",
        0x0007: "Connection refused - Source CID already allocated",
    ]

    static let configurationResults: [UInt16: String] = [
        0x0000: "Success", 0x0001: "Failure - unacceptable parameters", 0x0002: "Failure - rejected",
        0x0003: "Failure - unknown options", 0x0004: "Pending", 0x0005: "Failure - flow spec rejected",
    ]

    static let leCreditBasedConnectionResults: [UInt16: String] = [
        0x0000: "Connection successful", 0x0002: "Connection refused - SPSM not supported",
        0x0004: "Connection refused - no resources available",
        0x0005: "Connection refused - insufficient authentication",
        0x0006: "Connection refused - insufficient authorization",
        0x0007: "Connection refused - encryption key size too short",
        0x0008: "Connection refused - insufficient encryption", 0x0009: "Connection refused - invalid Source CID",
        0x000A: "Connection refused - Source CID already allocated",
        0x000B: "Connection refused - unacceptable parameters",
    ]

    static let creditBasedConnectionResults: [UInt16: String] = [
        0x0000: "All connections successful", 0x0002: "All connections refused - SPSM not supported",
        0x0004: "Some connections refused - insufficient resources available",
        0x0005: "All connections refused - insufficient authentication",
        0x0006: "All connections refused - insufficient authorization",
        0x0007: "All connections refused - encryption key size too short",
        0x0008: "All connections refused - insufficient encryption",
        0x0009: "Some connections refused - invalid Source CID",
        0x000A: "Some connections refused - Source CID already allocated",
        0x000B: "All connections refused - unacceptable parameters",
        0x000C: "All connections refused - invalid parameters",
        0x000D: "All connections pending - no further information available",
        0x000E: "All connections pending - authentication pending",
        0x000F: "All connections pending - authorization pending",
    ]

    static let reconfigureResults: [UInt16: String] = [
        0x0000: "Reconfiguration successful", 0x0001: "Reconfiguration failed - reduction in size of MTU not allowed",
        0x0002: "Reconfiguration failed - reduction in size of MPS not allowed for more than one channel at a time",
        0x0003: "Reconfiguration failed - one or more Destination CIDs invalid",
        0x0004: "Reconfiguration failed - other unacceptable parameters",
    ]
}
