import BTWire
import BTCapture
import BTDecode

/// Advertising over time, for the Perfetto export's counters: the advertising reports the host received in each
/// second (per controller), and advertisers' RSSI, sampled from advertising reports (HCI) and advertising PDUs
/// heard on the air. Which advertisers matter (the peers the app connected to) is known only at the end, so every
/// advertiser is sampled, at most once per `minimumInterval`, within a fixed budget of samples: memory stays
/// bounded whatever the capture (the report counts take 16 bytes per second with reports).
public final class AdvertisingSampler {
    public struct Key: Hashable, Sendable {
        public var controller: UInt16
        public var address: BDAddr
    }

    public struct Sample: Sendable {
        public var nanoseconds: Int64
        public var dBm: Int8
    }

    /// One sample per advertiser per second is what a counter track can show over minutes to hours.
    public static let minimumInterval: Int64 = 1_000_000_000
    /// Samples kept in all (16 bytes each): past this, advertisers are no longer sampled.
    public static let budget = 1_000_000

    /// Advertising reports received in one second (Unix time, whole seconds).
    public struct Second: Sendable {
        public var second: Int64
        public var reports: Int
    }

    public private(set) var reportsPerSecond: [UInt16: [Second]] = [:]
    public private(set) var samples: [Key: [Sample]] = [:]
    public private(set) var kept = 0
    /// Reports not sampled because the budget was spent.
    public private(set) var overBudget = 0

    public init() {}

    /// Samples the RSSI of the advertising reports or the advertising PDU in `frame`.
    public func observe(_ frame: DecodedFrame) {
        if case .event(let event)? = frame.hci, let sub = event.subevent,
           sub == .advertisingReport || sub == .extendedAdvertisingReport {
            var reports = AdvertisingReportIterator(subevent: sub, parameters: event.subeventParameters)
            var n = 0
            while let r = reports.next() {
                n += 1
                if let rssi = r.rssi { add(controller: frame.record.controller, address: r.address, rssi: rssi, at: frame.record.timestamp.nanoseconds) }
            }
            count(n, controller: frame.record.controller, at: frame.record.timestamp.nanoseconds)
        } else if frame.record.kind == .linkLayer, let ll = frame.linkLayer, let rssi = ll.packet.rssi,
                  let pdu = ll.advertising {
            // Only what the advertiser itself sent: a scan or connect request's RSSI is the other device's.
            switch pdu.body {
            case .advertising(let advA, _), .directed(let advA, _):
                add(controller: frame.record.controller, address: advA, rssi: rssi, at: frame.record.timestamp.nanoseconds)
            case .extended(let header):
                if let advA = header.advA { add(controller: frame.record.controller, address: advA, rssi: rssi, at: frame.record.timestamp.nanoseconds) }
            default:
                break
            }
        }
    }

    func count(_ reports: Int, controller: UInt16, at ns: Int64) {
        guard reports > 0 else { return }
        let second = ns >= 0 ? ns / 1_000_000_000 : (ns + 1) / 1_000_000_000 - 1
        if let last = reportsPerSecond[controller]?.last, last.second == second {
            reportsPerSecond[controller]![reportsPerSecond[controller]!.count - 1].reports += reports
        } else {
            reportsPerSecond[controller, default: []].append(Second(second: second, reports: reports))
        }
    }

    func add(controller: UInt16, address: BDAddr, rssi: Int8, at ns: Int64) {
        let key = Key(controller: controller, address: address)
        if let last = samples[key]?.last, ns - last.nanoseconds < Self.minimumInterval { return }
        guard kept < Self.budget else {
            overBudget += 1
            return
        }
        samples[key, default: []].append(Sample(nanoseconds: ns, dBm: rssi))
        kept += 1
    }
}
