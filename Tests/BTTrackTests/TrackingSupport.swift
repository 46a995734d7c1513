import Foundation
import BTWire
import BTCapture
import BTDecode
import BTTrack

/// Tracks a capture file into a model.
func track(_ path: String, options: TrackerOptions = TrackerOptions()) throws -> CaptureModel {
    let capture = try OpenedCapture.open(path: path)
    var collector = TrackingCollector(options: options)
    return try capture.accept(&collector)
}

/// Feeds hand-built HCI packets (H4 kind + bytes, direction, time) straight into the decoder and tracker.
struct PacketFeed {
    let issues = IssueLog()
    var decoder: PacketDecoder
    let tracker: CaptureTracker
    var number = 0

    init(options: TrackerOptions = TrackerOptions()) {
        decoder = PacketDecoder(issues: issues)
        tracker = CaptureTracker(options: options)
    }

    mutating func feed(_ kind: RecordKind, _ bytes: [UInt8], _ direction: Direction, at seconds: Double) {
        number += 1
        let n = number
        bytes.withUnsafeBytes { raw in
            let record = CaptureRecord(number: n, offset: Int64(n * 32),
                                       timestamp: Timestamp(nanoseconds: Int64(seconds * 1e9)), direction: direction,
                                       kind: kind, controller: 0, sourceType: 0, originalLength: raw.count, payload: raw)
            tracker.observe(decoder.decode(record))
        }
    }

    func finish() -> CaptureModel { tracker.finish() }

    // Packet builders (annotated in the tests that use them).
    static func le16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }

    /// LE Connection Complete: status, handle, role, peer type, peer, interval, latency, timeout, accuracy.
    static func leConnectionComplete(handle: UInt16, peer: [UInt8] = [1, 2, 3, 4, 5, 6], status: UInt8 = 0,
                                     interval: UInt16 = 24) -> [UInt8] {
        let p: [UInt8] = [0x01, status] + le16(handle) + [0x00, 0x01] + peer + le16(interval) + le16(0) + le16(500) + [0x00]
        return [0x3E, UInt8(p.count)] + p
    }

    static func disconnectionComplete(handle: UInt16, reason: UInt8) -> [UInt8] {
        [0x05, 0x04, 0x00] + le16(handle) + [reason]
    }

    /// An ATT PDU on CID 4 in one ACL packet.
    static func att(handle: UInt16, _ pdu: [UInt8]) -> [UInt8] {
        let l2 = le16(UInt16(pdu.count)) + le16(4) + pdu
        return le16(handle | 0x2000) + le16(UInt16(l2.count)) + l2
    }
}
