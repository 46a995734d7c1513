import BTWire
import BTCapture
import BTDecode

/// Advertisers' RSSI over time, sampled from advertising reports (HCI) and advertising PDUs heard on the air, for
/// the Perfetto export's RSSI counters. Which advertisers matter (the peers the app connected to) is known only
/// at the end, so every advertiser is sampled, at most once per `minimumInterval`, within a fixed budget of
/// samples: memory stays bounded whatever the capture.
public final class RSSISampler {
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
            while let r = reports.next() {
                if let rssi = r.rssi { add(controller: frame.record.controller, address: r.address, rssi: rssi, at: frame.record.timestamp.nanoseconds) }
            }
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
