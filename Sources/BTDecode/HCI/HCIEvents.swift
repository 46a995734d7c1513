import BTWire

// Typed views of the events btlens reasons about. Each `init?` takes the event parameters (after code and
// length) and returns nil when they are shorter than the layout (Core Vol 4 Part E §7.7).

/// Command Complete (0x0E): `ncmd u8, opcode u16`, return parameters (usually `status` first).
public struct CommandComplete {
    public var numberOfAllowedCommands: UInt8
    public var opcode: HCIOpcode
    public var returnParameters: UnsafeRawBufferPointer
    /// The first return parameter, which is the status for nearly every command.
    public var status: HCIStatus? { returnParameters.first.map { HCIStatus(rawValue: $0) } }

    public init?(_ p: UnsafeRawBufferPointer) {
        var r = ByteReader(p)
        guard let n = r.readU8(), let op = r.readU16() else { return nil }
        numberOfAllowedCommands = n
        opcode = HCIOpcode(rawValue: op)
        returnParameters = r.readRest()
    }
}

/// Command Status (0x0F): `status, ncmd, opcode`.
public struct CommandStatus {
    public var status: HCIStatus
    public var numberOfAllowedCommands: UInt8
    public var opcode: HCIOpcode

    public init?(_ p: UnsafeRawBufferPointer) {
        var r = ByteReader(p)
        guard let s = r.readU8(), let n = r.readU8(), let op = r.readU16() else { return nil }
        status = HCIStatus(rawValue: s)
        numberOfAllowedCommands = n
        opcode = HCIOpcode(rawValue: op)
    }
}

/// Disconnection Complete (0x05): `status, handle, reason`.
public struct DisconnectionComplete {
    public var status: HCIStatus
    public var handle: UInt16
    public var reason: HCIStatus

    public init?(_ p: UnsafeRawBufferPointer) {
        var r = ByteReader(p)
        guard let s = r.readU8(), let h = r.readU16(), let reason = r.readU8() else { return nil }
        status = HCIStatus(rawValue: s)
        handle = h & 0x0FFF
        self.reason = HCIStatus(rawValue: reason)
    }
}

/// BR/EDR Connection Complete (0x03): `status, handle, bdaddr, link_type, encryption_enabled`.
public struct ConnectionComplete {
    public var status: HCIStatus
    public var handle: UInt16
    public var address: BDAddr
    /// 0 SCO, 1 ACL, 2 eSCO.
    public var linkType: UInt8
    public var encryptionEnabled: Bool

    public init?(_ p: UnsafeRawBufferPointer) {
        var r = ByteReader(p)
        guard let s = r.readU8(), let h = r.readU16(), let a = r.readAddress(), let lt = r.readU8(),
              let enc = r.readU8()
        else { return nil }
        status = HCIStatus(rawValue: s)
        handle = h & 0x0FFF
        address = a
        linkType = lt
        encryptionEnabled = enc != 0
    }
}

/// LE Connection Complete (0x01), LE Enhanced Connection Complete (0x0A) and its v2 (0x29), in one shape.
public struct LEConnectionComplete {
    public var status: HCIStatus
    public var handle: UInt16
    /// 0 central, 1 peripheral.
    public var role: UInt8
    public var peerAddressType: AddressType
    public var peerAddress: BDAddr
    public var localResolvablePrivateAddress: BDAddr?
    public var peerResolvablePrivateAddress: BDAddr?
    /// ×1.25 ms.
    public var connectionInterval: UInt16
    public var peripheralLatency: UInt16
    /// ×10 ms.
    public var supervisionTimeout: UInt16
    public var centralClockAccuracy: UInt8
    public var advertisingHandle: UInt8?
    public var syncHandle: UInt16?

    public var isCentral: Bool { role == 0 }

    /// - Parameters:
    ///   - subevent: which of the three layouts; `p` starts after the subevent code.
    public init?(subevent: LESubevent, _ p: UnsafeRawBufferPointer) {
        var r = ByteReader(p)
        guard let s = r.readU8(), let h = r.readU16(), let role = r.readU8(), let pt = r.readU8(),
              let peer = r.readAddress()
        else { return nil }
        status = HCIStatus(rawValue: s)
        handle = h & 0x0FFF
        self.role = role
        peerAddressType = AddressType(rawValue: pt)
        peerAddress = peer
        if subevent != .connectionComplete {
            guard let local = r.readAddress(), let peerRPA = r.readAddress() else { return nil }
            localResolvablePrivateAddress = local
            peerResolvablePrivateAddress = peerRPA
        }
        guard let interval = r.readU16(), let latency = r.readU16(), let timeout = r.readU16(),
              let accuracy = r.readU8()
        else { return nil }
        connectionInterval = interval
        peripheralLatency = latency
        supervisionTimeout = timeout
        centralClockAccuracy = accuracy
        if subevent == .enhancedConnectionCompleteV2 {
            advertisingHandle = r.readU8()
            syncHandle = r.readU16()
        }
    }
}

