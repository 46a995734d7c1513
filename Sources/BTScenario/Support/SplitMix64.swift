import BTWire

/// The scenarios' only source of variation: SplitMix64 (Steele, Lea and Flood, 2014), written out here so a
/// capture rebuilds byte for byte on any toolchain. It deliberately does not conform to
/// `RandomNumberGenerator`: the standard library's `random(in:using:)` algorithms may change between Swift
/// releases, and the system generator and the clock are never used at all.
public struct SplitMix64: Sendable {
    public private(set) var state: UInt64

    public init(seed: UInt64) { self.state = seed }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= SplitMixHash.increment
        return SplitMixHash.finalize(state)
    }

    /// A value in `0..<bound` (0 when `bound` is 0). Lemire's multiply-shift with rejection, so it is unbiased
    /// and needs no division on the common path.
    public mutating func next(below bound: UInt64) -> UInt64 {
        guard bound > 0 else { return 0 }
        var product = next().multipliedFullWidth(by: bound)
        if product.low < bound {
            let threshold = (0 &- bound) % bound
            while product.low < threshold { product = next().multipliedFullWidth(by: bound) }
        }
        return product.high
    }

    /// A value in `range`.
    public mutating func int(in range: ClosedRange<Int>) -> Int {
        let span = UInt64(bitPattern: Int64(range.upperBound &- range.lowerBound)) &+ 1
        return range.lowerBound &+ Int(truncatingIfNeeded: next(below: span))
    }

    /// A value in `range`, as Int64 (microsecond arithmetic).
    public mutating func int64(in range: ClosedRange<Int64>) -> Int64 {
        let span = UInt64(bitPattern: range.upperBound &- range.lowerBound) &+ 1
        return range.lowerBound &+ Int64(bitPattern: next(below: span))
    }

    /// True with probability `numerator / denominator`.
    public mutating func chance(_ numerator: UInt64, in denominator: UInt64) -> Bool {
        next(below: denominator) < numerator
    }

    /// `count` random bytes (keys, nonces, sensor payloads).
    public mutating func bytes(_ count: Int) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(count)
        while out.count < count {
            var word = next()
            for _ in 0..<min(8, count - out.count) {
                out.append(UInt8(truncatingIfNeeded: word))
                word >>= 8
            }
        }
        return out
    }

    /// One element of a non-empty array, nil for an empty one.
    public mutating func element<T>(of items: [T]) -> T? {
        guard !items.isEmpty else { return nil }
        return items[Int(next(below: UInt64(items.count)))]
    }
}
