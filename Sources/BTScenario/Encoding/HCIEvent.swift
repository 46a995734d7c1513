import BTWire

/// An HCI event: code and parameters (Core Vol 4 Part E §5.4.4). `packet` is the bytes after the H4
/// indicator.
public struct HCIEvent: Sendable {
    public var code: HCIEventCode
    public var parameters: [UInt8]

    public init(_ code: HCIEventCode, parameters: [UInt8]) {
        self.code = code
        self.parameters = parameters
    }

    public init(_ code: HCIEventCode, _ body: (inout ByteWriter) -> Void) {
        self.init(code, parameters: ByteWriter.build(body))
    }

    /// An LE Meta event: the subevent code is the first parameter.
    public init(le subevent: LESubevent, _ body: (inout ByteWriter) -> Void) {
        self.init(.leMeta) { w in
            w.u8(subevent.rawValue)
            body(&w)
        }
    }

    /// `code u8, plen u8, parameters`.
    public var packet: [UInt8] {
        ByteWriter.build(capacity: HCIFraming.eventHeaderLength + parameters.count) { w in
            w.u8(code.rawValue)
            w.u8(UInt8(truncatingIfNeeded: parameters.count))
            w.append(parameters)
        }
    }
}

extension HCIEvent {
    /// How many more commands the controller accepts; 1 is what nearly every controller reports.
    public static let defaultCommandCredits: UInt8 = 1

    /// Command Complete (0x0E): `ncmd, opcode`, then return parameters (status first for nearly all).
    public static func commandComplete(_ opcode: HCIOpcode, returnParameters: [UInt8],
                                       credits: UInt8 = defaultCommandCredits) -> HCIEvent {
        HCIEvent(.commandComplete) { w in
            w.u8(credits)
            w.u16(opcode.rawValue)
            w.append(returnParameters)
        }
    }

    /// Command Status (0x0F): `status, ncmd, opcode`.
    public static func commandStatus(_ opcode: HCIOpcode, status: HCIStatus = .success,
                                     credits: UInt8 = defaultCommandCredits) -> HCIEvent {
        HCIEvent(.commandStatus) { w in
            w.u8(status.rawValue)
            w.u8(credits)
            w.u16(opcode.rawValue)
        }
    }

    /// Disconnection Complete (0x05).
    public static func disconnectionComplete(handle: UInt16, reason: HCIStatus,
                                             status: HCIStatus = .success) -> HCIEvent {
        HCIEvent(.disconnectionComplete) { w in
            w.u8(status.rawValue)
            w.u16(handle)
            w.u8(reason.rawValue)
        }
    }

    /// Encryption Change (0x08): enabled 1 = AES-CCM on LE.
    public static func encryptionChange(handle: UInt16, enabled: Bool, status: HCIStatus = .success) -> HCIEvent {
        HCIEvent(.encryptionChange) { w in
            w.u8(status.rawValue)
            w.u16(handle)
            w.u8(enabled ? LEParameter.enabled : LEParameter.disabled)
        }
    }

    /// Number Of Completed Packets (0x13): one `{handle, count}` per entry.
    public static func numberOfCompletedPackets(_ entries: [(handle: UInt16, count: UInt16)]) -> HCIEvent {
        HCIEvent(.numberOfCompletedPackets) { w in
            w.u8(UInt8(truncatingIfNeeded: entries.count))
            for e in entries {
                w.u16(e.handle)
                w.u16(e.count)
            }
        }
    }
}
