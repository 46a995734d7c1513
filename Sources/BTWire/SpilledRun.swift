/// Plain values appended one after another to a spill (`Spill.append(plain:)`), read back in order a slice at a
/// time: a run being merged (`SortedRuns`, the anonymizer's address segments). Memory holds one slice. A slice that
/// cannot be read back ends the run early (`Spill.failure` says why).
public struct SpilledRun<Element> {
    @usableFromInline let spill: Spill
    @usableFromInline var offset: Int64
    @usableFromInline var remaining: Int
    @usableFromInline let sliceLength: Int
    @usableFromInline var slice: [Element] = []
    @usableFromInline var next = 0

    /// The `count` values at `offset`, read `sliceLength` at a time.
    public init(spill: Spill, offset: Int64, count: Int, sliceLength: Int) {
        precondition(_isPOD(Element.self), "set aside as bytes")
        self.spill = spill
        self.offset = offset
        remaining = count
        self.sliceLength = max(1, sliceLength)
        fill()
    }

    /// The next value, nil at the end of the run.
    @inlinable
    public var head: Element? { next < slice.count ? slice[next] : nil }

    @inlinable
    public mutating func advance() {
        next += 1
        if next == slice.count { fill() }
    }

    @usableFromInline
    mutating func fill() {
        let n = min(sliceLength, remaining)
        slice = n > 0 ? spill.read(plain: Element.self, count: n, at: offset) : []
        remaining = slice.count < n ? 0 : remaining - n
        offset += Int64(n * MemoryLayout<Element>.stride)
        next = 0
    }
}
