import BTWire
import BTCapture
import BTDecode

/// A period during which the controller scanned, from the accepted LE Set (Extended) Scan Enable(1) to the
/// accepted disable, a scan timeout, or the end of the capture.
public struct ScanSession: Sendable {
    public var controller: UInt16
    public var start: RecordRef
    /// nil while still scanning at the end of the capture.
    public var end: RecordRef?
    public var isExtended: Bool
    public var isActive: Bool
    public var intervalMilliseconds: Double
    public var windowMilliseconds: Double
    public var filterPolicy: UInt8
    /// Duplicate filtering requested (extended mode 1 or 2).
    public var filterDuplicates: Bool
    /// Advertising reports received while the session was on.
    public var reports: Int
    public var uniqueDevices: Int
    /// Connections that came up while this session was on.
    public var connectionsWhileScanning: [RecordRef]

    public var dutyCycle: Double { intervalMilliseconds > 0 ? windowMilliseconds / intervalMilliseconds : 0 }
}

/// Follows LE scanning (legacy and extended commands). STUB: replaced by the scanning implementation.
public struct ScanTracker {
    public private(set) var sessions: [ScanSession] = []
    public init() {}
    public mutating func commandCompleted(_ command: CommandCorrelator.Pending, status: HCIStatus, at: RecordRef) {}
    public mutating func advertisingReport(_ report: AdvertisingReport, at: RecordRef) {}
    public mutating func scanTimeout(at: RecordRef) {}
    /// HCI Reset or controller removed: scanning stops.
    public mutating func controllerReset(at: RecordRef) {}
    public mutating func connectionCameUp(controller: UInt16, handle: UInt16, at: RecordRef) {}
    /// True when `controller` is scanning now.
    public func isScanning(controller: UInt16) -> Bool { false }
    public mutating func finish(at: RecordRef?) -> [ScanSession] { sessions }
}
