import BTWire
import BTDecode

/// A service of a peer's database: its handle range and UUID, primary or secondary.
public struct GATTService: Sendable, Equatable {
    public var startHandle: UInt16
    public var endHandle: UInt16
    public var uuid: BluetoothUUID
    public var isPrimary: Bool
    public var name: String { GATTNames.uuid(uuid) }
}

/// An included service declaration and the range it includes.
public struct GATTInclude: Sendable, Equatable {
    public var handle: UInt16
    public var startHandle: UInt16
    public var endHandle: UInt16
    public var uuid: BluetoothUUID?
}

/// A characteristic: its declaration and value handles, properties, UUID and last handle.
public struct GATTCharacteristic: Sendable, Equatable {
    public var declarationHandle: UInt16
    public var valueHandle: UInt16
    public var properties: CharacteristicProperties
    public var uuid: BluetoothUUID
    /// Last handle of the characteristic (its last descriptor): the next declaration − 1 or the service end.
    public var endHandle: UInt16
    public var name: String { GATTNames.attribute(uuid) }
    public var canNotify: Bool { properties.contains(.notify) || properties.contains(.indicate) }
}

/// A characteristic descriptor: its handle and UUID.
public struct GATTDescriptor: Sendable, Equatable {
    public var handle: UInt16
    public var uuid: BluetoothUUID
    public var isCCCD: Bool { uuid == .clientCharacteristicConfiguration }
}

/// The part of a peer's GATT database that discovery revealed, rebuilt from the responses seen.
/// Kept sorted by handle; bounded by `maximumEntries`.
public struct GATTDatabase: Sendable {
    public private(set) var services: [GATTService] = []
    public private(set) var includes: [GATTInclude] = []
    public private(set) var characteristics: [GATTCharacteristic] = []
    public private(set) var descriptors: [GATTDescriptor] = []
    /// Last value written to each CCCD (0 off, 1 notify, 2 indicate).
    public internal(set) var cccdValues: [UInt16: UInt16] = [:]
    /// Handles a Read By Type request for a characteristic UUID returned (Read Using Characteristic UUID): the
    /// type of a value whose declaration the capture may not show. Not part of `isEmpty`: this link's own, kept
    /// when another link's database names its handles. At most `maximumEntries`.
    public internal(set) var typedValues: [UInt16: BluetoothUUID] = [:]
    /// The connection this database was copied from, when this one did not discover it (see `origin`).
    public internal(set) var inheritedFrom: Int?
    /// Where the database came from: this link's own discovery, an earlier link's (the OS cached it), or a later
    /// link's (the capture began after the OS had cached it; the later discovery shows what it held).
    public internal(set) var origin: GATTOrigin = .discovered
    /// An air link's own discovery lost responses, and the connection with this id (the same peer) filled the
    /// gaps (`GATTKnowledge`).
    public internal(set) var gapsFilledFrom: Int?

    public static let maximumEntries = 4096

    public init() {}

    /// A database of the parts another database keeps (in its order): one set aside as bytes and read back.
    public init(services: [GATTService], includes: [GATTInclude], characteristics: [GATTCharacteristic],
                descriptors: [GATTDescriptor], cccdValues: [UInt16: UInt16], typedValues: [UInt16: BluetoothUUID],
                inheritedFrom: Int?, origin: GATTOrigin, gapsFilledFrom: Int?) {
        self.services = services
        self.includes = includes
        self.characteristics = characteristics
        self.descriptors = descriptors
        self.cccdValues = cccdValues
        self.typedValues = typedValues
        self.inheritedFrom = inheritedFrom
        self.origin = origin
        self.gapsFilledFrom = gapsFilledFrom
    }

    public var isEmpty: Bool { services.isEmpty && characteristics.isEmpty && descriptors.isEmpty }
    var entryCount: Int { services.count + includes.count + characteristics.count + descriptors.count }

    mutating func addService(start: UInt16, end: UInt16, uuid: BluetoothUUID, primary: Bool) {
        guard entryCount < Self.maximumEntries else { return }
        let service = GATTService(startHandle: start, endHandle: end, uuid: uuid, isPrimary: primary)
        Self.upsert(service, into: &services, by: \.startHandle)
        recomputeEnds()
    }

