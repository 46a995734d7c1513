import BTCapture

/// HCI events and ACL packets the controller delivered to the host, each of which can wake it: how many, and
/// how long they kept it awake if each holds it for `holdSeconds` (the HAL's low-power idle timeout: 1 s in
/// public vendor code; ENERGY.md §2.4) — the union of [t, t + hold] over the packets, kept as they arrive (one
/// comparison per packet on the reading thread).
public struct HostWakeups: Sendable, Equatable {
    public static let holdSeconds = 1.0
    static let holdNanoseconds: Int64 = 1_000_000_000
    /// Other HAL timeouts seen, 0.1–3 s: the awake time at those holds lies within [awake / 10, 3 × awake],
    /// since a union of 1 s holds is at most 10 unions of 0.1 s holds shifted, and a union of 3 s holds at most
    /// 3 unions of 1 s holds.
    public static let holdRange = (low: 0.1, high: 3.0)

    public internal(set) var count = 0
    var awakeNanoseconds: Int64 = 0
    var until: Int64 = .min

    public init() {}

    /// Seconds awake at the 1 s hold, and its bounds for holds of 0.1–3 s.
    public var awakeSeconds: (low: Double, typical: Double, high: Double) {
        let typical = Double(awakeNanoseconds) / 1e9
        return (typical * Self.holdRange.low / Self.holdSeconds, typical, typical * Self.holdRange.high / Self.holdSeconds)
    }

    /// Adds [t, t + hold] to the union, which ends at `until` (packets come in time order; one out of order adds
    /// nothing it overlaps).
    @inline(__always)
    mutating func delivered(at t: Int64) {
        count &+= 1
        let end = t &+ Self.holdNanoseconds
        guard end > until else { return }
        awakeNanoseconds &+= t >= until ? Self.holdNanoseconds : end &- until
        until = end
    }
}
