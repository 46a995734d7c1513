import BTWire

/// A plain-text table with a header row, columns padded to their widest cell (in terminal columns),
/// numbers right-aligned. The last column is never padded, so lines carry no trailing spaces.
struct TextTable {
    enum Alignment { case left, right }

    var headers: [String]
    var alignments: [Alignment]
    var rows: [[String]] = []
    /// Prefix of every line.
    var indent = "  "

    init(_ columns: [(String, Alignment)]) {
        headers = columns.map(\.0)
        alignments = columns.map(\.1)
    }

    mutating func add(_ row: [String]) { rows.append(row) }

    static func width(_ cell: String) -> Int { TerminalWidth.of(cell) }

    func render() -> [String] {
        var lines: [String] = []
        write(rows: rows.count, row: { rows[$0] }) { lines.append($0) }
        return lines
    }

    /// The table of `rows` rows, each made by `row` when needed — twice, once for the widths and once for its line —
    /// given line by line to `out`: a table of a long capture's scans is never held whole.
    func write(rows count: Int, row: (Int) -> [String], to out: (String) -> Void) {
        var widths = headers.map(Self.width)
        for r in 0..<count {
            for (i, cell) in row(r).enumerated() where i < widths.count { widths[i] = max(widths[i], Self.width(cell)) }
        }
        // Lines are assembled as UTF-8 bytes: padding with String(repeating:) and += per cell dominated the
        // time of a table with thousands of advertisers.
        var bytes: [UInt8] = []
        func line(_ cells: [String]) -> String {
            bytes.removeAll(keepingCapacity: true)
            bytes.append(contentsOf: indent.utf8)
            for (i, cell) in cells.enumerated() where i < widths.count {
                let pad = widths[i] - Self.width(cell)
                let last = i == cells.count - 1
                switch alignments[i] {
                case .left:
                    bytes.append(contentsOf: cell.utf8)
                    if !last { bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: pad)) }
                case .right:
                    bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: pad))
                    bytes.append(contentsOf: cell.utf8)
                }
                if !last { bytes.append(contentsOf: "  ".utf8) }
            }
            while bytes.last == UInt8(ascii: " ") { bytes.removeLast() }
            return String(decoding: bytes, as: UTF8.self)
        }
        out(line(headers))
        for r in 0..<count { out(line(row(r))) }
    }
}
