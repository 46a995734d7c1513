/// Several captures read as one, in order: Android's `btsnoop_hci.log.last` then `btsnoop_hci.log` (the log
/// rotates when Bluetooth restarts or the log is full), or a sysdiagnose's PacketLogger files oldest first. A
/// connection that spans the rotation is then one connection. `CaptureInputs` joins parts only when each
/// begins after the one before ends.
///
/// Record numbers run on across the parts; byte offsets are each part's own (an issue names its part). Each
/// part is opened when the one before is finished, so only one is open at a time.
public final class JoinedCapture: RecordSource {
    /// One capture of the chain.
    public struct Part: Sendable {
        public var name: String
        let open: @Sendable (IssueLog) throws -> OpenedCapture
        public init(name: String, open: @escaping @Sendable (IssueLog) throws -> OpenedCapture) {
            self.name = name
            self.open = open
        }
    }

    public let info: CaptureInfo
    public let issues: IssueLog
    let parts: [Part]
    private var index = 0
    private var current: OpenedCapture?
    private var currentIssues: IssueLog
    /// Records of the parts before the current one.
    private var shift = 0
    private var recordsInPart = 0

    /// Opens the first part (its errors are the joined capture's).
    public init(parts: [Part], issues: IssueLog = IssueLog()) throws {
        precondition(!parts.isEmpty)
        self.parts = parts
        self.issues = issues
        currentIssues = IssueLog(keepLimit: issues.keepLimit)
        let first = try parts[0].open(currentIssues)
        current = first
        info = first.info
        issues.notice("read as one capture, in this order: " + parts.map(\.name).joined(separator: ", ")
                      + " (each begins after the one before ends)")
    }

    public func next() -> CaptureRecord? {
        while let reader = current {
            if var record = reader.nextRecord() {
                recordsInPart += 1
                record.number += shift
                return record
            }
            finishPart()
        }
        return nil
    }

    private func finishPart() {
        issues.absorb(currentIssues, recordShift: shift, part: parts[index].name)
        shift += recordsInPart
        recordsInPart = 0
        current = nil
        index += 1
        guard index < parts.count else { return }
        currentIssues = IssueLog(keepLimit: issues.keepLimit)
        do {
            current = try parts[index].open(currentIssues)
        } catch {
            issues.report(.readError, record: shift + 1, offset: 0, "\(parts[index].name): \(error); the parts after it are not read")
            index = parts.count
        }
    }
}
