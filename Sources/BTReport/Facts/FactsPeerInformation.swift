import BTWire
import BTCapture
import BTTrack

/// What a peer said about itself in the Device Information service (manufacturer, model, firmware, software and
/// hardware revisions, PnP ID), from the last values the app read over all its connections to that peer
/// (`GATTReport.peers`), as `peer_…` columns of the `connections` table: what a fleet groups slow links by.
struct FactsPeerInformation {
    /// Device Information characteristics that are UTF-8 strings (GATT Specification Supplement), and their column.
    static let strings: [(uuid: UInt16, column: String)] = [
        (0x2A29, "peer_manufacturer"), (0x2A24, "peer_model_number"), (0x2A26, "peer_firmware_revision"),
        (0x2A28, "peer_software_revision"), (0x2A27, "peer_hardware_revision"),
    ]
    /// PnP ID (0x2A50): vendor ID source (1 Bluetooth SIG, 2 USB), vendor ID, product ID, product version.
    static let pnpID: UInt16 = 0x2A50
    static let pnpColumns = ["peer_pnp_vendor_id_source", "peer_pnp_vendor_id", "peer_pnp_product_id", "peer_pnp_product_version"]

    var values: [String: JSONValue] = [:]

    /// The columns, in a fixed order, null where the app never read the value.
    var columns: [(String, JSONValue)] {
        (Self.strings.map(\.column) + Self.pnpColumns).map { ($0, values[$0] ?? .null) }
    }

    /// Per peer address. `judged`: the last values of links judged before the capture ended that let go of
    /// their use of attributes (`FactsLinkRows.peerValues`); a value is the latest link's, as over whole links.
    static func byPeer(_ model: CaptureModel, judged: [BDAddr: JudgedValues] = [:]) -> [String: FactsPeerInformation] {
        var out: [String: FactsPeerInformation] = [:]
        for peer in GATTReport.peers(model) {
            guard let address = peer.address else { continue }
            guard let earlier = judged[address] else {
                out[address.description] = of(database: peer.database) { peer.usage[$0]?.lastValue }
                continue
            }
            // Which link of those still holding their use gave each value (`peer.connections` are in link order).
            var latest: [UInt16: Int] = [:]
            for c in peer.connections {
                for (handle, u) in c.usage where u.lastValue != nil { latest[handle] = c.id }
            }
            out[address.description] = of(database: peer.database) { handle in
                if let e = earlier.values[handle], e.link > latest[handle] ?? 0 { return e.value }
                return peer.usage[handle]?.lastValue
            }
        }
        return out
    }

    /// The last value of each attribute a peer's judged links used, and the link that gave it (the latest).
    struct JudgedValues {
        var values: [UInt16: (link: Int, value: [UInt8])] = [:]

        mutating func add(_ c: Connection) {
            for (handle, u) in c.usage {
                guard let value = u.lastValue else { continue }
                if let e = values[handle], e.link > c.id { continue }
                values[handle] = (c.id, value)
            }
        }
    }

    /// A connection without a peer address: its own values.
    static func of(_ connections: [Connection]) -> FactsPeerInformation {
        guard let c = connections.first else { return FactsPeerInformation() }
        return of(database: c.gatt) { c.usage[$0]?.lastValue }
    }

    static func of(database: GATTDatabase, value: (UInt16) -> [UInt8]?) -> FactsPeerInformation {
        var info = FactsPeerInformation()
        for characteristic in database.characteristics {
            guard let short = characteristic.uuid.uuid16, let bytes = value(characteristic.valueHandle) else { continue }
            if let column = strings.first(where: { $0.uuid == short })?.column {
                info.values[column] = .string(String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self))
            } else if short == pnpID {
                guard bytes.count >= 7 else { continue }
                func u16(_ i: Int) -> JSONValue { .int(Int(bytes[i]) | Int(bytes[i + 1]) << 8) }
                info.values[pnpColumns[0]] = .int(Int(bytes[0]))
                info.values[pnpColumns[1]] = u16(1)
                info.values[pnpColumns[2]] = u16(3)
                info.values[pnpColumns[3]] = u16(5)
            }
        }
        return info
    }

    /// The span of a connection's GATT discovery: from its first procedure's first request to its last
    /// procedure's last response; nil when it discovered nothing.
    static func discovery(_ c: Connection) -> (start: Timestamp, end: Timestamp)? {
        guard let first = c.discoveries.map(\.first.timestamp).min(),
              let last = c.discoveries.map(\.last.timestamp).max() else { return nil }
        return (first, last)
    }
}
