import BTCapture

extension Connection {
    /// Whether notifications or indications were on for some characteristic at `time` (either side's
    /// subscription): a link waiting for them is not idle by neglect. A CCCD counts as on from a write of a
    /// non-zero value until a write of zero; notifications or indications that arrived show it was on even when
    /// the capture lacks the write (it began later, or a sniffer missed it).
    public func isSubscribed(atNanoseconds time: Int64) -> Bool {
        var state: [UInt16: UInt16] = [:]
        // Characteristics known to be on only because their notifications arrived.
        var inferred: Set<UInt16> = []
        for e in events {
            if e.at.timestamp.nanoseconds > time { break }
            switch e.kind {
            case .subscription(let cccd, let valueHandle, let value, _):
                // Keyed by the characteristic's value handle, which notifications name.
                state[valueHandle ?? gatt.characteristic(containing: cccd)?.valueHandle ?? cccd] = value
                // Turning a subscription off when the database does not say which characteristic each CCCD
                // belongs to: the ones inferred from notifications cannot be told apart, and are taken as off.
                if value == 0, valueHandle == nil { for h in inferred { state[h] = 0 } }
            case .activity(let i):
                let run = runs[i]
                guard run.kind == .notification || run.kind == .indication else { continue }
                if state[run.handle] == nil {
                    state[run.handle] = 1
                    inferred.insert(run.handle)
                }
            default:
                break
            }
        }
        return state.values.contains { $0 != 0 }
    }
}
