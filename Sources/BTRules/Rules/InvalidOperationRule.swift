import BTWire
import BTCapture
import BTTrack

/// BTL012: reads of unreadable and writes to unwritable characteristics, CCCD writes without Notify/Indicate,
/// as the discovered properties and ATT errors show.
public struct InvalidOperationRule: Rule {
    public static let description = RuleDescription(
        id: "BTL012", name: "invalid-operation", title: "Operations the characteristic does not support",
        category: .correctness, defaultSeverity: .warning,
        rationale: "A request the characteristic's properties rule out costs a full round trip for an error response, and usually means the app reads or writes the wrong characteristic or never gets the data it expects.",
        coreBluetooth: "check characteristic.properties (.read, .write, .writeWithoutResponse, .notify, .indicate) before readValue(for:), writeValue(_:for:type:) or setNotifyValue(_:for:).",
        android: "check BluetoothGattCharacteristic.getProperties() (PROPERTY_READ, PROPERTY_WRITE, PROPERTY_WRITE_NO_RESPONSE, PROPERTY_NOTIFY, PROPERTY_INDICATE) before readCharacteristic(), writeCharacteristic() or enabling notifications.",
        fixtures: [.triggers("wasteful-central", findings: 2, connection: 1), .clean("heart-rate-session")],
        scope: .link
    )

    public init() {}

    public func evaluate(_ model: CaptureModel, context: RuleContext) -> [Finding] {
        var findings: [Finding] = []
        for c in model.appConnections {
            var reported = Set<UInt16>()
            // ATT errors that say the operation is not allowed.
            for e in c.events {
                guard e.byHost, case .attError(let request, let handle, let error) = e.kind,
                      [.readNotPermitted, .writeNotPermitted, .requestNotSupported].contains(error),
                      reported.insert(handle).inserted
                else { continue }
                let props = c.gatt.characteristic(valueHandle: handle).map { " (properties: \($0.properties))" } ?? ""
                findings.append(Finding(
                    rule: Self.description, controller: c.controller, connection: c, attributeHandle: handle,
                    start: e.at.timestamp, end: e.at.timestamp, records: [e.at],
                    message: "\(request) to \(RuleText.attribute(handle, in: c)) on \(RuleText.connection(c)) failed with \(error)\(props).")
                    .costing(RuleCost.transactions(1, on: c, context)))
            }
            // Operations the discovered properties rule out, even when the peer did not object.
            // (Usage counts both sides' operations: in the peripheral role the peer is the client, so skip.)
            for ch in c.gatt.characteristics where c.role != .peripheral && !reported.contains(ch.valueHandle) {
                guard let u = c.usage[ch.valueHandle] else { continue }
                var problems: [String] = []
                if u.reads > 0 && !ch.properties.contains(.read) { problems.append("read \(u.reads)× without the Read property") }
                if u.writeRequests > 0 && !ch.properties.contains(.write) { problems.append("written with response \(u.writeRequests)× without the Write property") }
                if u.writeCommands > 0 && !ch.properties.contains(.writeWithoutResponse) && !ch.properties.contains(.authenticatedSignedWrites) {
                    problems.append("written without response \(u.writeCommands)× without that property")
                }
                guard !problems.isEmpty, let at = u.lastValueAt ?? c.firstATT else { continue }
                reported.insert(ch.valueHandle)
                findings.append(Finding(
                    rule: Self.description, controller: c.controller, connection: c, attributeHandle: ch.valueHandle,
                    start: at.timestamp, end: at.timestamp, records: [at],
                    message: "\(RuleText.attribute(ch.valueHandle, in: c)) on \(RuleText.connection(c)) was \(problems.joined(separator: " and ")) (properties: \(ch.properties)).")
                    .costing(RuleCost.transactions(1, on: c, context)))
            }
            // CCCD writes for characteristics that can neither notify nor indicate.
            for e in c.events {
                guard case .subscription(let cccd, _, let value, let sent) = e.kind, sent, value != 0,
                      let ch = c.gatt.characteristic(containing: cccd), !ch.canNotify, reported.insert(cccd).inserted
                else { continue }
                findings.append(Finding(
                    rule: Self.description, controller: c.controller, connection: c, attributeHandle: cccd,
                    start: e.at.timestamp, end: e.at.timestamp, records: [e.at],
                    message: "\(RuleText.connection(c)) enabled \(value & 2 != 0 ? "indications" : "notifications") on \(ch.name), which declares neither Notify nor Indicate.")
                    .costing(RuleCost.transactions(1, on: c, context)))
            }
        }
        return findings
    }
}
