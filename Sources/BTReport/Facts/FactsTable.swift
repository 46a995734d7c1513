/// The tables of `btlens export --format jsonl`: one JSON Lines file per table, flat rows, one schema version for
/// the set. A field is renamed or removed only with a new `schemaVersion`; adding a field keeps the version.
/// Schemas: Sources/BTReport/Schemas/facts/TABLE.schema.json and manifest.schema.json.
public enum FactsTable: String, CaseIterable, Sendable {
    case captures, connections, phases, scans, advertisers, attSeries = "att_series", findings, energy

    /// In every row and in manifest.json.
    public static let schemaVersion = 1

    /// The file this table is written to in the output directory.
    public var fileName: String { rawValue + ".jsonl" }

    /// The manifest of an export directory: the schema version, the btlens version, the rows per table.
    public static func manifest(version: String, rows: [FactsTable: Int]) -> JSONValue {
        .object([
            ("schema_version", .int(schemaVersion)),
            ("btlens_version", .string(version)),
            ("tables", .object(allCases.map { t in
                (t.rawValue, .object([("file", .string(t.fileName)), ("rows", .int(rows[t] ?? 0))]))
            })),
        ])
    }
}

/// The rows of one capture, per table, each already one line of JSON (without its newline).
public struct FactsRows: Sendable {
    public var tables: [FactsTable: [String]] = [:]

    public init() {}

    mutating func append(_ table: FactsTable, _ row: JSONValue) {
        tables[table, default: []].append(row.serialized(indent: nil))
    }

    /// A row already serialised (a line of JSON without its newline).
    mutating func append(_ table: FactsTable, serialized row: String) {
        tables[table, default: []].append(row)
    }

    /// An object's members as one line of JSON without its braces: rows put together from parts made at
    /// different times (`FactsLinkRows`) are the object's serialisation, byte for byte.
    static func members(_ object: JSONValue) -> String {
        String(object.serialized(indent: nil).dropFirst().dropLast())
    }

    public func count(_ table: FactsTable) -> Int { tables[table]?.count ?? 0 }
}
