import Testing
import BTWire
import TestSupport
@testable import BTRules

/// `scan-churn` looks up the links asked for around each scan's end in a list by request time that may be set
/// aside, reading it forward from where the controller's last look began: the same links as a search of the whole
/// list, whichever way the scans' ends go.
@Suite("scan-churn's links by request")
struct ScanChurnLinkLookupTests {
    typealias Requested = ScanChurnRule.Requested

    /// Links asked for every 2 s or so (some at the same time), each up for 0–5 s, set aside but the latest one.
    static func links(in dir: TemporaryDirectory) -> SetAsideArray<Requested> {
        var links = SetAsideArray<Requested>(spillingTo: dir.path, kept: 1)
        var asked: Int64 = 0
        for n in 0..<600 {
            asked += Int64((n * 7919) % 4) * 1_400_000_000
            links.append(Requested(asked: asked, ended: asked + Int64((n * 31) % 6) * 1_000_000_000, link: Int32(n)))
        }
        return links
    }

    /// What the rule asked before the cursor: a search of the whole list, then every link in the window.
    static func reference(_ links: [Requested], scanEnd: Int64, resumed: Int64) -> Bool {
        let gap = ScanChurnRule.restartGap
        return links.contains { $0.asked >= scanEnd - gap && $0.asked <= min(scanEnd + 2 * gap, resumed) && resumed <= $0.ended + 2 * gap }
    }

    @Test("forward, repeated and backward scan ends find what a search of the whole list finds")
    func sameAsSearch() throws {
        let dir = try TemporaryDirectory()
        let links = Self.links(in: dir)
        let all = Array(links)
        #expect(links.setAsideCount > 500, "the list is read back from its file")
        var cursor = ScanChurnRule.LinkCursor()
        // Scan ends mostly later and later, some repeated, some earlier (another controller's order, a clock step).
        var ends: [Int64] = []
        var t: Int64 = -3_000_000_000
        for n in 0..<500 {
            t += n % 17 == 0 ? -5_000_000_000 : Int64((n * 13) % 5) * 1_200_000_000
            ends.append(t)
        }
        var paused = 0
        for (n, end) in ends.enumerated() {
            let resumed = end + Int64(n % 9) * 700_000_000
            let first = cursor.first(askedFrom: end - ScanChurnRule.restartGap, in: links)
            #expect(first == all.partitioningIndex { $0.asked >= end - ScanChurnRule.restartGap })
            let found = ScanChurnRule.pausedFor(links, from: first, scanEnd: end, resumed: resumed)
            #expect(found == Self.reference(all, scanEnd: end, resumed: resumed), "scan end \(end), resumed \(resumed)")
            if found { paused += 1 }
        }
        #expect(paused > 50 && paused < 450, "both answers are exercised: \(paused) of 500 paused")
        #expect(links.failure == nil)
    }
}
