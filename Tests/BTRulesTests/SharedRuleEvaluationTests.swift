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
