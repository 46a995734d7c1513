import Testing
import BTWire
import TestSupport

/// `SpilledRun`: values set aside one after another, read back in order a slice at a time (the merges of
/// `SortedRuns` and of the anonymizer's address segments).
@Suite("A run read back from a spill")
struct SpilledRunTests {
    @Test("every value in order across slices, then nil; a slice past the file's end ends the run")
    func readBack() throws {
        let directory = try TemporaryDirectory()
        let spill = try Spill(directory: directory.path)
        let offset = spill.append(plain: (0..<1_000).map { UInt64($0 * 3) })
        var run = SpilledRun<UInt64>(spill: spill, offset: offset, count: 1_000, sliceLength: 64)
        var read: [UInt64] = []
        while let v = run.head {
            read.append(v)
            run.advance()
        }
        #expect(read == (0..<1_000).map { UInt64($0 * 3) })
        // Asked for more than was written: the slices read whole, then the end (a full disk loses the rest so).
        var longer = SpilledRun<UInt64>(spill: spill, offset: offset + 8 * 900, count: 200, sliceLength: 64)
        var tail: [UInt64] = []
        while let v = longer.head {
            tail.append(v)
            longer.advance()
        }
        #expect(tail == (900..<964).map { UInt64($0 * 3) })
        #expect(SpilledRun<UInt64>(spill: spill, offset: offset, count: 0, sliceLength: 64).head == nil)
    }
}
