import BTWire
import BTCapture
import BTTrack

/// BTL004: characteristic or descriptor discovery of services/characteristics the app then never used.
public struct DiscoverAllCharacteristicsRule: Rule {
    public static let description = RuleDescription(
        id: "BTL004", name: "discover-all-characteristics", title: "Discovering characteristics that are never used",
        category: .discovery, defaultSeverity: .info,
        rationale: "Each characteristic and descriptor discovery is a chain of request/response round trips, each waiting for connection events. Discovering the characteristics of services the app never touches, or the descriptors of characteristics it never subscribes to, spends radio time during the part of the connection the user waits for.",
        coreBluetooth: "call discoverCharacteristics([uuids], for: service) only for the services you use, and discoverDescriptors(for:) only when you need a descriptor (setNotifyValue does not need it).",
        android: "discoverServices() discovers everything once and caches it; do not call refresh() on the hidden cache, and bond so the cache is reused across connections.",
        options: [RuleOption("minimum_unused", 1, "Unused services (or characteristics) needed to report.")],
        fixtures: [.triggers("wasteful-central", findings: 1, connection: 2), .clean("heart-rate-session")],
        scope: .link
    )

    public init() {}

    public func evaluate(_ model: CaptureModel, context: RuleContext) -> [Finding] {
        var findings: [Finding] = []
        for c in model.appConnections where !c.hidesTraffic {
            let characteristicDiscoveries = c.discoveries.filter { $0.kind == .characteristics && $0.byHost }
            let descriptorDiscoveries = c.discoveries.filter { $0.kind == .descriptors && $0.byHost }
            guard !characteristicDiscoveries.isEmpty else { continue }
            func used(_ lo: UInt16, _ hi: UInt16) -> Bool {
                c.usage.contains { handle, u in handle >= lo && handle <= hi && u.total > 0 }
            }
            let unusedServices = c.gatt.services.filter { s in
                characteristicDiscoveries.contains { $0.startHandle <= s.endHandle && $0.endHandle >= s.startHandle }
                    && !used(s.startHandle, s.endHandle)
                    && !DiscoverAllServicesRule.systemServices.contains(s.uuid)
            }
            // The stack walks the descriptors of the GAP and GATT services itself (the Service Changed CCCD).
            let unusedDescriptorOwners = c.gatt.characteristics.filter { ch in
                descriptorDiscoveries.contains { $0.startHandle > ch.valueHandle && $0.startHandle <= ch.endHandle }
                    && !used(ch.valueHandle, ch.endHandle) && c.gatt.isDataValue(ch.valueHandle)
                    && !Self.stackCharacteristics.contains(ch.uuid)
            }
            // Characteristics discovered with no service discovery at all (Read By Type over the whole range):
            // each one never used counts, but for the GAP and GATT characteristics the stack reads itself.
            let servicesSought = c.discoveries.contains { [.allPrimaryServices, .primaryServiceByUUID, .secondaryServices].contains($0.kind) }
            let sweeps = characteristicDiscoveries.filter { $0.startHandle <= Self.firstHandle && $0.endHandle == Self.lastHandle }
            let unusedCharacteristics = !c.gatt.services.isEmpty || servicesSought ? [] : c.gatt.characteristics.filter { ch in
                sweeps.contains { $0.startHandle <= ch.declarationHandle && $0.endHandle >= ch.declarationHandle }
                    && !used(ch.valueHandle, ch.endHandle) && !Self.stackCharacteristics.contains(ch.uuid)
            }
            let count = unusedServices.count + unusedDescriptorOwners.count + unusedCharacteristics.count
            // Each read or write whose request an air sniffer missed may have used one of them: only what is
            // unused whatever they touched counts towards the threshold.
            guard count - c.missedUses >= Int(context.option("minimum_unused")), let first = characteristicDiscoveries.first else { continue }
            let last = (characteristicDiscoveries + descriptorDiscoveries).map(\.last).max() ?? first.last
            var parts: [String] = []
            if !unusedServices.isEmpty {
                parts.append("the characteristics of \(Plural.of(unusedServices.count, "service")) it never used (\(unusedServices.prefix(4).map(\.name).joined(separator: ", ")))")
            }
            if !unusedCharacteristics.isEmpty {
                parts.append("\(Plural.of(unusedCharacteristics.count, "characteristic")) without discovering services first, and never used \(unusedCharacteristics.count == 1 ? "it" : "them")")
            }
            if !unusedDescriptorOwners.isEmpty {
                parts.append("the descriptors of \(Plural.of(unusedDescriptorOwners.count, "characteristic")) it never used")
            }
            let requests = (characteristicDiscoveries + descriptorDiscoveries).map(\.requests).reduce(0, +)
            findings.append(Finding(
                rule: Self.description, controller: c.controller, connection: c, start: first.first.timestamp,
                end: last.timestamp, records: (characteristicDiscoveries + descriptorDiscoveries).flatMap { $0.records.prefix(1) },
                message: "\(RuleText.connection(c)) discovered \(parts.joined(separator: " and ")); \(requests) discovery requests in all.")
                    .costing(RuleCost.transactions(requests * count / max(1, c.gatt.services.count + c.gatt.characteristics.count), on: c, context)))
        }
        return findings
    }

    /// A sweep over the whole database: Read By Type from the first handle to the last.
    static let firstHandle: UInt16 = 0x0001
    static let lastHandle: UInt16 = 0xFFFF

    /// The GAP and GATT services' characteristics (Core Vol 3 Part C §12, Part G §7): Device Name, Appearance,
    /// Peripheral Privacy Flag, Reconnection Address, Peripheral Preferred Connection Parameters, Service Changed,
    /// Central Address Resolution, Resolvable Private Address Only, Client and Server Supported Features, Database
    /// Hash. The stacks read and subscribe to these themselves.
    static let stackCharacteristics: Set<BluetoothUUID> = Set([0x2A00, 0x2A01, 0x2A02, 0x2A03, 0x2A04, 0x2A05, 0x2AA6,
                                                               0x2AC9, 0x2B29, 0x2B2A, 0x2B3A].map { BluetoothUUID(uuid16: $0) })
}