    mutating func addInclude(_ include: GATTInclude) {
        guard entryCount < Self.maximumEntries else { return }
        let i = Self.insertionIndex(of: include.handle, in: includes, by: \.handle)
        if i < includes.count && includes[i].handle == include.handle { return }
        includes.insert(include, at: i)
    }

    mutating func addCharacteristic(declarationHandle: UInt16, _ declaration: CharacteristicDeclaration) {
        guard entryCount < Self.maximumEntries else { return }
        let c = GATTCharacteristic(declarationHandle: declarationHandle, valueHandle: declaration.valueHandle,
                                   properties: declaration.properties, uuid: declaration.uuid, endHandle: 0xFFFF)
        Self.upsert(c, into: &characteristics, by: \.declarationHandle)
        recomputeEnds()
    }

    mutating func addDescriptor(handle: UInt16, uuid: BluetoothUUID) {
        guard entryCount < Self.maximumEntries else { return }
        // Find Information over a wide range also returns declarations and values: keep descriptors only.
        if uuid == .primaryService || uuid == .secondaryService || uuid == .include || uuid == .characteristic { return }
        if characteristics.contains(where: { $0.valueHandle == handle }) { return }
        Self.upsert(GATTDescriptor(handle: handle, uuid: uuid), into: &descriptors, by: \.handle)
    }

