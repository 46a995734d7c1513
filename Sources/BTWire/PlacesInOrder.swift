extension RandomAccessCollection where Element == Int32, Index == Int {
    /// The places of the elements in ascending order (the `k`th is where the `k`th smallest is), or nil when they
    /// are in order already: a permutation of 4 bytes an element, for lists set aside that are read in id order.
    public func placesInOrder() -> [Int32]? {
        guard zip(self, dropFirst()).contains(where: { $0 > $1 }) else { return nil }
        let first = startIndex
        var order = Array(0..<Int32(count))
        order.sort { self[first + Int($0)] < self[first + Int($1)] }
        return order
    }
}
