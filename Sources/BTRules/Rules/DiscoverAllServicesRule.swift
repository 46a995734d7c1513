import BTWire
import BTCapture
import BTTrack

/// BTL003: primary service discovery over the whole handle range with no UUID, when the app then left some of
/// the services it found unused. An app that goes on to use every service (besides GAP and GATT) found them
/// the cheapest way; sweeping the range is waste only for what it did not need.
public struct DiscoverAllServicesRule: Rule {
    public static let description = RuleDescription(
        id: "BTL003", name: "discover-all-services", title: "Discovering every service",
        category: .discovery, defaultSeverity: .warning,
        rationale: "Discovering all primary services walks the peer's whole attribute table with one Read By Group Type round trip per response, each costing connection events, and is followed by characteristic discovery of services the app never touches. Apple calls discovery without UUIDs \"much slower\".",
        coreBluetooth: "pass the service UUIDs the app uses: peripheral.discoverServices([CBUUID(string: \"180D\")]).",
        android: "discoverServices() always discovers everything and caches the result: bond with the device so the cache lasts, call it once per connection, then use getService(uuid); avoid refreshing the cache.",
        options: [
            RuleOption("minimum_unused", 1, "Discovered services (besides GAP and GATT) left unused that are reported."),
            RuleOption("warning_unused_share", 0.5, "Share of the discovered services left unused from which the finding is a warning (info below)."),
        ],
        fixtures: [.triggers("wasteful-central", findings: 1, connection: 2), .clean("heart-rate-session")]
    )

    public init() {}

    /// The 0x1800/0x1801 services belong to the OS, not the app.
    static let systemServices: Set<BluetoothUUID> = [BluetoothUUID(uuid16: 0x1800), BluetoothUUID(uuid16: 0x1801)]

    public func evaluate(_ model: CaptureModel, context: RuleContext) -> [Finding] {
        var findings: [Finding] = []
        var repeats = RepeatNumbering()
        let android = model.platform.platform == .android
        // Links that took their database from another's cache, by that other link: built once, not per discovery.
        var inheritors: [Int: [Connection]] = [:]
        for c in model.appConnections where c.gatt.origin == .inherited {
            if let from = c.gatt.inheritedFrom { inheritors[from, default: []].append(c) }
        }
        for c in model.appConnections where !c.hidesTraffic {
            for d in c.discoveries where d.kind == .allPrimaryServices && d.isFullRange && d.byHost {
                let services = c.gatt.services.filter { $0.isPrimary }
                let appServices = services.filter { !Self.systemServices.contains($0.uuid) }
                // The database serves this link and the later links that took it from the OS's cache.
                let users = [c] + (inheritors[c.id] ?? [])
                let unused = appServices.filter { s in
                    !users.contains { u in
                        u.usage.contains { handle, use in handle >= s.startHandle && handle <= s.endHandle && use.total > 0 }
                    }
                }
                // Each read or write whose request an air sniffer missed may have used one of them: only what is
                // unused whatever they touched counts towards the threshold.
                let surelyUnused = unused.count - users.map(\.missedUses).reduce(0, +)
                guard !appServices.isEmpty, Double(surelyUnused) >= max(1, context.option("minimum_unused")) else { continue }
                let share = Double(unused.count) / Double(appServices.count)
                let severity: Severity = share >= context.option("warning_unused_share") ? .warning : .info
                let names = unused.prefix(4).map(\.name).joined(separator: ", ") + (unused.count > 4 ? ", …" : "")
                var message = "\(RuleText.connection(c)) discovered all \(services.count) primary services (\(appServices.count) besides GAP/GATT) in \(Plural.of(d.requests, "request")) over \(RuleText.seconds(d.last.timestamp.nanoseconds - d.first.timestamp.nanoseconds)), then left \(unused.count) of the \(appServices.count) unused (\(names))."
                var advice: String?
                if android {
                    message += " Android's discoverServices() always discovers every service: the app cannot ask for fewer, but can bond so the result stays cached and discovery is not repeated."
                    advice = "Android: \(Self.description.android)"
                }
                var finding = Finding(
                    rule: Self.description, severity: severity, controller: c.controller, connection: c,
                    discriminator: repeats.discriminator(key: "\(c.id)"), start: d.first.timestamp,
                    end: d.last.timestamp, records: d.records, message: message)
                if let advice { finding.advice = advice }
                // Saved: the sweep's requests beyond one discovery by UUID per service the app used.
                finding.cost = RuleCost.transactions(d.requests - (appServices.count - unused.count), on: c, context)
                findings.append(finding)
            }
        }
        return findings
    }
}