/// LE Connection Update Complete (0x03): `status, handle, interval, latency, timeout`.
public struct LEConnectionUpdateComplete {
    public var status: HCIStatus
    public var handle: UInt16
    public var connectionInterval: UInt16
    public var peripheralLatency: UInt16
    public var supervisionTimeout: UInt16

    public init?(_ p: UnsafeRawBufferPointer) {
        var r = ByteReader(p)
        guard let s = r.readU8(), let h = r.readU16(), let i = r.readU16(), let l = r.readU16(),
              let t = r.readU16()
        else { return nil }
        status = HCIStatus(rawValue: s)
        handle = h & 0x0FFF
        connectionInterval = i
        peripheralLatency = l
        supervisionTimeout = t
    }
}

/// Encryption Change (0x08, v2 0x59): `status, handle, enabled` (+ `key_size` in v2).
public struct EncryptionChange {
    public var status: HCIStatus
    public var handle: UInt16
    public var encryptionEnabled: UInt8
    public var keySize: UInt8?

    public init?(_ p: UnsafeRawBufferPointer) {
        var r = ByteReader(p)
        guard let s = r.readU8(), let h = r.readU16(), let e = r.readU8() else { return nil }
        status = HCIStatus(rawValue: s)
        handle = h & 0x0FFF
        encryptionEnabled = e
        keySize = r.readU8()
    }
}

/// LE Data Length Change (0x07).
public struct LEDataLengthChange {
    public var handle: UInt16
    public var maxTxOctets: UInt16
    public var maxTxTime: UInt16
    public var maxRxOctets: UInt16
    public var maxRxTime: UInt16

    public init?(_ p: UnsafeRawBufferPointer) {
        var r = ByteReader(p)
        guard let h = r.readU16(), let a = r.readU16(), let b = r.readU16(), let c = r.readU16(),
              let d = r.readU16()
        else { return nil }
        handle = h & 0x0FFF
        maxTxOctets = a
        maxTxTime = b
        maxRxOctets = c
        maxRxTime = d
    }
}

/// LE PHY Update Complete (0x0C): PHY 1 = 1M, 2 = 2M, 3 = Coded.
public struct LEPHYUpdateComplete {
    public var status: HCIStatus
    public var handle: UInt16
    public var txPHY: UInt8
    public var rxPHY: UInt8

    public init?(_ p: UnsafeRawBufferPointer) {
        var r = ByteReader(p)
        guard let s = r.readU8(), let h = r.readU16(), let t = r.readU8(), let x = r.readU8() else { return nil }
        status = HCIStatus(rawValue: s)
        handle = h & 0x0FFF
        txPHY = t
        rxPHY = x
    }
}

/// LE Remote Connection Parameter Request (0x06).
public struct LERemoteConnectionParameterRequest {
    public var handle: UInt16
    public var intervalMin: UInt16
    public var intervalMax: UInt16
    public var latency: UInt16
    public var timeout: UInt16

    public init?(_ p: UnsafeRawBufferPointer) {
        var r = ByteReader(p)
        guard let h = r.readU16(), let a = r.readU16(), let b = r.readU16(), let c = r.readU16(),
              let d = r.readU16()
        else { return nil }
        handle = h & 0x0FFF
        intervalMin = a
        intervalMax = b
        latency = c
        timeout = d
    }
}

/// Number Of Completed Packets (0x13): `n`, then n × `{handle, count}`.
public struct NumberOfCompletedPackets {
    public var entries: [(handle: UInt16, count: UInt16)]

    public init?(_ p: UnsafeRawBufferPointer) {
        var r = ByteReader(p)
        guard let n = r.readU8() else { return nil }
        entries = []
        for _ in 0..<n {
            guard let h = r.readU16(), let c = r.readU16() else { return nil }
            entries.append((h & 0x0FFF, c))
        }
    }
}
