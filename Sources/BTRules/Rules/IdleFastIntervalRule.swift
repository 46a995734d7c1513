import BTWire
import BTCapture
import BTTrack

/// BTL011: a short connection interval (≤ 15 ms) kept while the link is idle.
public struct IdleFastIntervalRule: Rule {
    public static let description = RuleDescription(
        id: "BTL011", name: "idle-fast-interval", title: "Fast connection interval kept while idle",
        category: .connection, defaultSeverity: .warning,
        rationale: "The connection interval sets how often both radios wake up, even when there is nothing to send. At 7.5 ms that is 133 connection events a second; an idle link at 7.5 ms costs several times what it costs at 100 ms or more (or with peripheral latency).",
        coreBluetooth: "iOS picks the interval; the peripheral should request a longer one (L2CAP Connection Parameter Update) when its burst is over — 15 ms or more per Apple's Accessory Design Guidelines — or the app should disconnect when idle.",
        android: "call requestConnectionPriority(CONNECTION_PRIORITY_HIGH) only for a transfer and return to CONNECTION_PRIORITY_BALANCED or LOW_POWER when it ends.",
        options: [
            RuleOption("maximum_interval_ms", 15, unit: "ms", "Intervals at or below this count as fast."),
            RuleOption("relaxed_interval_ms", 100, unit: "ms", "The interval the cost is counted against: what the link could have idled at."),
            RuleOption("idle_seconds", 5, unit: "s", "Idle time at a fast interval that is reported. At least 5 s: ATT operations of one kind on one attribute less than 5 s apart form one activity run, whose inner gaps are not kept, so lower values act as 5 s."),
        ],
        fixtures: [.triggers("wasteful-central", findings: 2), .clean("heart-rate-session")],
        scope: .link
    )

    public init() {}

    /// The tracker's default run gap (nanoseconds), read once rather than at every link judged.
    static let runGap = Int64(saturating: TrackerOptions().activityRunGap.seconds * 1e9)

