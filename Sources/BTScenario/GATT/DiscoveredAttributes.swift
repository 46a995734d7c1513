import BTWire

/// What a client learned from service discovery.
public struct DiscoveredService: Sendable, Equatable {
    public let uuid: BluetoothUUID
    public let startHandle: UInt16
    public let endHandle: UInt16
}

/// What a client learned from characteristic discovery; `endHandle` is the handle before the next
/// declaration (or the service end), the range its descriptors live in.
public struct DiscoveredCharacteristic: Sendable, Equatable {
    public let uuid: BluetoothUUID
    public let properties: CharacteristicProperties
    public let declarationHandle: UInt16
    public let valueHandle: UInt16
    public internal(set) var endHandle: UInt16
}

public struct DiscoveredDescriptor: Sendable, Equatable {
    public let uuid: BluetoothUUID
    public let handle: UInt16
}

/// The outcome of a read or write.
public enum ATTOutcome: Sendable, Equatable {
    case value([UInt8])
    case written
    case error(ATTErrorCode)
    /// No response: the request timed out.
    case noResponse
}
