import BTWire

/// One attribute of a server (Core Vol 3 Part F §3.2).
public struct GATTAttribute: Sendable {
    public let handle: UInt16
    public let type: BluetoothUUID
    public var value: [UInt8]
    public let permissions: AttributePermissions
}

/// A service's handle range.
public struct GATTServiceLayout: Sendable {
    public let uuid: BluetoothUUID
    public let isPrimary: Bool
    public let startHandle: UInt16
    public let endHandle: UInt16
}

/// A characteristic's handles: declaration, value, optional CCCD, and the last handle it owns.
public struct GATTCharacteristicLayout: Sendable {
    public let uuid: BluetoothUUID
    public let properties: CharacteristicProperties
    public let declarationHandle: UInt16
    public let valueHandle: UInt16
    public let cccdHandle: UInt16?
    public let endHandle: UInt16
}

/// A simulated server's attribute table, laid out from definitions with consecutive handles the way GATT
/// servers number them: service declaration, then per characteristic its declaration, value and descriptors.
public struct GATTDatabase: Sendable {
    public private(set) var attributes: [GATTAttribute] = []
    public private(set) var services: [GATTServiceLayout] = []
    public private(set) var characteristics: [GATTCharacteristicLayout] = []
    public let firstHandle: UInt16

    public init(_ definitions: [GATTServiceDefinition], firstHandle: UInt16 = 1) {
        self.firstHandle = firstHandle
        var handle = firstHandle
        for service in definitions {
            let start = handle
            let declarationType = service.isPrimary ? GATTUUID.primaryService : GATTUUID.secondaryService
            add(&handle, declarationType, ByteWriter.build { $0.uuid(service.uuid) }, .read)
            for c in service.characteristics {
                let declaration = handle
                let valueHandle = handle + 1
                add(&handle, GATTUUID.characteristic, ByteWriter.build { w in
                    w.u8(c.properties.rawValue)
                    w.u16(valueHandle)
                    w.uuid(c.uuid)
                }, .read)
                add(&handle, c.uuid, c.value, c.permissions)
                var cccd: UInt16? = nil
                if c.hasCCCD {
                    cccd = handle
                    add(&handle, GATTUUID.cccd, ATTPDU.cccdOff, [.read, .write])
                }
                for d in c.descriptors { add(&handle, d.uuid, d.value, d.permissions) }
                characteristics.append(GATTCharacteristicLayout(
                    uuid: c.uuid, properties: c.properties, declarationHandle: declaration, valueHandle: valueHandle,
                    cccdHandle: cccd, endHandle: handle - 1))
            }
            services.append(GATTServiceLayout(uuid: service.uuid, isPrimary: service.isPrimary, startHandle: start,
                                              endHandle: handle - 1))
        }
    }

    mutating func add(_ handle: inout UInt16, _ type: BluetoothUUID, _ value: [UInt8], _ permissions: AttributePermissions) {
        attributes.append(GATTAttribute(handle: handle, type: type, value: value, permissions: permissions))
        handle += 1
    }

    public var lastHandle: UInt16 { attributes.last?.handle ?? firstHandle }

    /// The attribute at `handle`, if it exists (handles are consecutive, so this is an index).
    public func attribute(_ handle: UInt16) -> GATTAttribute? {
        guard handle >= firstHandle else { return nil }
        let index = Int(handle - firstHandle)
        return index < attributes.count ? attributes[index] : nil
    }

    public mutating func setValue(_ value: [UInt8], at handle: UInt16) {
        guard handle >= firstHandle else { return }
        let index = Int(handle - firstHandle)
        if index < attributes.count { attributes[index].value = value }
    }

    /// Attributes with handles in `start...end`, in handle order.
    public func attributes(in start: UInt16, _ end: UInt16) -> ArraySlice<GATTAttribute> {
        guard start <= end, start <= lastHandle else { return [] }
        let lower = Int(max(start, firstHandle) - firstHandle)
        let upper = Int(min(end, lastHandle) - firstHandle)
        guard lower <= upper else { return [] }
        return attributes[lower...upper]
    }

    public func characteristic(_ uuid16: UInt16) -> GATTCharacteristicLayout? {
        characteristics.first { $0.uuid == BluetoothUUID(uuid16: uuid16) }
    }

    public func characteristic(uuid: BluetoothUUID) -> GATTCharacteristicLayout? {
        characteristics.first { $0.uuid == uuid }
    }

    public func service(uuid: BluetoothUUID) -> GATTServiceLayout? {
        services.first { $0.uuid == uuid }
    }
}
