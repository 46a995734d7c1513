import BTWire
import BTCapture

/// What a report reads of a scan session it priced: its controller, the shape of its parameters and whether it
/// ended, not its counters and lists. The energy report keeps one per session: a capture of many thousand scans
/// then holds a few dozen bytes for each, not the session.
public struct ScanSessionSummary: Sendable {
    public var controller: UInt16
    public var isActive: Bool
    public var isExtended: Bool
    public var parametersKnown: Bool
    /// `ScanSession.parametersShown`.
    public var parametersShown: Bool
    public var filterDuplicates: Bool
    /// Still scanning at the end of the capture (no `endTimestamp`).
    public var isOpen: Bool
    public var intervalMilliseconds: Double
    public var windowMilliseconds: Double
    public var dutyCycle: Double

    public init(_ s: ScanSession) {
        controller = s.controller
        isActive = s.isActive
        isExtended = s.isExtended
        parametersKnown = s.parametersKnown
        parametersShown = s.parametersShown
        filterDuplicates = s.filterDuplicates
        isOpen = s.endTimestamp == nil
        intervalMilliseconds = s.intervalMilliseconds
        windowMilliseconds = s.windowMilliseconds
        dutyCycle = s.dutyCycle
    }
}
