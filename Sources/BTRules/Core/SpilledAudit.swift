import BTWire
import BTCapture
import BTTrack

/// Where a finished finding goes (`Auditor.audit(_:file:judged:spill:finishing:)`).
public enum FindingDestination: Sendable {
    /// Into the report.
    case reported
    /// Out of the report, accepted by a baseline; kept so that a refreshed baseline still lists it.
    case accepted
}

extension Auditor {
    /// `audit(_:file:judged:)` for captures with more findings than memory should hold: each finding is set aside
    /// in `spill` as a rule makes it (`judged`'s too, when it was made with the same spill; on a large capture the
    /// rules are shared with a second thread, `evaluate(_:model:judged:spill:)`), then read back once, in the order
    /// made, to be de-duplicated, capped (`MeasuredCap`) and handed to `finishing` (owners, a baseline), and written
    /// to a second file in `spill`'s directory; memory keeps a key per finding (`FindingKey`). The findings, read
    /// back in report order, are those `audit(_:file:judged:)` returns, every field the same.
    public func audit(_ model: CaptureModel, file: String, judged: LinkJudgement?, spill: FindingSpill,
                      finishing: (inout Finding) -> FindingDestination = { _ in .reported })
        throws(FindingStoreError) -> (reported: StoredFindings, accepted: StoredFindings) {
        // Where each finding is, in the order made: beside the findings, not in memory.
        let made = try evaluate(RuleRegistry.all.filter { configuration.isEnabled($0.description) }, model: model,
                                judged: judged, spill: spill)
        if let failure = spill.failure { throw failure }
        if let failure = made.failure { throw .spill(cause: failure) }
        let duplicates = try FindingDeduplication.duplicates(of: made, in: spill)

        let finished: Spill
        do { finished = try Spill(directory: spill.directory, name: "findings", readAhead: Spill.readAheadWindow) } catch {
            throw .spill(cause: (error as? SpillError).map { "\($0.path): \($0.cause)" } ?? "\(error)")
        }
        var reported = FinishedFindings(spill: finished, directory: spill.directory, runLength: spill.keyRunLength)
        var accepted = FinishedFindings(spill: finished, directory: spill.directory, runLength: spill.keyRunLength)
        do {
            let cap = MeasuredCap(model.controllerActivity)
            var dropped = duplicates.makeIterator()
            var nextDropped = dropped.next()
            for (i, ref) in made.enumerated() {
                if let d = nextDropped, Int(d) == i {
                    nextDropped = dropped.next()
                    continue
                }
                var f = try spill.read(ref)
                f.file = file
                cap.apply(to: &f)
                switch finishing(&f) {
                case .reported: reported.append(f)
                case .accepted: accepted.append(f)
                }
            }
        }
        finished.flush()
        if let failure = finished.failure { throw .spill(cause: failure) }
        return (reported.sorted(), accepted.sorted())
    }
}
