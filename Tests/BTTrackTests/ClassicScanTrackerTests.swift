import Testing
import BTWire
import BTCapture
import BTTrack

/// The BR/EDR page and inquiry scan settings the controller accepted, as spans the cost model prices.
@Suite("Classic page and inquiry scan settings")
struct ClassicScanTrackerTests {
    static func at(_ second: Int64, controller: UInt16 = 0) -> RecordRef {
        RecordRef(number: Int(second), offset: second * 16, timestamp: Timestamp(nanoseconds: second * 1_000_000_000), controller: controller)
    }

    static func accepted(_ opcode: HCIOpcode, _ parameters: [UInt8], at second: Int64, into t: inout ClassicScanTracker) {
        let at = at(second)
        t.commandCompleted(CommandCorrelator.Pending(opcode: opcode, at: at, parameters: parameters), at: at)
    }

    @Test("Android's bring-up: interlaced page scan at the default activity from Write Scan Enable on, off again at 0")
    func androidBringUp() {
        var t = ClassicScanTracker()
        t.controllerReset(at: Self.at(1))
        Self.accepted(.writePageScanType, [1], at: 2, into: &t)
        Self.accepted(.writeInquiryScanType, [1], at: 2, into: &t)
        Self.accepted(.writeInquiryScanActivity, [0x00, 0x08, 0x12, 0x00], at: 3, into: &t)
        #expect(t.spans.isEmpty)  // known (after the reset), but off
        #expect(t.firstKnown[0] == Timestamp(nanoseconds: 1_000_000_000))
        Self.accepted(.writeScanEnable, [0x02], at: 4, into: &t)
        Self.accepted(.writeScanEnable, [0x03], at: 10, into: &t)
        Self.accepted(.writeScanEnable, [0x00], at: 12, into: &t)
        #expect(t.spans.count == 2)
        let page = try? #require(t.spans.first?.pageScan)
        #expect(page?.interlaced == true)
        // Two 11.25 ms windows every 1.28 s.
        #expect(abs((page?.dutyCycle ?? 0) - 2 * 18.0 / 2048) < 1e-12)
        #expect(t.spans[0].inquiryScan == nil && t.spans[0].end == Timestamp(nanoseconds: 10_000_000_000))
        #expect(t.spans[1].inquiryScan != nil && t.spans[1].end == Timestamp(nanoseconds: 12_000_000_000))
    }

    @Test("settings before the first Write Scan Enable are unknown; a window too long to interlace scans once")
    func unknownThenKnown() {
        var t = ClassicScanTracker()
        Self.accepted(.writePageScanActivity, [0x00, 0x01, 0x90, 0x00], at: 5, into: &t)  // 256 slots, 144-slot window
        Self.accepted(.writePageScanType, [1], at: 5, into: &t)
        #expect(t.firstKnown.isEmpty && t.spans.isEmpty)
        Self.accepted(.writeScanEnable, [0x02], at: 6, into: &t)
        #expect(t.firstKnown[0] == Timestamp(nanoseconds: 6_000_000_000))
        #expect(t.spans.first?.pageScan?.dutyCycle == 144.0 / 256)
        // A malformed command changes nothing.
        Self.accepted(.writePageScanActivity, [0x01], at: 7, into: &t)
        #expect(t.spans.count == 1 && t.spans[0].end == nil)
    }
}

/// The name the capture gives its controller: what says which phone's profile would price it.
@Suite("Local name")
struct LocalNameTests {
    @Test("Write/Read Local Name: NUL-terminated UTF-8 within 248 octets, padding spaces dropped; empty or invalid is nil")
    func decode() {
        #expect(LocalName.decode(Array("Pixel 7 Pro".utf8) + [0, 0x41]) == "Pixel 7 Pro")
        #expect(LocalName.decode(Array("  Galaxy S20 FE 5G  ".utf8)) == "Galaxy S20 FE 5G")
        #expect(LocalName.decode([UInt8](repeating: 0x61, count: 300))?.count == 248)
        #expect(LocalName.decode([0, 0x41]) == nil)
        #expect(LocalName.decode([0xFF, 0xFE]) == nil)
        #expect(LocalName.decode(Array("   ".utf8)) == nil)
    }
}
