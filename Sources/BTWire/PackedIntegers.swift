/// Integers that come near each other (positions in a spill file, link ids in close order) in the width of their
/// differences: per block of `blockLength` its first value, and each value as a difference from it. A value too
/// far from its block's first (a value rewritten gigabytes later, a link that closed long after its neighbours) is
/// kept whole aside. A capture of hundreds of thousands of links and scans then spends a half or a quarter of the
/// memory on knowing where they are and whose they are.
public struct PackedIntegers<Value: FixedWidthInteger & SignedInteger & Sendable,
                             Difference: FixedWidthInteger & SignedInteger & Sendable>: RandomAccessCollection, Sendable {
    /// Each block's first value.
    @usableFromInline var bases: [Value] = []
    /// Each value less its block's first; `Difference.min` when it is in `whole`.
    @usableFromInline var differences: [Difference] = []
    /// The values too far from their block's first, by index.
    @usableFromInline var whole: [Int: Value] = [:]

    @usableFromInline static var blockShift: Int { 8 }
    /// Values per block.
    public static var blockLength: Int { 1 << blockShift }
    @usableFromInline static var outOfReach: Difference { .min }

    public init() {}

    public init<S: Sequence<Value>>(_ values: S) {
        // Room for them all at once: grown by doubling, the arrays would hold up to twice what they need.
        reserveCapacity(values.underestimatedCount)
        for v in values { append(v) }
    }

    @inlinable public var startIndex: Int { 0 }
    @inlinable public var endIndex: Int { differences.count }

    @inlinable public subscript(i: Int) -> Value {
        get {
            let d = differences[i]
            if d == Self.outOfReach { return whole[i]! }
            return bases[i >> Self.blockShift] &+ Value(d)
        }
        set {
            let base = bases[i >> Self.blockShift]
            // Compared in 64 bits: the difference of two values may not fit their own width.
            let d = Int64(newValue) &- Int64(base)
            if d > Int64(Self.outOfReach) && d <= Int64(Difference.max) {
                if differences[i] == Self.outOfReach { whole[i] = nil }
                differences[i] = Difference(d)
            } else {
                differences[i] = Self.outOfReach
                whole[i] = newValue
            }
        }
    }

    @inlinable public mutating func append(_ value: Value) {
        // A block starts from its first value, or from the last block's when that one is a mark (negative).
        if differences.count & (Self.blockLength - 1) == 0 { bases.append(value >= 0 ? value : bases.last ?? 0) }
        differences.append(0)
        self[differences.count - 1] = value
    }

    public mutating func reserveCapacity(_ n: Int) {
        differences.reserveCapacity(n)
        bases.reserveCapacity((n + Self.blockLength - 1) / Self.blockLength)
    }
}

extension PackedIntegers: ExpressibleByArrayLiteral {
    public init(arrayLiteral values: Value...) { self.init(values) }
}

/// Positions in a spill file, one per value set aside (`SetAsideArray`, `SpilledRecords`), in 4 bytes each rather
/// than 8: positions written one after another (or nearly: records put in id order) are close together.
public typealias PackedOffsets = PackedIntegers<Int64, Int32>

/// Link ids, one per record set aside (`SpilledRecords`), in 2 bytes each rather than 4: records are written as
/// links are judged, close to id order, and put in id order before they are read.
public typealias PackedIDs = PackedIntegers<Int32, Int16>
