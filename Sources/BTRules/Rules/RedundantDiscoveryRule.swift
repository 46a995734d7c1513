import BTWire
import BTCapture
import BTTrack

/// BTL008: full discovery repeated on reconnection to the same peer (GATT caching not used).
public struct RedundantDiscoveryRule: Rule {
    public static let description = RuleDescription(
        id: "BTL008", name: "redundant-discovery", title: "Discovering the same database again on reconnection",
        category: .discovery, defaultSeverity: .warning,
        rationale: "A peer's GATT database rarely changes between connections; rediscovering it repeats every discovery round trip each time the app reconnects. Bonded devices and the GATT Caching feature (Database Hash, Service Changed) let the client skip it.",
        coreBluetooth: "iOS caches discovered services for bonded and known peripherals; keep the CBPeripheral and its discovered services instead of calling discoverServices(nil) on every connection, and rediscover only after peripheral(_:didModifyServices:).",
        android: "bond with the device (createBond()) so the stack's GATT cache is kept, and don't call the hidden BluetoothGatt.refresh(); reuse getServices() after onServicesDiscovered.",
        fixtures: [.triggers("wasteful-central", findings: 1, connection: 2), .clean("heart-rate-session")]
    )

    public init() {}

    public func evaluate(_ model: CaptureModel, context: RuleContext) -> [Finding] {
        var findings: [Finding] = []
        var discovered: [BDAddr: Connection] = [:]
        for c in model.appConnections {
            guard let peer = c.peerAddress else { continue }
            let serviceDiscovery = c.discoveries.filter { ($0.kind == .allPrimaryServices || $0.kind == .primaryServiceByUUID) && $0.byHost }
            if let first = serviceDiscovery.first, let earlier = discovered[peer] {
                let last = c.discoveries.map(\.last).max() ?? first.last
                let requests = c.discoveries.map(\.requests).reduce(0, +)
                let same = earlier.gatt.services.map(\.uuid) == c.gatt.services.map(\.uuid)
                findings.append(Finding(
                    rule: Self.description, controller: c.controller, connection: c, start: first.first.timestamp,
                    end: last.timestamp, records: [earlier.start, first.first],
                    message: "\(RuleText.connection(c)) ran discovery again (\(Plural.of(requests, "request")), \(RuleText.seconds(last.timestamp.nanoseconds - first.first.timestamp.nanoseconds))) although \(RuleText.connection(earlier)) had already discovered \(same ? "the same" : "this peer's") \(Plural.of(c.gatt.services.count, "service")).")
                    .costing(RuleCost.transactions(requests, on: c, context)))
            }
            if !serviceDiscovery.isEmpty { discovered[peer] = c }
        }
        return findings
    }
}
