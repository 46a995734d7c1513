import Testing
import BTWire
@testable import BTTrack

/// The pieces `LinkInterest` decides with: scan boundaries in order and the binary search they share.
@Suite("What the capture-wide rules read of let-go links")
struct LinkInterestTests {
    @Test("partitioningIndex: the first element past the partition, on every split of a sorted list")
    func partitioning() {
        let times: [Int64] = [1, 3, 3, 5, 9]
        for t: Int64 in -1...10 {
            #expect(times.partitioningIndex { $0 >= t } == times.firstIndex { $0 >= t } ?? times.count)
            #expect(times.partitioningIndex { $0 > t } == times.firstIndex { $0 > t } ?? times.count)
        }
        #expect([Int64]().partitioningIndex { $0 > 0 } == 0)
    }

    @Test("scan boundaries: kept in order per controller and across them, whatever order they came in")
    func boundaries() {
        var b = ScanBoundaries()
        // A duration's end is known at the start, before the boundaries between.
        for (controller, t): (UInt16, Int64) in [(0, 10), (0, 50), (0, 20), (1, 30), (0, 20), (0, 40)] {
            b.insert(controller: controller, t)
        }
        #expect(b.latest(controller: 0, atOrBefore: 9) == nil)
        #expect(b.latest(controller: 0, atOrBefore: 10) == 10)
        #expect(b.latest(controller: 0, atOrBefore: 35) == 20)
        #expect(b.latest(controller: 0, atOrBefore: 1000) == 50)
        #expect(b.latest(controller: 2, atOrBefore: 1000) == nil)
        #expect(b.any(controller: 0, in: 21...39) == false)
        #expect(b.any(controller: 0, in: 21...40) == true)
        #expect(b.any(controller: 1, in: 21...39) == true)
        #expect(b.any(controller: nil, in: 29...31) == true)
        #expect(b.any(controller: nil, in: 51...100) == false)
    }

    @Test("scan boundaries forgotten before a time: the latest before it kept per controller, the answers from it on the same")
    func boundariesForgotten() {
        var b = ScanBoundaries()
        for (controller, t): (UInt16, Int64) in [(0, 10), (1, 15), (0, 20), (1, 25), (0, 30), (2, 40), (0, 50)] {
            b.insert(controller: controller, t)
        }
        let whole = b
        let anchors = b.forget(before: 28)
        #expect(anchors == [0: 20, 1: 25])
        #expect(b.count == 3)  // 30, 40 and 50 of every controller's together
        // Whatever is asked from the cut on is answered as before.
        for t: Int64 in 28...60 {
            for controller: UInt16 in 0...2 {
                #expect(b.latest(controller: controller, atOrBefore: t) == whole.latest(controller: controller, atOrBefore: t))
                #expect(b.any(controller: controller, in: t...(t + 5)) == whole.any(controller: controller, in: t...(t + 5)))
            }
            #expect(b.any(controller: nil, in: t...(t + 5)) == whole.any(controller: nil, in: t...(t + 5)))
        }
        // Forgetting again before an earlier time changes nothing.
        #expect(b.forget(before: 12) == [:])
        #expect(b.count == 3)
    }
}