    /// Where `key` is or would go in `list`, sorted by `field` (binary search: discovery adds entries one by one,
    /// up to `maximumEntries`, so sorting or scanning per entry would be quadratic).
    static func insertionIndex<T>(of key: UInt16, in list: [T], by field: KeyPath<T, UInt16>) -> Int {
        var low = 0, high = list.count
        while low < high {
            let mid = (low + high) / 2
            if list[mid][keyPath: field] < key { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// Whether `list`, sorted by `field`, has an entry with `key`.
    static func contains<T>(_ key: UInt16, in list: [T], by field: KeyPath<T, UInt16>) -> Bool {
        let i = insertionIndex(of: key, in: list, by: field)
        return i < list.count && list[i][keyPath: field] == key
    }

    /// Replaces the entry with the same key or inserts `item` in order.
    static func upsert<T>(_ item: T, into list: inout [T], by field: KeyPath<T, UInt16>) {
        let key = item[keyPath: field]
        let i = insertionIndex(of: key, in: list, by: field)
        if i < list.count && list[i][keyPath: field] == key { list[i] = item } else { list.insert(item, at: i) }
    }

    /// A characteristic ends where the next one (or its service) starts. One pass over both sorted lists.
    mutating func recomputeEnds() {
        var s = 0
        for i in characteristics.indices {
            let declaration = characteristics[i].declarationHandle
            // The last service starting at or before the declaration, if it contains it.
            while s + 1 < services.count && services[s + 1].startHandle <= declaration { s += 1 }
            var end: UInt16 = 0xFFFF
            if s < services.count, services[s].startHandle <= declaration, declaration <= services[s].endHandle {
                end = services[s].endHandle
            }
            if i + 1 < characteristics.count {
                end = min(end, characteristics[i + 1].declarationHandle &- 1)
            }
            characteristics[i].endHandle = max(end, characteristics[i].valueHandle)
        }
    }

    public func service(containing handle: UInt16) -> GATTService? {
        services.last { $0.startHandle <= handle && handle <= $0.endHandle }
    }

    /// The characteristic whose declaration, value or descriptors contain `handle`.
    public func characteristic(containing handle: UInt16) -> GATTCharacteristic? {
        characteristics.last { $0.declarationHandle <= handle && handle <= $0.endHandle }
    }

    /// Whether another database of the same peer says something else of a handle both know: the peer's
    /// database changed between them (a firmware update, a service added).
    public func conflicts(with other: GATTDatabase) -> Bool {
        for c in characteristics {
            if let o = other.characteristic(valueHandle: c.valueHandle), o.uuid != c.uuid || o.declarationHandle != c.declarationHandle {
                return true
            }
        }
        for s in services {
            if let o = other.services.first(where: { $0.startHandle == s.startHandle }), o.uuid != s.uuid || o.endHandle != s.endHandle {
                return true
            }
        }
        return false
    }

    /// Adds what `other` (the same peer's database, not in conflict with this one) knows of handles this one does
    /// not: the services, characteristics and descriptors whose discovery responses an air sniffer missed.
    /// Returns how many entries it added.
    @discardableResult
    mutating func fillGaps(from other: GATTDatabase) -> Int {
        let before = entryCount
        for s in other.services where !Self.contains(s.startHandle, in: services, by: \.startHandle) {
            addService(start: s.startHandle, end: s.endHandle, uuid: s.uuid, primary: s.isPrimary)
        }
        for c in other.characteristics where !Self.contains(c.declarationHandle, in: characteristics, by: \.declarationHandle) {
            addCharacteristic(declarationHandle: c.declarationHandle,
                              CharacteristicDeclaration(properties: c.properties, valueHandle: c.valueHandle, uuid: c.uuid))
        }
        for d in other.descriptors where !Self.contains(d.handle, in: descriptors, by: \.handle) {
            addDescriptor(handle: d.handle, uuid: d.uuid)
        }
        return entryCount - before
    }

    /// The UUID of the attribute at `handle`, as discovery showed it: a characteristic's value, a descriptor, or
    /// a handle Find Information listed (which names values by their characteristic's UUID).
    public func uuid(of handle: UInt16) -> BluetoothUUID? {
        characteristic(valueHandle: handle)?.uuid ?? descriptor(handle)?.uuid ?? typedValues[handle]
    }

    mutating func addTypedValue(handle: UInt16, uuid: BluetoothUUID) {
        guard typedValues.count < Self.maximumEntries || typedValues[handle] != nil else { return }
        typedValues[handle] = uuid
    }

    public func characteristic(valueHandle: UInt16) -> GATTCharacteristic? {
        characteristics.first { $0.valueHandle == valueHandle }
    }

    public func descriptor(_ handle: UInt16) -> GATTDescriptor? {
        let i = Self.insertionIndex(of: handle, in: descriptors, by: \.handle)
        return i < descriptors.count && descriptors[i].handle == handle ? descriptors[i] : nil
    }

    public func descriptors(of c: GATTCharacteristic) -> [GATTDescriptor] {
        descriptors.filter { $0.handle > c.valueHandle && $0.handle <= c.endHandle }
    }

    public func characteristics(of s: GATTService) -> [GATTCharacteristic] {
        characteristics.filter { $0.declarationHandle >= s.startHandle && $0.declarationHandle <= s.endHandle }
    }

    /// Whether `handle` is a Client Characteristic Configuration descriptor.
    public func isCCCD(_ handle: UInt16) -> Bool { descriptor(handle)?.isCCCD ?? false }

    /// Whether a subscription through the CCCD at `cccd` is the app's data: not Service Changed, nor anything in
    /// the GAP or GATT services, which the stacks subscribe to themselves. Unknown when the database was not
    /// discovered: then taken as data.
    public func isDataSubscription(cccd: UInt16) -> Bool { isDataValue(cccd) }

    /// Whether the attribute at `handle` (a value or a descriptor) is outside the stack's own services and not
    /// Service Changed.
    public func isDataValue(_ handle: UInt16) -> Bool {
        if let service = service(containing: handle), service.uuid.isStackService { return false }
        if let c = characteristic(containing: handle), c.uuid == .serviceChanged { return false }
        return true
    }

    /// A readable name for an attribute handle: "Heart Rate Measurement (2a37)", "CCCD of Heart Rate
    /// Measurement (2a37)", or nil when discovery did not reveal it.
    public func name(of handle: UInt16) -> String? {
        if let s = services.first(where: { $0.startHandle == handle }) { return "service " + s.name }
        guard let c = characteristic(containing: handle) else { return typedValues[handle].map(GATTNames.attribute) }
        if handle == c.valueHandle { return c.name }
        if handle == c.declarationHandle { return "declaration of " + c.name }
        if let d = descriptor(handle) {
            return (d.isCCCD ? "CCCD" : GATTNames.attribute(d.uuid)) + " of " + c.name
        }
        return nil
    }
}
