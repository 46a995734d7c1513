import BTWire
import BTCapture

/// The phone's own advertising sessions in start order, as the model holds them (set aside as they end by the
/// batch commands: `TrackerOptions.scanSessionSpillDirectory`).
public typealias AdvertisingSessions = SetAsideArray<AdvertisingSession>

/// An advertising session as bytes in a `Spill` (`AdvertisingSessions`): its plain fields, then the connections
/// listed during it, its advertising and scan response data, its service UUIDs and its local name's UTF-8.
struct AdvertisingSessionBytes {
    var controller: UInt16
    var setHandle: UInt8
    var advertisingType: UInt8?
    var properties: UInt16?
    var maximumEvents: UInt8?
    var completedEvents: UInt8?
    var flags: Flags
    var endReason: AdvertisingEndReason?
    var start: RecordRef
    var end: RecordRef?
    var endedByConnection: RecordRef?
    var resumedAfterConnection: RecordRef?
    var intervalMinimumMilliseconds: Double?
    var intervalMaximumMilliseconds: Double?
    var durationMilliseconds: Double?
    var connectionCount: Int32
    var advertisingDataCount: Int32
    var scanResponseDataCount: Int32
    var uuidCount: Int32
    /// -1 without a name.
    var nameBytes: Int32

    struct Flags: OptionSet {
        let rawValue: UInt8
        static let isExtended = Flags(rawValue: 1 << 0)
        static let isConnectable = Flags(rawValue: 1 << 1)
        static let isScannable = Flags(rawValue: 1 << 2)
        static let parametersKnown = Flags(rawValue: 1 << 3)
    }

    init(_ a: AdvertisingSession) {
        controller = a.controller
        setHandle = a.setHandle
        advertisingType = a.advertisingType
        properties = a.properties
        maximumEvents = a.maximumEvents
        completedEvents = a.completedEvents
        var flags: Flags = []
        if a.isExtended { flags.insert(.isExtended) }
        if a.isConnectable { flags.insert(.isConnectable) }
        if a.isScannable { flags.insert(.isScannable) }
        if a.parametersKnown { flags.insert(.parametersKnown) }
        self.flags = flags
        endReason = a.endReason
        start = a.start
        end = a.end
        endedByConnection = a.endedByConnection
        resumedAfterConnection = a.resumedAfterConnection
        intervalMinimumMilliseconds = a.intervalMinimumMilliseconds
        intervalMaximumMilliseconds = a.intervalMaximumMilliseconds
        durationMilliseconds = a.durationMilliseconds
        connectionCount = Int32(a.connectionsWhileAdvertising.count)
        advertisingDataCount = Int32(a.advertisingData.count)
        scanResponseDataCount = Int32(a.scanResponseData.count)
        uuidCount = Int32(a.serviceUUIDs.count)
        nameBytes = a.localName.map { Int32($0.utf8.count) } ?? -1
    }
}

extension AdvertisingSession: SetAsideValue {
    public static func append(_ a: AdvertisingSession, to spill: Spill) -> Int64 {
        let at = spill.append(plain: AdvertisingSessionBytes(a))
        spill.append(plain: a.connectionsWhileAdvertising)
        spill.append(plain: a.advertisingData)
        spill.append(plain: a.scanResponseData)
        spill.append(plain: a.serviceUUIDs)
        if let name = a.localName { spill.append(name) }
        return at
    }

    public static func read(from spill: Spill, at offset: Int64) -> AdvertisingSession {
        var cursor = spill.cursor(at: offset)
        let head = cursor.next(AdvertisingSessionBytes.self)
        let connections = cursor.next(RecordRef.self, count: Int(head.connectionCount))
        let data = cursor.next(UInt8.self, count: Int(head.advertisingDataCount))
        let response = cursor.next(UInt8.self, count: Int(head.scanResponseDataCount))
        let uuids = cursor.next(BluetoothUUID.self, count: Int(head.uuidCount))
        let name = head.nameBytes < 0 ? nil : cursor.text(count: Int(head.nameBytes))
        return AdvertisingSession(
            controller: head.controller, setHandle: head.setHandle, start: head.start, end: head.end,
            isExtended: head.flags.contains(.isExtended), connectionsWhileAdvertising: connections, endReason: head.endReason,
            endedByConnection: head.endedByConnection, resumedAfterConnection: head.resumedAfterConnection,
            intervalMinimumMilliseconds: head.intervalMinimumMilliseconds, intervalMaximumMilliseconds: head.intervalMaximumMilliseconds,
            advertisingType: head.advertisingType, properties: head.properties, isConnectable: head.flags.contains(.isConnectable),
            isScannable: head.flags.contains(.isScannable), parametersKnown: head.flags.contains(.parametersKnown),
            advertisingData: data, scanResponseData: response, localName: name, serviceUUIDs: uuids,
            durationMilliseconds: head.durationMilliseconds, maximumEvents: head.maximumEvents, completedEvents: head.completedEvents)
    }
}
