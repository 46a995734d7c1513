import BTWire
import BTCapture
import BTTrack

/// BTL005: three or more Read Requests at a regular period of a value whose characteristic can notify.
public struct PollInsteadOfNotifyRule: Rule {
    public static let description = RuleDescription(
        id: "BTL005", name: "poll-instead-of-notify", title: "Polling a value that can notify",
        category: .transfer, defaultSeverity: .warning,
        rationale: "Each read is a request and a response, two packets and usually two connection events, repeated on a timer whether or not the value changed. A characteristic that declares Notify or Indicate can push the value only when it changes, in one packet.",
        coreBluetooth: "call peripheral.setNotifyValue(true, for: characteristic) and handle peripheral(_:didUpdateValueFor:error:) instead of calling readValue(for:) on a timer.",
        android: "call setCharacteristicNotification(characteristic, true) and write ENABLE_NOTIFICATION_VALUE to its Client Characteristic Configuration descriptor, then handle onCharacteristicChanged, instead of readCharacteristic() on a timer.",
        options: [
            RuleOption("minimum_reads", 3, "Reads in a run needed to report."),
            RuleOption("maximum_variation", 0.35, "Largest coefficient of variation of the intervals that still counts as a regular period."),
        ],
        fixtures: [.triggers("wasteful-central", findings: 1, connection: 1, attributeHandle: 0x0019),
                   .clean("heart-rate-session"), .clean("fragmented-acl")]
    )

    public init() {}

    public func evaluate(_ model: CaptureModel, context: RuleContext) -> [Finding] {
        var findings: [Finding] = []
        var repeats = RepeatNumbering()
        for c in model.connections {
            for run in c.runs where run.kind == .read && run.sent && run.count >= Int(context.option("minimum_reads")) {
                guard let characteristic = c.gatt.characteristic(valueHandle: run.handle), characteristic.canNotify,
                      let variation = run.intervalVariation, variation <= context.option("maximum_variation"),
                      let period = run.meanInterval
                else { continue }
                let kind = characteristic.properties.contains(.notify) ? "Notify" : "Indicate"
                findings.append(Finding(
                    rule: Self.description, controller: c.controller, connection: c, attributeHandle: run.handle,
                    discriminator: repeats.discriminator(key: "\(c.id)|\(run.handle)"),
                    start: run.first.timestamp, end: run.last.timestamp, records: run.records,
                    message: "\(RuleText.connection(c)) read \(RuleText.attribute(run.handle, in: c)) \(run.count) times every \(RuleText.seconds(Int64(saturating: period * 1e9))) although it declares \(kind)."))
            }
        }
        return findings
    }
}
