import BTWire
import BTCapture
import BTDecode

/// What one advertiser (address + type) sent in its advertising reports.
///
/// Values parsed from the advertising data are the latest seen, except `names` and `serviceUUIDs`, which
/// collect every distinct value (bounded by `Advertiser.listLimit`; service and manufacturer data keep one
/// entry per UUID or company). Data is parsed only when it differs
/// from the advertiser's previous data of the same kind, so `dataChanges` also says how often it changed.
public struct Advertiser: Sendable {
    public var address: BDAddr
    public var addressType: AddressType
    /// Advertising reports from this advertiser, scan responses and chained fragments included.
    public var reports: Int
    public var firstSeen: RecordRef
    public var lastSeen: RecordRef

    /// Reports that were scan responses (included in `reports`).
    public var scanResponses: Int
    /// Distinct local names (Complete and Shortened), in the order first seen.
    public var names: [String]
    /// The most recent name, if any.
    public var name: String?
    /// Distinct advertised service UUIDs (16-, 32- and 128-bit lists), in the order first seen.
    public var serviceUUIDs: [BluetoothUUID]
    /// Service Data, one entry per UUID with its latest data.
    public var serviceData: [AdvertisingDataView.ServiceData]
    /// Manufacturer Specific Data, one entry per company with its latest data.
    public var manufacturerData: [AdvertisingDataView.ManufacturerData]
    /// The latest iBeacon frame (major/minor big-endian, as decoded by `IBeacon`).
    public var iBeacon: IBeacon?
    /// TX Power Level from the advertising data (AD type 0x0A), dBm.
    public var txPowerLevel: Int8?
    /// TX power from the extended report header (the advertiser's own figure), dBm.
    public var reportedTxPower: Int8?
    public var appearance: UInt16?
    public var flags: AdvertisingDataView.Flags?
    /// Sent at least one connectable PDU (ADV_IND, ADV_DIRECT_IND, or an extended connectable type).
    public var isConnectable: Bool
    public var eventTypes: AdvertisingEventTypes
    /// Sent extended (non-legacy) advertising PDUs.
    public var usesExtendedAdvertising: Bool
    /// Advertising SIDs seen (bit n = SID n; extended advertising only).
    public var advertisingSIDs: UInt16
    /// nil when no report carried an RSSI (127 = not available).
    public var rssi: RSSIStatistics?
    /// Times the advertising or scan-response data differed from the previous data of the same kind.
    public var dataChanges: Int
    /// Chained extended advertisements that ended truncated (data status 2) or could not be joined.
    public var truncatedAdvertisements: Int
    /// The advertising data is malformed (a structure runs past the end) in at least one distinct version.
    public var malformedData: Bool

    /// Entries kept per list (names, UUIDs, service and manufacturer data); a device rotating more values
    /// than this keeps the first ones.
    public static let listLimit = 16


    init(address: BDAddr, addressType: AddressType, at: RecordRef) {
        self.address = address
        self.addressType = addressType
        reports = 0
        firstSeen = at
        lastSeen = at
        scanResponses = 0
        names = []
        name = nil
        serviceUUIDs = []
        serviceData = []
        manufacturerData = []
        iBeacon = nil
        txPowerLevel = nil
        reportedTxPower = nil
        appearance = nil
        flags = nil
        isConnectable = false
        eventTypes = AdvertisingEventTypes()
        usesExtendedAdvertising = false
        advertisingSIDs = 0
        rssi = nil
        dataChanges = 0
        truncatedAdvertisements = 0
        malformedData = false
    }
}

/// Minimum, median and maximum RSSI of an advertiser's reports, dBm.
public struct RSSIStatistics: Sendable, Equatable {
    public var minimum: Int8
    /// The lower median: the value at position (n − 1) / 2 of the sorted samples.
    public var median: Int8
    public var maximum: Int8
    /// Reports that carried an RSSI.
    public var samples: Int

    public init(minimum: Int8, median: Int8, maximum: Int8, samples: Int) {
        self.minimum = minimum
        self.median = median
        self.maximum = maximum
        self.samples = samples
    }
}

/// The kinds of advertising PDU an advertiser sent, as a set of the five extended event-type property bits
/// (connectable, scannable, directed, scan response, legacy; Core Vol 4 Part E §7.7.65.13). Legacy reports
/// map to their extended equivalents (ADV_IND = 0x13, …), so one advertiser seen by both kinds of scan shows
/// each PDU kind once.
public struct AdvertisingEventTypes: Sendable, Hashable {
    /// Bit n set = property combination n seen.
    public var mask: UInt32 = 0

    public init(mask: UInt32 = 0) { self.mask = mask }

    /// The five property bits of a report's event type, or nil for an invalid legacy type.
    @inline(__always)
    static func properties(_ report: AdvertisingReport) -> UInt16? {
        if report.isExtended { return report.eventType & 0x1F }
        // ADV_IND 0x13, ADV_DIRECT_IND 0x15, ADV_SCAN_IND 0x12, ADV_NONCONN_IND 0x10, SCAN_RSP 0x1B
        // (Core Vol 4 Part E §7.7.65.13), without an array lookup on the per-report path.
        switch report.eventType {
        case 0: return 0x13
        case 1: return 0x15
        case 2: return 0x12
        case 3: return 0x10
        case 4: return 0x1B
        default: return nil
        }
    }

    /// Names for display: legacy PDU names ("ADV_IND", "SCAN_RSP") and extended ones ("ext-connectable").
    public var names: [String] {
        var out: [String] = []
        for bit in 0..<32 where mask & (1 << UInt32(bit)) != 0 {
            let name = Self.name(UInt16(bit))
            if !out.contains(name) { out.append(name) }
        }
        return out
    }

    /// The name of a five-bit property combination.
    public static func name(_ p: UInt16) -> String {
        if p & 0x10 != 0 {
            switch p {
            case 0x13: return "ADV_IND"
            case 0x15: return "ADV_DIRECT_IND"
            case 0x12: return "ADV_SCAN_IND"
            case 0x10: return "ADV_NONCONN_IND"
            case 0x1B, 0x1A: return "SCAN_RSP"
            default: return "legacy-" + Hex.u8(UInt8(p))
            }
        }
        var parts: [String] = []
        if p & 0x01 != 0 { parts.append("connectable") }
        if p & 0x02 != 0 { parts.append("scannable") }
        if p & 0x04 != 0 { parts.append("directed") }
        if p & 0x08 != 0 { parts.append("scan-response") }
        if parts.isEmpty { parts.append("nonconnectable") }
        return "ext-" + parts.joined(separator: "-")
    }
}

/// Advertisers beyond `AdvertiserTracker.advertiserLimit`: not kept, only counted.
public struct AdvertiserOverflow: Sendable, Equatable {
    /// Reports from advertisers that were not kept.
    public var reports: Int
    /// Distinct advertisers not kept (estimated; see `DistinctEstimator`).
    public var estimatedAdvertisers: Int

    public init(reports: Int = 0, estimatedAdvertisers: Int = 0) {
        self.reports = reports
        self.estimatedAdvertisers = estimatedAdvertisers
    }
}
