import BTRules

/// How `btlens live` prints.
public enum LiveFormat: String, Sendable, CaseIterable {
    /// Lines like `btlens decode`, plus connection events (`==`) and findings (`!!`), then the audit report.
    case text
    /// JSON Lines: one object per record, connection event and finding (`type` says which), then a summary.
    case json
}

/// What the live pipeline does besides decoding: which controller, how often to audit, with which rules.
public struct LiveOptions: Sendable {
    /// Keep only records of this controller (hciN); records that belong to no controller (system notes) stay.
    public var index: UInt16?
    public var format: LiveFormat = .text
    /// Names the input in findings and notes: a path, "<stdin>", or "Bluetooth" for the socket.
    public var label: String
    public var configuration = AuditConfiguration()
    /// Audit the model so far after this much capture time…
    public var auditInterval: Duration = .seconds(1)
    /// …or this many records, whichever comes first.
    public var auditRecordInterval = 10_000
    /// Catching up on history, audit at most this often by the wall clock (a snapshot per second of a day-long
    /// log would dominate the run); when the input goes quiet a due audit runs at once.
    public var minimumAuditGap: Duration = .milliseconds(250)
    /// btlens' version, for the audit report at the end.
    public var version = ""

    public init(label: String, index: UInt16? = nil, format: LiveFormat = .text) {
        self.label = label
        self.index = index
        self.format = format
    }
}
