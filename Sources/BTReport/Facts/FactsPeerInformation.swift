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
    /// The same as reading `GATTReport.peers` (its choice of database, its merged use of attributes), without
    /// making a peer of every address: a capture of 100,000 links to as many addresses keeps here only each
    /// peer's chosen link and the Device Information values read.
    static func byPeer(_ model: CaptureModel, judged: FactsLinkRows? = nil) -> [BDAddr: FactsPeerInformation] {
        let links = model.connections
        // Each peer's database, as `GATTReport.peers` chooses it: the link that gave it (nil: none yet).
        var chosen: [BDAddr: Int?] = [:]
        for (index, c) in links.enumerated() where GATTReport.showsGATT(c) {
            guard let address = c.peerAddress else { continue }
            let current = chosen[address] ?? nil
            if !c.gatt.isEmpty && (current == nil || c.gatt.inheritedFrom == nil) {
                chosen[address] = index
            } else if current == nil {
                chosen[address] = .some(nil)
            }
        }
        // The Device Information values' handles in each peer's database, and the last value read at each (the
        // latest link's, in link order, as `AttributeUsage.add` merges them).
        var wanted: [BDAddr: [UInt16]] = [:]
        var last: [BDAddr: [UInt16: (link: Int, value: [UInt8])]] = [:]
        for c in links where GATTReport.showsGATT(c) {
            guard let address = c.peerAddress, let index = chosen[address] ?? nil else { continue }
            let handles = wanted[address] ?? {
                let h = valueHandles(links[index].gatt)
                wanted[address] = h
                return h
            }()
            for handle in handles {
                guard let value = c.usage[handle]?.lastValue else { continue }
                last[address, default: [:]][handle] = (c.id, value)
            }
        }
        let judgedValues = judged?.peerValues(wanted.filter { !$0.value.isEmpty }) ?? [:]
        var out: [BDAddr: FactsPeerInformation] = [:]
        for (address, index) in chosen {
            guard let index else {
                out[address] = FactsPeerInformation()
                continue
            }
            let values = last[address] ?? [:], earlier = judgedValues[address]
            out[address] = of(database: links[index].gatt) { handle in
                if let e = earlier?.values[handle], e.link > values[handle]?.link ?? 0 { return e.value }
                return values[handle]?.value
            }
        }
        return out
    }

    /// The value handles of a database's Device Information characteristics (those `of(database:value:)` reads).
    static func valueHandles(_ database: GATTDatabase) -> [UInt16] {
        database.characteristics.compactMap { characteristic in
            guard let short = characteristic.uuid.uuid16,
                  short == pnpID || strings.contains(where: { $0.uuid == short }) else { return nil }
            return characteristic.valueHandle
        }
    }

    /// The last value of each attribute a peer's judged links used, and the link that gave it (the latest).
    struct JudgedValues {
        var values: [UInt16: (link: Int, value: [UInt8])] = [:]

        mutating func add(link: Int, handle: UInt16, value: [UInt8]) {
            if let e = values[handle], e.link > link { return }
            values[handle] = (link, value)
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
