import BTCapture

/// HCI events and ACL packets the controller delivered to the host, each of which can wake it: how many, and
/// how long they kept it awake if each holds it for a while (the HAL's low-power idle timeout: 1 s in public
/// vendor code, 0.1–3 s in others; ENERGY.md §2.4) — the union of [t, t + hold] over the packets, kept for the
/// three holds as the packets arrive.
public struct HostWakeups: Sendable, Equatable {
    /// The holds whose awake time is kept: low, typical, high.
    public static let holdSeconds: (low: Double, typical: Double, high: Double) = (0.1, 1, 3)
    static let holdNanoseconds: (Int64, Int64, Int64) = (100_000_000, 1_000_000_000, 3_000_000_000)

    public internal(set) var count = 0
    /// Seconds awake at each hold.
    public var awakeSeconds: (low: Double, typical: Double, high: Double) {
        (Double(awake.0) / 1e9, Double(awake.1) / 1e9, Double(awake.2) / 1e9)
    }
    var awake: (Int64, Int64, Int64) = (0, 0, 0)
    var until: (Int64, Int64, Int64) = (.min, .min, .min)

    public init() {}

    @inline(__always)
    mutating func delivered(at t: Int64) {
        count &+= 1
        Self.extend(&awake.0, &until.0, t, Self.holdNanoseconds.0)
        Self.extend(&awake.1, &until.1, t, Self.holdNanoseconds.1)
        Self.extend(&awake.2, &until.2, t, Self.holdNanoseconds.2)
    }

    /// Adds [t, t + hold] to a union that ends at `until` (packets come in time order; one out of order adds
    /// nothing it overlaps).
    @inline(__always)
    static func extend(_ awake: inout Int64, _ until: inout Int64, _ t: Int64, _ hold: Int64) {
        let end = t &+ hold
        guard end > until else { return }
        awake &+= t >= until ? hold : end &- until
        until = end
    }

    public static func == (a: HostWakeups, b: HostWakeups) -> Bool {
        a.count == b.count && a.awake == b.awake
    }
}
