/// Two lists merged into one (each already in the merged order: links in id order, say), as places: the place of
/// each element of the second list, and what it is, is kept; the elements of the first fill the other places in
/// their order. Memory keeps nothing for the first list, so making the longer of the two the first (the links
/// judged and set aside, against the few the model still holds whole) costs a few bytes a link of the second.
public struct MergedOrder: Sendable {
    /// The places of the second list's elements, ascending.
    private var secondPlaces: [Int32] = []
    /// The value each of the second list's elements carries (`appendSecond`), when one is not its place in that
    /// list; empty while every one is (nothing to keep).
    private var secondValues: [Int32] = []
    /// Places in all.
    public private(set) var count = 0

    /// An element of the merged order: the `k`th of the first list, or the value of an element of the second.
    public enum Element: Equatable, Sendable {
        case first(Int)
        case second(Int)
    }

    public init() {}

    /// The next place is the first list's next element.
    public mutating func appendFirst() { count += 1 }

    /// The next place is the second list's next element, carrying `value` (what the reader finds it by: by
    /// default its place in the second list).
    public mutating func appendSecond(_ value: Int? = nil) {
        let ordinal = secondPlaces.count
        let value = value ?? ordinal
        if secondValues.isEmpty && value != ordinal {
            secondValues = (0..<ordinal).map { Int32($0) }
        }
        if !secondValues.isEmpty || value != ordinal { secondValues.append(Int32(clamping: value)) }
        secondPlaces.append(Int32(clamping: count))
        count += 1
    }

    /// How many places the second list holds.
    public var secondCount: Int { secondPlaces.count }

    public subscript(place: Int) -> Element {
        // The second list's elements before `place` (a binary search): the first list's place is the rest.
        let k = secondPlaces.partitioningIndex { Int($0) >= place }
        if k < secondPlaces.count && Int(secondPlaces[k]) == place {
            return .second(secondValues.isEmpty ? k : Int(secondValues[k]))
        }
        return .first(place - k)
    }
}
