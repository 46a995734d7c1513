#if canImport(Glibc)
import Glibc
#endif
import BTWire
import BTTrack

/// The rules of a large capture's audit evaluated on two threads. At the end of an audit the capture-wide rules
/// read every scan and link, with the second processor idle: this thread and a second one each take the next rule
/// in the registry's order when done with one (the second thread only capture-wide rules), each setting its
/// findings aside in a spill of its own. The places are then put in the registry's order, the second thread's
/// findings copied over as bytes, so the findings and their order are those one thread makes.
///
/// A per-link rule stays on this thread when links were judged early: its findings on those links are in this
/// thread's spill already. Rules read the model only; its set-aside parts read under their spills' locks.
extension Auditor {
    /// Evaluates `rules` (enabled, in the registry's order) into `spill`: where each finding is, in the order one
    /// evaluation after another makes them.
    func evaluate(_ rules: [any Rule.Type], model: CaptureModel, judged: LinkJudgement?, spill: FindingSpill)
        throws(FindingStoreError) -> PlainList<FindingSpill.Ref> {
        let rest = judged == nil ? model : model.withoutJudgedLinks
        var made = PlainList<FindingSpill.Ref>(directory: spill.directory)
        guard rules.count > 1, model.judgedRecords >= sharedEvaluationRecords else {
            for rule in rules { evaluate(rule, model: model, rest: rest, judged: judged, into: spill) { made.append($0) } }
            return made
        }
        let side = try FindingSpill(directory: spill.directory)
        let claims = RuleClaims(sharable: rules.map { $0.description.scope != .link || judged == nil })
        let theirs = SharedPlaces(directory: spill.directory)
        let second = SecondThread { [self] in
            while let i = claims.claim(onSecondThread: true) {
                let start = theirs.places.count
                // A rule this thread takes reads no judged link's findings (`RuleClaims.sharable`).
                evaluate(rules[i], model: model, rest: model, judged: nil, into: side) { theirs.places.append($0) }
                claims.place(i, onSecondThread: true, start..<theirs.places.count)
            }
        }
        var mine = PlainList<FindingSpill.Ref>(directory: spill.directory)
        while let i = claims.claim(onSecondThread: false) {
            let start = mine.count
            evaluate(rules[i], model: model, rest: rest, judged: judged, into: spill) { mine.append($0) }
            claims.place(i, onSecondThread: false, start..<mine.count)
        }
        second.join()
        for p in claims.placements {
            if p.onSecondThread {
                for ref in theirs.places.values(in: p.range) { made.append(spill.copy(ref, from: side)) }
            } else {
                for ref in mine.values(in: p.range) { made.append(ref) }
            }
        }
        if let failure = side.failure { throw failure }
        if let failure = theirs.places.failure ?? mine.failure { throw .spill(cause: failure) }
        return made
    }

    /// One rule's findings, each set aside in `target` and its place handed to `add` in the order one evaluation
    /// over the whole capture gives them.
    private func evaluate(_ rule: any Rule.Type, model: CaptureModel, rest: CaptureModel, judged: LinkJudgement?,
                          into target: FindingSpill, _ add: (FindingSpill.Ref) -> Void) {
        let d = rule.description
        let prepared = prepare(rule)
        if d.scope == .link, let judged {
            var refs = judged.spilledFindings(of: d.id, in: target)
            prepared.evaluate(rest) { refs.append(target.append($0)) }
            // In link order, as one evaluation over every link gives them (`inLinkOrder`).
            for ref in refs.enumerated().sorted(by: { ($0.element.link, $0.offset) < ($1.element.link, $1.offset) }).map(\.element) {
                add(ref)
            }
        } else {
            prepared.evaluate(model) { add(target.append($0)) }
        }
    }
}

/// Which thread evaluates which rule (`Auditor.evaluate(_:model:judged:spill:)`), and where each rule's findings'
/// places went: claimed and placed under a lock.
final class RuleClaims: @unchecked Sendable {
    struct Placement {
        var onSecondThread = false
        /// The rule's places in its thread's list.
        var range: Range<Int> = 0..<0
    }

    /// Whether the second thread may take each rule.
    private let sharable: [Bool]
    @exclusivity(unchecked) private var claimed: [Bool]
    @exclusivity(unchecked) private var placed: [Placement]
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    init(sharable: [Bool]) {
        self.sharable = sharable
        claimed = Array(repeating: false, count: sharable.count)
        placed = Array(repeating: Placement(), count: sharable.count)
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    private func locked<T>(_ body: () -> T) -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body()
    }

    /// The first rule no thread took yet (that the second thread may take, for it).
    func claim(onSecondThread: Bool) -> Int? {
        locked {
            guard let i = claimed.indices.first(where: { !claimed[$0] && (sharable[$0] || !onSecondThread) }) else { return nil }
            claimed[i] = true
            return i
        }
    }

    func place(_ rule: Int, onSecondThread: Bool, _ range: Range<Int>) {
        locked { placed[rule] = Placement(onSecondThread: onSecondThread, range: range) }
    }

    /// Each rule's placement, in order; read once both threads are done.
    var placements: [Placement] { locked { placed } }
}

/// The second thread's places, read by this thread after `SecondThread.join`.
final class SharedPlaces: @unchecked Sendable {
    @exclusivity(unchecked) var places: PlainList<FindingSpill.Ref>

    init(directory: String?) { places = PlainList(directory: directory) }
}
