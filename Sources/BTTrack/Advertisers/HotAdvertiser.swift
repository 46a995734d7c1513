import BTCapture
import BTDecode

/// The part of an advertiser that changes with every report, packed into 72 bytes and kept apart from the
/// rest of `Advertiser`.
///
/// Why: with thousands of advertisers every report touches a different advertiser, so each separate
/// memory area it updates is a cache miss; measured on the benchmark capture, the table slot, the
/// `Advertiser` struct (232 bytes), its fingerprints and its RSSI histogram bin cost a miss each. Here the
/// per-report updates hit this one record; RSSI samples are buffered eight at a time before they go into
/// the histogram, and the full `Advertiser` is touched only when the data changes.
struct HotAdvertiser {
    var advertisingFingerprint = DataFingerprint.none
    var scanResponseFingerprint = DataFingerprint.none
    /// lastSeen as RecordRef's parts.
    var lastTimestamp: Int64
    var lastNumber: Int
    var lastOffset: Int64
    /// Wrap after 2³² − 1 (more than a 100 GB capture holds from one device).
    var reports: UInt32 = 0
    var scanResponses: UInt32 = 0
    /// `AdvertisingEventTypes.mask`.
    var eventTypes: UInt32 = 0
    var lastLength: UInt32
    /// Up to eight RSSI bit patterns not yet in the histogram, low byte first.
    var rssiBuffer: UInt64 = 0
    /// Advertising SIDs seen (bit n = SID n).
    var advertisingSIDs: UInt16 = 0
    var rssiPending: UInt8 = 0
    var flags: UInt8 = 0
    var reportedTxPower: Int8 = 0
    var lastController: UInt16

    static let connectable: UInt8 = 0x01
    static let extendedPDUs: UInt8 = 0x02
    static let hasReportedTxPower: UInt8 = 0x04
    static let rssiBufferSize: UInt8 = 8

    init(at: RecordRef) {
        lastTimestamp = at.timestamp.nanoseconds
        lastNumber = at.number
        lastOffset = at.offset
        lastController = at.controller
        lastLength = UInt32(clamping: at.length)
    }

    var lastSeen: RecordRef {
        RecordRef(number: lastNumber, offset: lastOffset, timestamp: Timestamp(nanoseconds: lastTimestamp),
                  controller: lastController, length: Int(lastLength))
    }

    /// What `count` found.
    struct Outcome {
        /// The RSSI buffer is full: flush it into the histogram.
        var flushRSSI: Bool
        /// nil when the data is unchanged (or not complete yet); else whether the advertiser had data of
        /// this kind before (then this is a change, not the first data).
        var dataReplaced: Bool?
    }

    /// Counts one report and compares its data's fingerprint (nil: no complete data in this report) with
    /// the previous one of its kind, in one pass over this record.
    @inline(__always)
    mutating func count(_ report: AdvertisingReport, kind: UInt16, scanResponse: Bool, fingerprint: UInt64?,
                        at: RecordRef) -> Outcome {
        reports &+= 1
        lastTimestamp = at.timestamp.nanoseconds
        lastNumber = at.number
        lastOffset = at.offset
        lastController = at.controller
        lastLength = UInt32(clamping: at.length)
        if kind < 32 { eventTypes |= 1 << UInt32(kind) }
        if scanResponse {
            scanResponses &+= 1
        } else if report.isConnectable {
            // A scan response's connectable bit describes the advertisement it answers, not a PDU of its own.
            flags |= Self.connectable
        }
        if report.isExtended {
            if report.eventType & AdvertisingReport.ExtendedTypeBits.legacy == 0 { flags |= Self.extendedPDUs }
            if let tx = report.txPower {
                reportedTxPower = tx
                flags |= Self.hasReportedTxPower
            }
            if let sid = report.advertisingSID, sid < 16 { advertisingSIDs |= 1 << UInt16(sid) }
        }
        var outcome = Outcome(flushRSSI: false, dataReplaced: nil)
        if let fingerprint {
            if scanResponse {
                if fingerprint != scanResponseFingerprint {
                    outcome.dataReplaced = scanResponseFingerprint != DataFingerprint.none
                    scanResponseFingerprint = fingerprint
                }
            } else if fingerprint != advertisingFingerprint {
                outcome.dataReplaced = advertisingFingerprint != DataFingerprint.none
                advertisingFingerprint = fingerprint
            }
        }
        if let rssi = report.rssi {
            rssiBuffer |= UInt64(UInt8(bitPattern: rssi)) << (8 * UInt64(rssiPending))
            rssiPending += 1
            outcome.flushRSSI = rssiPending == Self.rssiBufferSize
        }
        return outcome
    }

    /// Copies the per-report fields into the full record.
    func fill(_ a: inout Advertiser) {
        a.reports = Int(reports)
        a.scanResponses = Int(scanResponses)
        a.lastSeen = lastSeen
        a.eventTypes = AdvertisingEventTypes(mask: eventTypes)
        a.isConnectable = flags & Self.connectable != 0
        a.usesExtendedAdvertising = flags & Self.extendedPDUs != 0
        a.reportedTxPower = flags & Self.hasReportedTxPower != 0 ? reportedTxPower : nil
        a.advertisingSIDs = advertisingSIDs
    }
}