    public func evaluate(_ model: CaptureModel, context: RuleContext) -> [Finding] {
        let maximum = context.option("maximum_interval_ms")
        // ATT operations of one kind on one attribute closer than the tracker's run gap form one activity run,
        // and the gaps inside a run are not kept: an idle stretch shorter than the run gap cannot be seen.
        let idleLimit = max(Int64(saturating: context.option("idle_seconds") * 1e9), Self.runGap)
        var findings: [Finding] = []
        for c in model.appConnections where c.transport == .le && !c.hidesTraffic {
            // Parameter history and ATT activity, walked in time order to find idle stretches at a fast interval.
            // Events come in the order activity started, but runs (one per kind, handle and sender) and
            // discoveries overlap: `lastActivity` is the latest end of everything seen so far, so it only moves
            // forward, and a gap before the next start is a stretch without any of that traffic.
            // The effective interval: a subrated link wakes once in its subrate factor's intervals.
            var interval = c.initialParameters?.effectiveIntervalMilliseconds
            var lastActivity = c.start
            // Every idle stretch at a fast interval (subscribed or not: a subscription justifies keeping the link,
            // not keeping it fast), so that sparse keep-alives do not make a link look busy.
            var stretches = IdleStretches()
            // Parameter changes in time order: an idle gap is filed where it starts, before a change inside it,
            // so a stretch is cut at the changes it spans and each piece judged at its own interval.
            let changes: [(at: RecordRef, interval: Double)] = c.events.compactMap { e in
                if case .parametersChanged(let p) = e.kind { return (e.at, p.effectiveIntervalMilliseconds) }
                return nil
            }
            func judge(from: RecordRef, until t: Int64, at i: Double?) {
                guard let i, i <= maximum, t - from.timestamp.nanoseconds > idleLimit else { return }
                stretches.add(from: from, to: t, interval: i)
            }
            // Changes at or before the latest activity never count again (it only moves forward): in time order
            // (nearly always), the walk starts past them, so a link of thousands of changes and tens of thousands
            // of events is not walked once per event.
            let inOrder = zip(changes, changes.dropFirst()).allSatisfy { $0.at.timestamp <= $1.at.timestamp }
            var passed = 0
            func consider(until t: Int64) {
                var from = lastActivity
                var current = interval
                func cut(at change: (at: RecordRef, interval: Double)) {
                    judge(from: from, until: change.at.timestamp.nanoseconds, at: current)
                    from = change.at
                    current = change.interval
                }
                if inOrder {
                    while passed < changes.count && changes[passed].at.timestamp.nanoseconds <= from.timestamp.nanoseconds {
                        passed += 1
                    }
                    var j = passed
                    while j < changes.count && changes[j].at.timestamp.nanoseconds < t {
                        if changes[j].at.timestamp.nanoseconds > from.timestamp.nanoseconds { cut(at: changes[j]) }
                        j += 1
                    }
                } else {
                    for change in changes where change.at.timestamp.nanoseconds > from.timestamp.nanoseconds
                        && change.at.timestamp.nanoseconds < t {
                        cut(at: change)
                    }
                }
                judge(from: from, until: t, at: current)
            }
            func active(until r: RecordRef) {
                if r.timestamp.nanoseconds > lastActivity.timestamp.nanoseconds { lastActivity = r }
            }
            // A link lost by supervision timeout was dead for that long before the controller gave up: the peer had
            // gone (advertising again elsewhere), so that time is not the app's idling. A link that died with a
            // request pending was waiting for a peer that had left, not idling.
            let linkEnd = (c.end?.timestamp ?? model.endTime).nanoseconds
            let diedWaiting = c.wasLost && c.transactions.unansweredAtEnd > 0
            let deadFor = c.disconnectReason == .connectionTimeout
                ? Int64(((c.parameters ?? c.initialParameters)?.supervisionTimeoutMilliseconds ?? 0) * 1e6) : 0
            func finalEnd() -> Int64 {
                diedWaiting ? lastActivity.timestamp.nanoseconds
                    : max(lastActivity.timestamp.nanoseconds, linkEnd.minusSaturating(deadFor))
            }
            for e in c.events {
                switch e.kind {
                case .parametersChanged(let p):
                    // Idle time at the new interval counts from the change.
                    consider(until: e.at.timestamp.nanoseconds)
                    interval = p.effectiveIntervalMilliseconds
                    active(until: e.at)
                case .activity(let i):
                    consider(until: e.at.timestamp.nanoseconds)
                    active(until: c.runs[i].last)
                case .discovery(let i):
                    consider(until: e.at.timestamp.nanoseconds)
                    active(until: c.discoveries[i].last)
                case .subscription, .mtuExchange:
                    consider(until: e.at.timestamp.nanoseconds)
                    active(until: e.at)
                case .idle(let until):
                    // No ATT traffic between the event's record and `until`, both ATT PDUs.
                    active(until: e.at)
                    let u = until.timestamp.nanoseconds
                    consider(until: u >= linkEnd ? finalEnd() : u)
                    active(until: until)
                default:
                    break
                }
            }
            consider(until: finalEnd())
            guard let first = stretches.first, let longest = stretches.longest else { continue }
            let total = stretches.total
            let span = stretches.last - first.timestamp.nanoseconds
            let share = span > 0 ? Int((Double(total) / Double(span) * 100).rounded()) : 100
            let detail = stretches.count == 1 ? "" : " in \(stretches.count) idle stretches (longest \(RuleText.seconds(longest)); idle \(share) % of the \(RuleText.seconds(span)) they span)"
            findings.append(Finding(
                rule: Self.description, controller: c.controller, connection: c, start: first.timestamp,
                end: Timestamp(nanoseconds: stretches.last), records: [c.start, first],
                message: "\(RuleText.connection(c)) stayed at a \(RuleText.ms(stretches.fastest)) connection interval for \(RuleText.seconds(total)) without ATT traffic\(detail).")
                .costing(RuleCost.relaxedInterval(c, seconds: Double(total) / 1e9, intervalMs: stretches.fastest,
                                                  relaxedMs: context.option("relaxed_interval_ms"), context)))
        }
        return findings
    }
}

/// Idle stretches at a fast interval on one link: how many, how long in all, the longest, and the span from the
/// first's start to the last's end.
struct IdleStretches {
    private(set) var first: RecordRef?
    private(set) var last: Int64 = 0
    private(set) var total: Int64 = 0
    private(set) var longest: Int64?
    private(set) var count = 0
    /// The fastest interval idled at (what the cost is counted from).
    private(set) var fastest = Double.infinity

    mutating func add(from: RecordRef, to: Int64, interval: Double) {
        let length = to - from.timestamp.nanoseconds
        if first == nil { first = from }
        last = max(last, to)
        total += length
        longest = max(longest ?? 0, length)
        count += 1
        fastest = min(fastest, interval)
    }
}
