/// Positions in a spill file, one per value set aside (`SetAsideArray`, `SpilledRecords`), in 4 bytes each rather
/// than 8: per block of `blockLength` its first position, and each position as a 32-bit difference from it.
/// Positions written one after another (or nearly: records put in id order) are close together, so the
/// differences fit; one that does not (a value rewritten gigabytes later) is kept whole aside. A capture of
/// hundreds of thousands of links and scans then spends half the memory on knowing where they are.
public struct PackedOffsets: RandomAccessCollection, Sendable {
    /// Each block's first position.
    @usableFromInline var bases: [Int64] = []
    /// Each position less its block's first; `Int32.min` when it is in `whole`.
    @usableFromInline var differences: [Int32] = []
    /// The positions too far from their block's first, by index.
    @usableFromInline var whole: [Int: Int64] = [:]

    @usableFromInline static var blockShift: Int { 8 }
    /// Positions per block.
    public static var blockLength: Int { 1 << blockShift }
    @usableFromInline static var outOfReach: Int32 { .min }

    public init() {}

    public init<S: Sequence<Int64>>(_ positions: S) {
        for p in positions { append(p) }
    }

    @inlinable public var startIndex: Int { 0 }
    @inlinable public var endIndex: Int { differences.count }

    @inlinable public subscript(i: Int) -> Int64 {
        get {
            let d = differences[i]
            if d == Self.outOfReach { return whole[i]! }
            return bases[i >> Self.blockShift] &+ Int64(d)
        }
        set {
            let d = newValue &- bases[i >> Self.blockShift]
            if d > Int64(Self.outOfReach) && d <= Int64(Int32.max) {
                if differences[i] == Self.outOfReach { whole[i] = nil }
                differences[i] = Int32(d)
            } else {
                differences[i] = Self.outOfReach
                whole[i] = newValue
            }
        }
    }

    @inlinable public mutating func append(_ position: Int64) {
        // A block starts from its first position, or from the last block's when that one is a mark (negative).
        if differences.count & (Self.blockLength - 1) == 0 { bases.append(position >= 0 ? position : bases.last ?? 0) }
        differences.append(0)
        self[differences.count - 1] = position
    }

    public mutating func reserveCapacity(_ n: Int) {
        differences.reserveCapacity(n)
        bases.reserveCapacity((n + Self.blockLength - 1) / Self.blockLength)
    }
}
