import Testing
@testable import BTWire

/// Two lists in id order merged (`MergedOrder`): the judged links' records and the few links the model holds
/// whole, as the HTML page, the energy report and the GATT peers read them.
@Suite("Merged order of two lists")
struct MergedOrderTests {
    /// Merges `first` and `second` (ids, each ascending) the way the readers do, `second` carrying `values`.
    static func merged(_ first: [Int], _ second: [Int], values: [Int]? = nil) -> (MergedOrder, [MergedOrder.Element]) {
        var order = MergedOrder()
        var expected: [MergedOrder.Element] = []
        var i = 0, k = 0
        while i < first.count || k < second.count {
            if k < second.count && (i == first.count || second[k] < first[i]) {
                order.appendSecond(values?[k])
                expected.append(.second(values?[k] ?? k))
                k += 1
            } else {
                order.appendFirst()
                expected.append(.first(i))
                i += 1
            }
        }
        return (order, expected)
    }

    @Test("every place is the element merged there; nothing kept for the first list")
    func places() {
        let first = Array(stride(from: 0, to: 3000, by: 3))
        let second = [1, 2, 700, 701, 2999, 5000]
        let (order, expected) = Self.merged(first, second)
        #expect(order.count == first.count + second.count)
        #expect((0..<order.count).map { order[$0] } == expected)
        #expect(order.secondCount == second.count)
        // Either list alone.
        let (onlyFirst, firstExpected) = Self.merged(first, [])
        #expect((0..<onlyFirst.count).map { onlyFirst[$0] } == firstExpected)
        let (onlySecond, secondExpected) = Self.merged([], second)
        #expect((0..<onlySecond.count).map { onlySecond[$0] } == secondExpected)
        #expect(MergedOrder().count == 0)
    }

    @Test("values carried by the second list's elements, from the first one that is not its place on")
    func values() {
        let first = [10, 20, 30, 40]
        let second = [5, 15, 25, 45]
        // The second element's value differs from its place: every value is kept from then on.
        let values = [0, 7, 2, 9]
        let (order, expected) = Self.merged(first, second, values: values)
        #expect((0..<order.count).map { order[$0] } == expected)
        #expect(order[1] == .first(0) && order[2] == .second(7) && order[7] == .second(9))
    }
}
