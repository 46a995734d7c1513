/// PDU counts by opcode for one connection: a short list (a link uses a dozen opcodes at most) kept roughly in
/// order of frequency, instead of a 256-entry table per connection that would dominate memory on captures with
/// many connections. A link's traffic interleaves a few opcodes (notifications, writes, a request and its
/// response), so remembering the last hit alone misses most of the time; an entry that outgrows the one before
/// it moves up instead, so the busiest opcodes are found in the first step or two.
public struct OpcodeCounts: Sendable, Equatable {
    var entries: [(opcode: UInt8, count: Int)] = []

    public init() {}

    @inline(__always)
    mutating func increment(_ opcode: UInt8) {
        let found = entries.withUnsafeMutableBufferPointer { e in
            for i in e.indices where e[i].opcode == opcode {
                e[i].count &+= 1
                if i > 0 && e[i].count > e[i - 1].count { e.swapAt(i, i - 1) }
                return true
            }
            return false
        }
        if !found { entries.append((opcode, 1)) }
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
