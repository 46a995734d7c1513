import BTWire
import BTCapture
import BTDecode

/// What one advertiser (address + type) sent in its advertising reports.
public struct Advertiser: Sendable {
    public var address: BDAddr
    public var addressType: AddressType
    public var reports: Int
    public var firstSeen: RecordRef
    public var lastSeen: RecordRef
}

/// Builds the advertiser table from advertising reports. STUB: replaced by the advertiser implementation.
public struct AdvertiserTracker {
    public init() {}
    public mutating func advertisingReport(_ report: AdvertisingReport, at: RecordRef) {}
    public mutating func finish() -> [Advertiser] { [] }
}

/// Our own advertising (peripheral role): legacy or extended set, from accepted enable to disable/termination.
public struct AdvertisingSession: Sendable {
    public var controller: UInt16
    /// 0 for legacy advertising.
    public var setHandle: UInt8
    public var start: RecordRef
    public var end: RecordRef?
    public var isExtended: Bool
    /// Connections (as peripheral) that came up while advertising was on.
    public var connectionsWhileAdvertising: [RecordRef]
}

/// Follows LE Set Advertising Parameters/Data/Enable and the extended forms. STUB.
public struct OwnAdvertisingTracker {
    public init() {}
    public mutating func commandCompleted(_ command: CommandCorrelator.Pending, status: HCIStatus, at: RecordRef) {}
    /// LE Advertising Set Terminated (subevent 0x12) parameters (after the subevent code).
    public mutating func advertisingSetTerminated(_ parameters: UnsafeRawBufferPointer, at: RecordRef) {}
    public mutating func connectionCameUp(controller: UInt16, handle: UInt16, isPeripheral: Bool, at: RecordRef) {}
    public func isAdvertising(controller: UInt16) -> Bool { false }
    /// HCI Reset or controller removed: advertising stops.
    public mutating func controllerReset(at: RecordRef) {}
    public mutating func finish(at: RecordRef?) -> [AdvertisingSession] { [] }
}
