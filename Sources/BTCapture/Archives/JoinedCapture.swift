/// Several captures read as one, in order: Android's `btsnoop_hci.log.last` then `btsnoop_hci.log` (the log
/// rotates when Bluetooth restarts or the log is full), or a sysdiagnose's PacketLogger files oldest first. A
/// connection that spans the rotation is then one connection. `CaptureInputs` joins parts only when each
/// begins after the one before ends.
///
/// Android's btsnooz logs (`btsnooz_hci.log.last` then `btsnooz_hci.log`) overlap instead: each is the whole
/// in-memory ring dumped at a bug report, so the newer repeats the packets the older ends with. A part marked
/// `skipsRepeats` drops its records up to the end of the part before (by time), read once.
///
/// Record numbers run on across the parts; byte offsets are each part's own (an issue names its part). Each
/// part is opened when the one before is finished, so only one is open at a time.
public final class JoinedCapture: RecordSource {
    /// One capture of the chain.
    public struct Part: Sendable {
        public var name: String
        /// Its first records repeat the end of the part before (a btsnooz dump): those are skipped.
        public var skipsRepeats: Bool
        let open: @Sendable (IssueLog) throws -> OpenedCapture
        public init(name: String, skipsRepeats: Bool = false, open: @escaping @Sendable (IssueLog) throws -> OpenedCapture) {
            self.name = name
            self.skipsRepeats = skipsRepeats
            self.open = open
        }
    }

    public let info: CaptureInfo
    public let issues: IssueLog
    let parts: [Part]
    @exclusivity(unchecked) private var index = 0
    @exclusivity(unchecked) private var current: OpenedCapture?
    @exclusivity(unchecked) private var currentIssues: IssueLog
    /// Records of the parts before the current one.
    @exclusivity(unchecked) private var shift = 0
    @exclusivity(unchecked) private var recordsInPart = 0
    /// The time of the last record returned, and how many records of the current part repeated it.
    @exclusivity(unchecked) private var lastTime: Timestamp?
    @exclusivity(unchecked) private var repeatsEnd: Timestamp?
    @exclusivity(unchecked) private var repeated = 0

    /// Opens the first part (its errors are the joined capture's).
    public init(parts: [Part], issues: IssueLog = IssueLog()) throws {
        precondition(!parts.isEmpty)
        self.parts = parts
        self.issues = issues
        currentIssues = IssueLog(keepLimit: issues.keepLimit)
        let first = try parts[0].open(currentIssues)
        current = first
        info = first.info
        let overlapping = parts.contains(where: \.skipsRepeats)
        issues.notice("read as one capture, in this order: " + parts.map(\.name).joined(separator: ", ")
                      + (overlapping ? " (packets a part repeats from the one before are read once)"
                                     : " (each begins after the one before ends)"))
    }

    public func next() -> CaptureRecord? {
        while let reader = current {
            if var record = reader.nextRecord() {
                recordsInPart += 1
                if let end = repeatsEnd {
                    if record.timestamp <= end { repeated += 1; continue }
                    repeatsEnd = nil
                }
                record.number += shift
                lastTime = record.timestamp
                return record
            }
            finishPart()
        }
        return nil
    }

    private func finishPart() {
        issues.absorb(currentIssues, recordShift: shift, part: parts[index].name)
        if repeated > 0 {
            issues.notice("\(parts[index].name) repeats \(repeated) packet\(repeated == 1 ? "" : "s") of \(parts[index - 1].name) (each dump holds the whole ring): read once")
        }
        repeated = 0
        repeatsEnd = nil
        shift += recordsInPart
        recordsInPart = 0
        current = nil
        index += 1
        guard index < parts.count else { return }
        currentIssues = IssueLog(keepLimit: issues.keepLimit)
        if parts[index].skipsRepeats { repeatsEnd = lastTime }
        do {
            current = try parts[index].open(currentIssues)
        } catch {
            issues.report(.readError, record: shift + 1, offset: 0, "\(parts[index].name): \(error); the parts after it are not read")
            index = parts.count
        }
    }
}
