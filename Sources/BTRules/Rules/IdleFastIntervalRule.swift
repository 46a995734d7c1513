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

    public func evaluate(_ model: CaptureModel, context: RuleContext) -> [Finding] {
        let maximum = context.option("maximum_interval_ms")
        // ATT operations of one kind on one attribute closer than the tracker's run gap form one activity run,
        // and the gaps inside a run are not kept: an idle stretch shorter than the run gap cannot be seen.
        let runGap = Int64(saturating: TrackerOptions().activityRunGap.seconds * 1e9)
        let idleLimit = max(Int64(saturating: context.option("idle_seconds") * 1e9), runGap)
        var findings: [Finding] = []
        for c in model.appConnections where c.transport == .le && !c.hidesTraffic {
            // Parameter history and ATT activity, walked in time order to find idle stretches at a fast interval.
            // Events come in the order activity started, but runs (one per kind, handle and sender) and
            // discoveries overlap: `lastActivity` is the latest end of everything seen so far, so it only moves
            // forward, and a gap before the next start is a stretch without any of that traffic.
            // The effective interval: a subrated link wakes once in its subrate factor's intervals.
            var interval = c.initialParameters?.effectiveIntervalMilliseconds
            var lastActivity = c.start
            var worst: (from: RecordRef, to: Int64, interval: Double)?
            // Parameter changes in time order: an idle gap is filed where it starts, before a change inside it,
            // so a stretch is cut at the changes it spans and each piece judged at its own interval.
            let changes: [(at: RecordRef, interval: Double)] = c.events.compactMap { e in
                if case .parametersChanged(let p) = e.kind { return (e.at, p.effectiveIntervalMilliseconds) }
                return nil
            }
            let subscriptions = SubscriptionTimeline(c)
            func judge(from: RecordRef, until t: Int64, at i: Double?) {
                guard let i, i <= maximum else { return }
                let idle = t - from.timestamp.nanoseconds
                // With notifications or indications on, the link is waiting for the peer, not idle by neglect.
                guard idle > idleLimit, !subscriptions.isSubscribed(atNanoseconds: from.timestamp.nanoseconds) else { return }
                if idle > idleLimit, idle > (worst.map { $0.to - $0.from.timestamp.nanoseconds } ?? 0) {
                    worst = (from, t, i)
                }
            }
            func consider(until t: Int64) {
                var from = lastActivity
                var current = interval
                for change in changes where change.at.timestamp.nanoseconds > from.timestamp.nanoseconds
                    && change.at.timestamp.nanoseconds < t {
                    judge(from: from, until: change.at.timestamp.nanoseconds, at: current)
                    from = change.at
                    current = change.interval
                }
                judge(from: from, until: t, at: current)
            }
            func active(until r: RecordRef) {
                if r.timestamp.nanoseconds > lastActivity.timestamp.nanoseconds { lastActivity = r }
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
                    consider(until: until.timestamp.nanoseconds)
                    active(until: until)
                default:
                    break
                }
            }
            consider(until: (c.end?.timestamp ?? model.endTime).nanoseconds)
            guard let w = worst else { continue }
            findings.append(Finding(
                rule: Self.description, controller: c.controller, connection: c, start: w.from.timestamp,
                end: Timestamp(nanoseconds: w.to), records: [c.start, w.from],
                message: "\(RuleText.connection(c)) stayed at a \(RuleText.ms(w.interval)) connection interval for \(RuleText.seconds(w.to - w.from.timestamp.nanoseconds)) without ATT traffic.")
                .costing(RuleCost.relaxedInterval(c, seconds: Double(w.to - w.from.timestamp.nanoseconds) / 1e9, intervalMs: w.interval,
                                                  relaxedMs: context.option("relaxed_interval_ms"), context)))
        }
        return findings
    }
}
