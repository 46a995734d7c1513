import Foundation
import Testing
import BTWire
@testable import BTRules

/// A large capture's rules evaluated on two threads (`Auditor.evaluate(_:model:judged:spill:finishing:)`): which thread
/// takes which rule. That the findings are those of one thread, in the same order, is checked report by report on
/// every sample, real capture and a scans-shaped capture (`FindingSpillTests`).
@Suite("Rules shared between two threads")
struct SharedRuleEvaluationTests {
    @Test("each thread takes the next rule in order; the second thread only sharable ones")
    func claims() {
        let claims = RuleClaims(sharable: [false, true, false, true, true])
        #expect(claims.claim(onSecondThread: true) == 1)
        #expect(claims.claim(onSecondThread: false) == 0)
        #expect(claims.claim(onSecondThread: false) == 2)
        #expect(claims.claim(onSecondThread: true) == 3)
        #expect(claims.claim(onSecondThread: false) == 4)
        #expect(claims.claim(onSecondThread: true) == nil)
        #expect(claims.claim(onSecondThread: false) == nil)
    }

    @Test("claimed from two threads at once, every rule is taken once, each thread's in order")
    func claimedOnce() {
        final class Taken: @unchecked Sendable { var rules: [Int] = [] }
        let count = 2_000
        let claims = RuleClaims(sharable: (0..<count).map { $0 % 3 != 0 })
        let theirs = Taken()
        let second = SecondThread {
            while let i = claims.claim(onSecondThread: true) { theirs.rules.append(i) }
        }
        var mine: [Int] = []
        while let i = claims.claim(onSecondThread: false) { mine.append(i) }
        second.join()
        #expect((mine + theirs.rules).sorted() == Array(0..<count))
        #expect(theirs.rules.allSatisfy { $0 % 3 != 0 }, "a rule that is not sharable stays on this thread")
        #expect(mine == mine.sorted() && theirs.rules == theirs.rules.sorted())
    }

    @Test("findings finished from two threads at once come out in report order, and the first failure is thrown")
    func finishedFromTwoThreads() throws {
        let spill = try FindingSpill(directory: nil)
        // Two rules' findings, each rule's in the order made; one of them finished on a second thread.
        var first = PlainList<FindingSpill.Ref>(), second = PlainList<FindingSpill.Ref>()
        var all: [Finding] = []
        for i in 0..<300 {
            var f = FindingCodingTests.finding(full: i % 2 == 0, id: i % 7)
            f.message = "finding \(i)"
            all.append(f)
            if i % 2 == 0 { first.append(spill.append(f)) } else { second.append(spill.append(f)) }
        }
        let other = try FindingSpill(directory: nil)
        var theirs = PlainList<FindingSpill.Ref>()
        for ref in second { theirs.append(other.copy(ref, from: spill)) }
        let onSecond = theirs
        let finishing = try FindingFinishing(file: "f", cap: MeasuredCap([]), finishing: { _ in .reported },
                                             directory: nil, runLength: 16)
        let thread = SecondThread {
            var bytes: [UInt8] = []
            try? finishing.finish(onSecond.values(in: 0..<onSecond.count), in: other, bytes: &bytes)
        }
        var bytes: [UInt8] = []
        try finishing.finish(first.values(in: 0..<first.count), in: spill, bytes: &bytes)
        thread.join()
        let (reported, accepted) = try finishing.sorted()
        var expected = Auditor.deduplicated(all.map { var f = $0; f.file = "f"; return f })
        expected.sort(by: Auditor.precedes)
        #expect(accepted.count == 0)
        #expect(expected.count > 2 && expected.count < all.count)  // some left out as repeats, some kept
        #expect((0..<reported.count).map { reported[$0].message } == expected.map(\.message))

        finishing.fail(.spill(cause: "first"))
        finishing.fail(.spill(cause: "second"))
        #expect(throws: FindingStoreError.spill(cause: "first")) { try finishing.sorted() }
    }

    @Test("work given to a second thread is done when join returns")
    func joined() {
        final class Box: @unchecked Sendable { var value = 0 }
        let box = Box()
        let second = SecondThread { for i in 1...1000 { box.value += i } }
        second.join()
        #expect(box.value == 500_500)
        second.join()  // a second join returns at once
    }
}
