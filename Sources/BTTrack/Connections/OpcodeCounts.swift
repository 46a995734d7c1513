/// PDU counts by opcode for one connection. A link uses a dozen opcodes at most, and nearly always fewer than
/// `inlineOpcodes`: the first ones are held inline, their opcodes one byte each in a word that one comparison
/// searches, their counts beside them, and any past those in a short list. A 256-entry table per connection would
/// dominate memory on captures with many connections; a list alone cost a check that its storage was not shared
/// at every ATT PDU.
public struct OpcodeCounts: Sendable, Equatable {
    /// Opcodes held inline: a word's bytes.
    static let inlineOpcodes = 8
    /// The inline opcodes, byte `i` counted by `counts` lane `i`; the lanes from `used` on are free.
    private var opcodes: UInt64 = 0
    private var counts: (Int, Int, Int, Int, Int, Int, Int, Int) = (0, 0, 0, 0, 0, 0, 0, 0)
    private var used = 0
    /// Opcodes past the inline ones.
    private var more: [(opcode: UInt8, count: Int)] = []

    public init() {}

    @inline(__always)
    mutating func increment(_ opcode: UInt8) {
        if let lane = lane(of: opcode) {
            withUnsafeMutableBytes(of: &counts) { $0.baseAddress!.assumingMemoryBound(to: Int.self)[lane] &+= 1 }
        } else if used < Self.inlineOpcodes {
            opcodes |= UInt64(opcode) << (8 * UInt64(used))
            withUnsafeMutableBytes(of: &counts) { $0.baseAddress!.assumingMemoryBound(to: Int.self)[used] = 1 }
            used += 1
        } else if let i = more.firstIndex(where: { $0.opcode == opcode }) {
            more[i].count += 1
        } else {
            more.append((opcode, 1))
        }
    }

    /// The lane of `opcode` among the inline ones: the lowest byte of `opcodes` equal to it, when in use.
    @inline(__always)
    private func lane(of opcode: UInt8) -> Int? {
        // A byte equal to the opcode is a zero byte of the XOR; the lowest one is found exactly (borrows only run
        // upwards from it).
        let x = opcodes ^ (UInt64(opcode) &* 0x0101_0101_0101_0101)
        let zeros = (x &- 0x0101_0101_0101_0101) & ~x & 0x8080_8080_8080_8080
        guard zeros != 0 else { return nil }
        let lane = zeros.trailingZeroBitCount / 8
        return lane < used ? lane : nil
    }

    /// Every opcode seen and its count: the inline ones in the order first seen, then the rest.
    private var entries: [(opcode: UInt8, count: Int)] {
        var out: [(opcode: UInt8, count: Int)] = []
        withUnsafeBytes(of: counts) { c in
            for lane in 0..<used {
                out.append((UInt8(truncatingIfNeeded: opcodes >> (8 * UInt64(lane))),
                            c.baseAddress!.assumingMemoryBound(to: Int.self)[lane]))
            }
        }
        return out + more
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
