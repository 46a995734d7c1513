import BTCapture
@testable import BTTrack
import Testing

/// An app scan's compact storage answers as the arrays it replaced did.
@Suite("App scan storage")
struct AppScanStorageTests {
    /// The arrays' union: appended when the second comes after the first, else merged and sorted.
    static func union(_ a: [Int], _ b: [Int]) -> [Int] {
        if let last = a.last, let first = b.first, first > last { return a + b }
        return Array(Set(a + b)).sorted()
    }

    @Test("session indexes: ranges and lists, unions as the arrays made them")
    func sessionIndexes() {
        let cases: [([Int], [Int])] = [([], []), ([], [3]), ([3], []), ([0, 1, 2], [3, 4]), ([0, 1], [5]), ([2, 3], [0, 1]),
                                       ([1, 4], [2, 3]), ([0, 1, 2], [1, 2, 3]), ([5], [5]), ([1, 3], [7, 8])]
        for (a, b) in cases {
            var indexes = SessionIndexes(a)
            #expect(Array(indexes) == a)
            indexes.formUnion(SessionIndexes(b))
            #expect(Array(indexes) == Self.union(a, b), "\(a) ∪ \(b)")
            #expect(indexes == SessionIndexes(Self.union(a, b)))
        }
        let literal: SessionIndexes = [4]
        #expect(literal.first == 4 && literal.last == 4 && literal.count == 1)
    }

    @Test("piece starts: the first inline, the rest appended in order")
    func pieceStarts() {
        func ref(_ n: Int) -> RecordRef {
            RecordRef(number: n, offset: Int64(n), timestamp: Timestamp(nanoseconds: Int64(n)), controller: 0)
        }
        var starts: PieceStarts = []
        #expect(starts.isEmpty)
        starts.append(contentsOf: [ref(1)])
        var later: PieceStarts = [ref(2)]
        later.append(contentsOf: [ref(3)])
        starts.append(contentsOf: later)
        #expect(starts.map(\.number) == [1, 2, 3])
        #expect(starts.count == 3 && starts.first?.number == 1)
    }
}
