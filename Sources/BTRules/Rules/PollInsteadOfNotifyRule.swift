import BTWire
import BTCapture
import BTTrack

/// BTL005: three or more Read Requests at a regular period of a value whose characteristic can notify, judged on
/// the value's whole series of reads (other traffic may come between), one finding per polled value.
public struct PollInsteadOfNotifyRule: Rule {
    public static let description = RuleDescription(
        id: "BTL005", name: "poll-instead-of-notify", title: "Polling a value that can notify",
        category: .transfer, defaultSeverity: .warning,
        rationale: "Each read is a request and a response, two packets and usually two connection events, repeated on a timer whether or not the value changed. A characteristic that declares Notify or Indicate can push the value only when it changes, in one packet.",
        coreBluetooth: "call peripheral.setNotifyValue(true, for: characteristic) and handle peripheral(_:didUpdateValueFor:error:) instead of calling readValue(for:) on a timer.",
        android: "call setCharacteristicNotification(characteristic, true) and write ENABLE_NOTIFICATION_VALUE to its Client Characteristic Configuration descriptor, then handle onCharacteristicChanged, instead of readCharacteristic() on a timer.",
        options: [
            RuleOption("minimum_reads", 3, "Reads of one value in a connection needed to report."),
            RuleOption("maximum_variation", 0.35, "Largest coefficient of variation of the gaps between the reads that still counts as a regular period."),
            RuleOption("minimum_steady_reads", 6, "When the whole series is not regular (the app paused its timer), reads in a row whose gaps each stay within 20 % of the one before that still count as a poll."),
        ],
        fixtures: [.triggers("wasteful-central", findings: 1, connection: 1, attributeHandle: 0x0019),
                   .clean("heart-rate-session"), .clean("fragmented-acl")],
        scope: .link
    )

    public init() {}

    public func evaluate(_ model: CaptureModel, context: RuleContext) -> [Finding] {
        var findings: [Finding] = []
        var repeats = RepeatNumbering()
        let minimumReads = Int(context.option("minimum_reads"))
        let maximumVariation = context.option("maximum_variation")
        let minimumSteady = max(minimumReads, Int(context.option("minimum_steady_reads")))
        for c in model.appConnections {
            for (index, s) in c.series.enumerated() where s.kind == .read && s.sent {
                let regular = s.isRegular(minimumCount: minimumReads, maximumVariation: maximumVariation)
                // Not regular as a whole: a timer that ran for a while (paused, or other reads at other times).
                guard regular || s.steady.count >= minimumSteady,
                      let why = Self.canNotify(s.handle, in: c),
                      let period = regular ? s.meanInterval : s.steady.meanInterval
                else { continue }
                let count = regular ? s.count : s.steady.count
                let start = regular ? s.first.timestamp : Timestamp(nanoseconds: s.steady.firstNanoseconds)
                let end = regular ? s.last.timestamp : Timestamp(nanoseconds: s.steady.lastNanoseconds)
                let span = RuleText.seconds(end.nanoseconds - start.nanoseconds)
                let of = regular ? "" : " (of \(s.count) reads over \(RuleText.seconds(s.duration)))"
                findings.append(Finding(
                    rule: Self.description, controller: c.controller, connection: c, attributeHandle: s.handle,
                    discriminator: repeats.discriminator(key: "\(c.id)|\(s.handle)"),
                    start: start, end: end, records: c.records(ofSeries: index),
                    message: "\(RuleText.connection(c)) read \(RuleText.attribute(s.handle, in: c)) \(count) times every \(RuleText.seconds(Int64(saturating: period * 1e9))) over \(span)\(of)\(Self.interleaving(s, in: c)) although \(why).")
                    .costing(RuleCost.polling(reads: count, valueBytes: s.count > 0 ? s.bytes / s.count : 0, on: c, context)))
            }
        }
        return findings
    }

    /// Why the value can notify, in words, or nil when nothing in the capture says it can: its declaration
    /// (discovered on this link or another link to the peer), or the SIG specification of its UUID.
    static func canNotify(_ handle: UInt16, in c: Connection) -> String? {
        if let characteristic = c.gatt.characteristic(valueHandle: handle) {
            guard characteristic.canNotify else { return nil }
            let kind = characteristic.properties.contains(.notify) ? "Notify" : "Indicate"
            return "it declares \(kind)" + RuleText.databaseOrigin(c)
        }
        if let uuid = c.gatt.uuid(of: handle), let required = MandatoryNotification.requirement(uuid) {
            return "the \(required.specification) specification makes \(required.property.rawValue) mandatory for it (its declaration is not in the capture)"
        }
        return nil
    }

    /// ", interleaved with reads of Humidity (2a6f)": other values the app read over the same time, which a
    /// reader of the timeline might take for one poll.
    static func interleaving(_ s: ActivitySeries, in c: Connection) -> String {
        let others = c.series.filter { o in
            o.kind == .read && o.sent && o.handle != s.handle && o.count >= 3
                && o.first.timestamp < s.last.timestamp && s.first.timestamp < o.last.timestamp
        }
        guard !others.isEmpty else { return "" }
        let names = others.prefix(3).map { RuleText.attribute($0.handle, in: c) }.joined(separator: ", ")
        return " (interleaved with reads of \(names)\(others.count > 3 ? " and \(others.count - 3) more" : ""))"
    }
}
