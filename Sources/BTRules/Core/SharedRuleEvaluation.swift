import Synchronization
import BTWire
import BTTrack

/// The rules of a large capture's audit evaluated on two threads. At the end of an audit the capture-wide rules
/// read every scan and link, with the second processor idle: this thread and a second one each take the next rule
/// in the registry's order when done with one (the second thread only capture-wide rules), each setting its
/// findings aside in a spill of its own and finishing them as soon as the rule is done (`FindingFinishing`), so
/// that one thread finishes its rules' findings while the other still evaluates. The findings and their report
/// order are those one thread makes.
///
/// A per-link rule stays on this thread when links were judged early: its findings on those links are in this
/// thread's spill already. Rules read the model only; its set-aside parts read under their spills' locks.
extension Auditor {
    /// Evaluates `rules` (enabled, in the registry's order) into `spill`, each rule's findings finished by
    /// `finishing` when the rule is done.
    func evaluate(_ rules: [any Rule.Type], model: CaptureModel, judged: LinkJudgement?, spill: FindingSpill,
                  finishing: FindingFinishing) throws(FindingStoreError) {
        let rest = judged == nil ? model : model.withoutJudgedLinks
        var mine = RuleWorker(directory: spill.directory)
        guard rules.count > 1, model.judgedRecords >= sharedEvaluationRecords else {
            for rule in rules {
                try mine.run(rule, of: self, model: model, rest: rest, judged: judged, into: spill, finishing: finishing)
            }
            if let failure = mine.places.failure { throw .spill(cause: failure) }
            return
        }
        let side = try FindingSpill(directory: spill.directory)
        let claims = RuleClaims(sharable: rules.map { $0.description.scope != .link || judged == nil })
        let second = SecondThread {
            var theirs = RuleWorker(directory: side.directory)
            do throws(FindingStoreError) {
                while finishing.failure == nil, let i = claims.claim(onSecondThread: true) {
                    // A rule this thread takes reads no judged link's findings (`RuleClaims.sharable`).
                    try theirs.run(rules[i], of: self, model: model, rest: model, judged: nil, into: side, finishing: finishing)
                }
                if let failure = side.failure { throw failure }
                if let failure = theirs.places.failure { throw .spill(cause: failure) }
            } catch {
                finishing.fail(error)
            }
        }
        do throws(FindingStoreError) {
            while finishing.failure == nil, let i = claims.claim(onSecondThread: false) {
                try mine.run(rules[i], of: self, model: model, rest: rest, judged: judged, into: spill, finishing: finishing)
            }
            if let failure = mine.places.failure { throw .spill(cause: failure) }
        } catch {
            finishing.fail(error)
        }
        second.join()
        if let failure = finishing.failure { throw failure }
    }

    /// One rule's findings, each set aside in `target` and its place handed to `add` in the order one evaluation
    /// over the whole capture gives them.
    fileprivate func evaluate(_ rule: any Rule.Type, model: CaptureModel, rest: CaptureModel, judged: LinkJudgement?,
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

/// One thread's part of `Auditor.evaluate(_:model:judged:spill:finishing:)`: where its findings are, in the order
/// made (beside the findings, not in memory), and the buffer it encodes them with as it finishes each rule's.
private struct RuleWorker {
    var places: PlainList<FindingSpill.Ref>
    var bytes: [UInt8] = []

    init(directory: String?) {
        places = PlainList(directory: directory)
        bytes.reserveCapacity(2048)
    }

    /// Evaluates `rule` into `spill`, then finishes its findings.
    mutating func run(_ rule: any Rule.Type, of auditor: Auditor, model: CaptureModel, rest: CaptureModel,
                      judged: LinkJudgement?, into spill: FindingSpill, finishing: FindingFinishing) throws(FindingStoreError) {
        let start = places.count
        auditor.evaluate(rule, model: model, rest: rest, judged: judged, into: spill) { places.append($0) }
        try finishing.finish(places.values(in: start..<places.count), in: spill, bytes: &bytes)
    }
}

/// Which thread evaluates which rule (`Auditor.evaluate(_:model:judged:spill:finishing:)`): claimed under a lock.
final class RuleClaims: Sendable {
    /// Whether the second thread may take each rule.
    private let sharable: [Bool]
    private let claimed: Mutex<[Bool]>

    init(sharable: [Bool]) {
        self.sharable = sharable
        claimed = Mutex(Array(repeating: false, count: sharable.count))
    }

    /// The first rule no thread took yet (that the second thread may take, for it).
    func claim(onSecondThread: Bool) -> Int? {
        claimed.withLock { claimed in
            guard let i = claimed.indices.first(where: { !claimed[$0] && (sharable[$0] || !onSecondThread) }) else { return nil }
            claimed[i] = true
            return i
        }
    }
}
