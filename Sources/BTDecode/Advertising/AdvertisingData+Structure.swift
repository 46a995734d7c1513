import BTWire

/// What one AD structure holds, read in place. The decoded fields, the summary, the parsed accessors and the
/// advertiser table all go through these, so each AD type's layout is written once.
extension AdvertisingDataView.Structure {
    /// Bytes per UUID of a UUID list (service UUIDs, solicited services); nil for other types.
    public var uuidSize: Int? {
        switch type {
        case .incompleteUUID16, .completeUUID16, .solicitationUUID16: 2
        case .incompleteUUID32, .completeUUID32, .solicitationUUID32: 4
        case .incompleteUUID128, .completeUUID128, .solicitationUUID128: 16
        default: nil
        }
    }

    /// Bytes of the UUID that starts Service Data; nil for other types.
    public var serviceDataUUIDSize: Int? {
        switch type {
        case .serviceDataUUID16: 2
        case .serviceDataUUID32: 4
        case .serviceDataUUID128: 16
        default: nil
        }
    }

    /// Service Data: its UUID and the bytes after it (borrowed); nil for other types or when too short.
    public var serviceData: (uuid: BluetoothUUID, data: UnsafeRawBufferPointer)? {
        guard let size = serviceDataUUIDSize, data.count >= size,
              let uuid = BluetoothUUID(littleEndianBytes: UnsafeRawBufferPointer(rebasing: data[..<size]))
        else { return nil }
        return (uuid, UnsafeRawBufferPointer(rebasing: data[size...]))
    }

    /// Manufacturer Specific Data: the company and the bytes after its ID (borrowed); nil for other types or
    /// when too short.
    public var manufacturerData: (company: CompanyID, data: UnsafeRawBufferPointer)? {
        guard type == .manufacturerSpecificData, data.count >= 2 else { return nil }
        return (CompanyID(rawValue: UInt16(data[0]) | UInt16(data[1]) << 8), UnsafeRawBufferPointer(rebasing: data[2...]))
    }

    /// The whole UUIDs of a UUID list; a partial one at the end is dropped.
    public var uuids: [BluetoothUUID] {
        guard let size = uuidSize else { return [] }
        return stride(from: 0, to: data.count / size * size, by: size).compactMap {
            BluetoothUUID(littleEndianBytes: UnsafeRawBufferPointer(rebasing: data[$0..<$0 + size]))
        }
    }
}
