import BTWire
import BTCapture
import BTTrack

/// BTL003: primary service discovery over the whole handle range with no UUID.
public struct DiscoverAllServicesRule: Rule {
    public static let description = RuleDescription(
        id: "BTL003", name: "discover-all-services", title: "Discovering every service",
        category: .discovery, defaultSeverity: .warning,
        rationale: "Discovering all primary services walks the peer's whole attribute table with one Read By Group Type round trip per response, each costing connection events, when the app usually needs one or two services it knows by UUID. Apple calls discovery without UUIDs \"much slower\".",
        coreBluetooth: "pass the service UUIDs the app uses: peripheral.discoverServices([CBUUID(string: \"180D\")]).",
        android: "discoverServices() always discovers everything and caches the result: call it once per bonded device, then use getService(uuid); avoid refreshing the cache.",
        fixtures: [.triggers("wasteful-central", findings: 2, connection: 1), .clean("heart-rate-session")]
    )

    public init() {}

    /// The 0x1800/0x1801 services belong to the OS, not the app.
    static let systemServices: Set<BluetoothUUID> = [BluetoothUUID(uuid16: 0x1800), BluetoothUUID(uuid16: 0x1801)]

    public func evaluate(_ model: CaptureModel, context: RuleContext) -> [Finding] {
        var findings: [Finding] = []
        var repeats = RepeatNumbering()
        for c in model.connections {
            for d in c.discoveries where d.kind == .allPrimaryServices && d.isFullRange && d.byHost {
                let services = c.gatt.services.filter { $0.isPrimary }
                let used = services.filter { s in
                    c.usage.contains { handle, u in handle >= s.startHandle && handle <= s.endHandle && u.total > 0 }
                }
                let appServices = services.filter { !Self.systemServices.contains($0.uuid) }
                findings.append(Finding(
                    rule: Self.description, controller: c.controller, connection: c,
                    discriminator: repeats.discriminator(key: "\(c.id)"), start: d.first.timestamp,
                    end: d.last.timestamp, records: d.records,
                    message: "\(RuleText.connection(c)) discovered all \(services.count) primary services (\(appServices.count) besides GAP/GATT) in \(Plural.of(d.requests, "request")) over \(RuleText.seconds(d.last.timestamp.nanoseconds - d.first.timestamp.nanoseconds)), then used \(used.count) of them."))
            }
        }
        return findings
    }
}
