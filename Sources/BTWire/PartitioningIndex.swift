extension RandomAccessCollection {
    /// The first index whose element satisfies `belongsInSecondPartition`, in a collection where every element
    /// that does follows every element that does not (a binary search: say, the first time at or after t in a
    /// sorted list of times). `endIndex` when none does.
    @inlinable
    public func partitioningIndex(where belongsInSecondPartition: (Element) throws -> Bool) rethrows -> Index {
        var low = startIndex
        var n = count
        while n > 0 {
            let half = n / 2
            let mid = index(low, offsetBy: half)
            if try belongsInSecondPartition(self[mid]) {
                n = half
            } else {
                low = index(after: mid)
                n -= half + 1
            }
        }
        return low
    }
}
