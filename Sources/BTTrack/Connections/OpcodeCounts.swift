/// PDU counts by opcode for one connection: a short list (a link uses a dozen opcodes at most) with the last
/// hit first in line, instead of a 256-entry table per connection that would dominate memory on captures with
/// many connections.
public struct OpcodeCounts: Sendable, Equatable {
    var entries: [(opcode: UInt8, count: Int)] = []
    var last = 0

    public init() {}

    @inline(__always)
    mutating func increment(_ opcode: UInt8) {
        if last < entries.count, entries[last].opcode == opcode {
            entries[last].count += 1
            return
        }
        if let i = entries.firstIndex(where: { $0.opcode == opcode }) {
            entries[i].count += 1
            last = i
        } else {
            entries.append((opcode, 1))
            last = entries.count - 1
        }
    }

    public subscript(opcode: UInt8) -> Int { entries.first { $0.opcode == opcode }?.count ?? 0 }

    public var total: Int { entries.reduce(0) { $0 + $1.count } }

    /// Only the opcodes seen.
    public var dictionary: [UInt8: Int] {
        var out: [UInt8: Int] = [:]
        for e in entries { out[e.opcode] = e.count }
        return out
    }

    public static func == (a: OpcodeCounts, b: OpcodeCounts) -> Bool { a.dictionary == b.dictionary }
}
