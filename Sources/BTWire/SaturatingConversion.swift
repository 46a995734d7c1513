extension Int64 {
    /// The nearest representable value: NaN is 0, out-of-range values stick to the bounds. Thresholds from a
    /// config file and durations from corrupt captures can be anything; a plain conversion would trap.
    @inlinable public init(saturating value: Double) {
        if value.isNaN { self = 0 } else if value >= 9.2e18 { self = .max } else if value <= -9.2e18 { self = .min } else { self = Int64(value) }
    }
}

extension Int {
    /// As `Int64(saturating:)`.
    @inlinable public init(saturating value: Double) { self = Int(Int64(saturating: value)) }
}

extension Int64 {
    /// `self − other`, stuck to the bounds instead of trapping: times from corrupt captures can be anything.
    @inlinable public func minusSaturating(_ other: Int64) -> Int64 {
        let (r, overflow) = subtractingReportingOverflow(other)
        return overflow ? (other < 0 ? .max : .min) : r
    }

    /// `self + other`, stuck to the bounds instead of trapping.
    @inlinable public func plusSaturating(_ other: Int64) -> Int64 {
        let (r, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : r
    }
}
