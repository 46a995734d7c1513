import BTWire
import BTCapture
import BTDecode

/// A Bluetooth Quality Report the controller sent (`BluetoothQualityReport`), where it is in the capture. Kept
/// per capture, not per link: reports join their link by controller, handle and time when reported (the link
/// tracker may run on another thread, and a report may name a link the capture never saw open).
public struct QualityReport: Sendable, Equatable {
    /// Reports kept per capture: controllers send one every few seconds at most, so only a corrupt capture has more.
    public static let maximumKept = 10_000
    /// A link-quality report that shows the link sending this share of its packets again, or this many
    /// retransmissions when it does not count the packets sent, explains a costly link.
    public static let heavyRetransmissionShare = 0.2
    public static let heavyRetransmissions: UInt32 = 100

    public var at: RecordRef
    public var report: BluetoothQualityReport

    public init(at: RecordRef, report: BluetoothQualityReport) {
        self.at = at
        self.report = report
    }

    /// The link-quality part, when the report has one.
    public var linkQuality: BluetoothQualityReport.LinkQuality? {
        if case .linkQuality(let q, _) = report.body { return q }
        return nil
    }

    /// The Energy Monitor part, when the report is one.
    public var energyMonitor: BluetoothQualityReport.EnergyMonitor? {
        if case .energyMonitor(let e) = report.body { return e }
        return nil
    }

    /// Whether the controller reports heavy retransmissions on the link.
    public var showsHeavyRetransmissions: Bool {
        guard let q = linkQuality else { return false }
        if let share = q.retransmissionShare { return share >= Self.heavyRetransmissionShare }
        return q.retransmissions >= Self.heavyRetransmissions
    }

    /// Whether this report is about `c`: its controller, its handle, within its lifetime.
    public func isAbout(_ c: Connection) -> Bool { isAbout(handle: c.handle, start: c.start, end: c.end) }

    /// Whether it names the link of `handle` that ran from `start` to `end` (nil: the capture's end).
    func isAbout(handle: UInt16, start: RecordRef, end: RecordRef?) -> Bool {
        guard let named = report.handle, named == handle, at.controller == start.controller, at.number >= start.number
        else { return false }
        return end.map { at.number <= $0.number } ?? true
    }

    /// The reports of `reports` (in capture order, as the model keeps them) about `c`: a binary search for the
    /// link's first record, then its lifetime's reports, so every link of a long capture costs little.
    public static func about(_ c: Connection, in reports: [QualityReport]) -> [QualityReport] {
        about(handle: c.handle, start: c.start, end: c.end, in: reports)
    }

    /// `about` for a link the model kept only the summary of.
    public static func about(_ link: LinkSummary, in reports: [QualityReport]) -> [QualityReport] {
        about(handle: link.handle, start: link.start, end: link.end, in: reports)
    }

    static func about(handle: UInt16, start: RecordRef, end: RecordRef?, in reports: [QualityReport]) -> [QualityReport] {
        guard !reports.isEmpty else { return [] }
        let low = reports.partitioningIndex { $0.at.number >= start.number }
        var out: [QualityReport] = []
        for r in reports[low...] {
            if let end, r.at.number > end.number { break }
            if r.isAbout(handle: handle, start: start, end: end) { out.append(r) }
        }
        return out
    }
}
