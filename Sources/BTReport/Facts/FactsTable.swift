import BTWire

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

/// The rows of one capture, per table, each one line of JSON (without its newline), in the order they are written.
/// Made with a directory, the rows go to a spill per table (`Spill`) whenever more than `memoryLimit` bytes
/// of them are held, so a capture of any size holds a few megabytes of rows; the table file writer copies the
/// spill, then the rows still held.
public struct FactsRows: Sendable {
    /// What a capture's rows may hold in memory before they are set aside (the output of a busy 1 GB capture is
    /// ~170 MB of rows).
    public static let defaultMemoryLimit = 4 << 20

    /// Rows held, per table, after those set aside; an item may be several lines (`append(_:lines:count:)`).
    private var held: [FactsTable: [String]] = [:]
    private var spilled: [FactsTable: Spill] = [:]
    private var counts: [FactsTable: Int] = [:]
    private var heldBytes = 0
    private let spillDirectory: String?
    public let memoryLimit: Int
    /// The most bytes of rows held at once: at most `memoryLimit` and one row's worth when spilling.
    public private(set) var mostHeldBytes = 0
    /// Why rows could not be set aside (they are then held; a spill's own failure is its `failure`): `write`
    /// throws it, naming the directory.
    public private(set) var failure: String?

    /// Rows held in memory, or set aside in `directory` past `memoryLimit` bytes.
    public init(spillingTo directory: String? = nil, memoryLimit: Int = FactsRows.defaultMemoryLimit) {
        spillDirectory = directory
        self.memoryLimit = memoryLimit
    }

    mutating func append(_ table: FactsTable, _ row: JSONValue) {
        append(table, serialized: row.serialized(indent: nil))
    }

    /// A row already serialised (a line of JSON without its newline).
    mutating func append(_ table: FactsTable, serialized row: String) {
        append(table, lines: row, count: 1)
    }

    /// `count` rows already serialised, joined by newlines (no newline at the end).
    mutating func append(_ table: FactsTable, lines: String, count: Int) {
        guard count > 0 else { return }
        held[table, default: []].append(lines)
        counts[table, default: 0] += count
        heldBytes += lines.utf8.count + 1
        mostHeldBytes = max(mostHeldBytes, heldBytes)
        if heldBytes > memoryLimit, spillDirectory != nil, failure == nil { spill() }
    }

    /// Sets every held row aside; rows that cannot be stay held (`failure`).
    private mutating func spill() {
        for table in FactsTable.allCases {
            guard let items = held[table], !items.isEmpty else { continue }
            let target: Spill
            if let s = spilled[table] {
                target = s
            } else {
                do {
                    target = try Spill(directory: spillDirectory)
                } catch {
                    fail((error as? SpillError)?.cause ?? "\(error)")
                    return
                }
                spilled[table] = target
            }
            for item in items {
                target.append(item + "\n")
                heldBytes -= item.utf8.count + 1
            }
            held[table] = nil
        }
    }

    /// Rows could not be set aside, or were lost: the capture's tables cannot be written.
    mutating func fail(_ cause: String) {
        if failure == nil { failure = cause }
    }

    /// An object's members as one line of JSON without its braces: rows put together from parts made at
    /// different times (`FactsLinkRows`) are the object's serialisation, byte for byte.
    static func members(_ object: JSONValue) -> String {
        String(object.serialized(indent: nil).dropFirst().dropLast())
    }

    public func count(_ table: FactsTable) -> Int { counts[table] ?? 0 }

    /// Every row of a table, in order, read back from where it was set aside.
    public func lines(_ table: FactsTable) -> [String] {
        var bytes: [UInt8] = []
        try? copy(table) { bytes.append(contentsOf: $0) }
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    /// A table's rows as the bytes of its file (each row and its newline), in chunks, in order.
    public func write(_ table: FactsTable, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        if let failure { throw SpillError(path: spillDirectory ?? "", cause: failure) }
        if let failure = spilled[table]?.failure { throw SpillError(path: spillDirectory ?? "", cause: failure) }
        try copy(table, body)
    }

    private func copy(_ table: FactsTable, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        try spilled[table]?.copy(body)
        guard let items = held[table], !items.isEmpty else { return }
        var chunk = items.joined(separator: "\n")
        chunk += "\n"
        try chunk.withUTF8 { try body(UnsafeRawBufferPointer($0)) }
    }
}
