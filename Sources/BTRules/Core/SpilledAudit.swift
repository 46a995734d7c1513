import Synchronization
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
    /// in `spill` as a rule makes it (`judged`'s too, when it was made with the same spill). As soon as a rule is
    /// done its findings are read back once, in the order made, de-duplicated, capped (`MeasuredCap`), handed to
    /// `finishing` (owners, a baseline) and written to a second file in `spill`'s directory (`FindingFinishing`);
    /// memory keeps a key per finding (`FindingKey`). On a large capture the rules are shared with a second thread
    /// (`evaluate(_:model:judged:spill:finishing:)`), which finishes the findings of the rules it evaluates:
    /// `finishing` is called from both threads. The findings, read back in report order, are those
    /// `audit(_:file:judged:)` returns, every field the same.
    public func audit(_ model: CaptureModel, file: String, judged: LinkJudgement?, spill: FindingSpill,
                      finishing: @escaping @Sendable (inout Finding) -> FindingDestination = { _ in .reported })
        throws(FindingStoreError) -> (reported: StoredFindings, accepted: StoredFindings) {
        let finished = try FindingFinishing(file: file, cap: MeasuredCap(model.controllerActivity), finishing: finishing,
                                            directory: spill.directory, runLength: spill.keyRunLength)
        try evaluate(RuleRegistry.all.filter { configuration.isEnabled($0.description) }, model: model, judged: judged,
                     spill: spill, finishing: finished)
        if let failure = spill.failure { throw failure }
        return try finished.sorted()
    }
}

/// The findings of an audit finished rule by rule, on the thread that evaluated the rule
/// (`Auditor.evaluate(_:model:judged:spill:finishing:)`): each rule's findings read back in the order made, those
/// with the fingerprint and start of one before left out (a fingerprint names its rule, so no two rules' findings
/// are the same), capped, handed to the caller's `finishing`, encoded, then written with their keys under a lock.
/// Keys order findings of one rule by where they were written, and one thread writes a rule's findings in the
/// order made, so the report's order does not depend on which thread finished first.
final class FindingFinishing: @unchecked Sendable {
    let file: String
    let cap: MeasuredCap
    let finishing: @Sendable (inout Finding) -> FindingDestination
    private let spill: Spill
    // What both threads write to, under `lock` only.
    @exclusivity(unchecked) private var reported: FinishedFindings
    @exclusivity(unchecked) private var accepted: FinishedFindings
    /// The first failure either thread met; the second thread stops taking rules after one.
    @exclusivity(unchecked) private var firstFailure: FindingStoreError?
    private let lock = Mutex(())

    init(file: String, cap: MeasuredCap, finishing: @escaping @Sendable (inout Finding) -> FindingDestination,
         directory: String?, runLength: Int) throws(FindingStoreError) {
        self.file = file
        self.cap = cap
        self.finishing = finishing
        do { spill = try Spill(directory: directory, name: "findings", readAhead: Spill.readAheadWindow) } catch {
            throw .spill(cause: (error as? SpillError).map { "\($0.path): \($0.cause)" } ?? "\(error)")
        }
        reported = FinishedFindings(spill: spill, directory: directory, runLength: runLength)
        accepted = FinishedFindings(spill: spill, directory: directory, runLength: runLength)
    }

    private func locked<T: Sendable>(_ body: () -> T) -> T { lock.withLock { _ in body() } }

    /// Finishes one rule's findings, `refs` in `spill` in the order made. `bytes`: the calling thread's buffer.
    func finish(_ refs: PlainList<FindingSpill.Ref>.Values, in spill: FindingSpill, bytes: inout [UInt8])
        throws(FindingStoreError) {
        let duplicates = try FindingDeduplication.duplicates(of: refs, in: spill)
        var dropped = duplicates?.makeIterator()
        var nextDropped = dropped?.next()
        for (i, ref) in refs.enumerated() {
            if let d = nextDropped, Int(d) == i {
                nextDropped = dropped?.next()
                continue
            }
            var f = try spill.read(ref)
            f.file = file
            cap.apply(to: &f)
            let destination = finishing(&f)
            bytes.removeAll(keepingCapacity: true)
            FindingCoding.encode(f, into: &bytes)
            bytes.withUnsafeBytes { encoded in
                locked {
                    switch destination {
                    case .reported: reported.append(f, encoded: encoded)
                    case .accepted: accepted.append(f, encoded: encoded)
                    }
                }
            }
        }
        if let cause = duplicates?.failure { throw .spill(cause: cause) }
    }

    /// Records what stopped a thread; the first one is thrown once both are done.
    func fail(_ error: FindingStoreError) { locked { if firstFailure == nil { firstFailure = error } } }

    var failure: FindingStoreError? { locked { firstFailure } }

    /// The findings in report order; call once both threads are done.
    func sorted() throws(FindingStoreError) -> (reported: StoredFindings, accepted: StoredFindings) {
        if let failure { throw failure }
        spill.flush()
        if let failure = spill.failure { throw .spill(cause: failure) }
        return (reported.sorted(), accepted.sorted())
    }
}
