import BTCapture

/// When notifications or indications were on for some characteristic of a link (either side's subscription): a link
/// waiting for them is not idle by neglect. Built once from the link's events; each question is a binary search,
/// so a rule asking about every idle stretch of a long link stays linear.
///
/// A CCCD counts as on from a write of a non-zero value until a write of zero; notifications or indications that
/// arrived show it was on even when the capture lacks the write (it began later, or a sniffer missed it).
///
/// Only the app's data subscriptions count (`GATTDatabase.isDataSubscription`): Android, BlueZ and iOS write the
/// Service Changed CCCD themselves on almost every link, and nothing in the GAP or GATT services is the app's data.
public struct SubscriptionTimeline: Sendable {
    /// Times (nanoseconds) at which "something is subscribed" changed, and the state from then on, in time order.
    var changes: [(at: Int64, on: Bool)] = []

    public init(_ c: Connection) {
        var state: [UInt16: UInt16] = [:]
        // Characteristics known to be on only because their notifications arrived.
        var inferred: Set<UInt16> = []
        var on = false
        for e in c.events {
            switch e.kind {
            case .subscription(let cccd, let valueHandle, let value, _):
                guard c.gatt.isDataSubscription(cccd: cccd) else { continue }
                // Keyed by the characteristic's value handle, which notifications name.
                state[valueHandle ?? c.gatt.characteristic(containing: cccd)?.valueHandle ?? cccd] = value
                // Turning a subscription off when the database does not say which characteristic each CCCD
                // belongs to: the ones inferred from notifications cannot be told apart, and are taken as off.
                if value == 0, valueHandle == nil { for h in inferred { state[h] = 0 } }
            case .activity(let i):
                // Read in place: a copy of the run would retain and release its records.
                let kind = c.runs[i].kind, handle = c.runs[i].handle
                guard kind == .notification || kind == .indication, state[handle] == nil,
                      c.gatt.isDataValue(handle) else { continue }
                state[handle] = 1
                inferred.insert(handle)
            default:
                continue
            }
            let now = state.values.contains { $0 != 0 }
            if now != on {
                on = now
                let at = e.at.timestamp.nanoseconds
                // Events of one record change the state once: the last word stands.
                if let last = changes.last, last.at == at { changes.removeLast() }
                if changes.last?.on != now { changes.append((at, now)) }
            }
        }
    }

    /// Whether something was subscribed at `time` (events at `time` included).
    public func isSubscribed(atNanoseconds time: Int64) -> Bool {
        var lo = 0, hi = changes.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if changes[mid].at <= time { lo = mid + 1 } else { hi = mid }
        }
        return lo > 0 && changes[lo - 1].on
    }
}

extension Connection {
    /// `SubscriptionTimeline(self).isSubscribed(atNanoseconds:)`: for one question; build the timeline to ask many.
    public func isSubscribed(atNanoseconds time: Int64) -> Bool {
        SubscriptionTimeline(self).isSubscribed(atNanoseconds: time)
    }
}
