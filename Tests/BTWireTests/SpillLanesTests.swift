import Testing
@testable import BTWire
import TestSupport

/// A spill read back by two threads at once, as two rules read the scans at the end of an audit: each reads through
/// windows of its own, and both get every value as written.
@Suite("Spill read by two threads")
struct SpillLanesTests {
    /// Values, their windows and their order of reading: enough for many windows of 4 KiB.
    static let count = 20_000

    @Test("a second thread knows it is one; the caller's thread does not")
    func marker() {
        final class Seen: @unchecked Sendable { var inside = false }
        let seen = Seen()
        let second = SecondThread { seen.inside = SecondThread.isCurrent }
        second.join()
        // A thread is made whatever the processors (only a failed pthread_create runs the work here).
        #expect(seen.inside)
        #expect(!SecondThread.isCurrent)
        #expect(Spill.ReadLane.current == 0)
    }

    @Test("two threads reading one spill in different orders, in windows, read every value as written")
    func twoReaders() throws {
        let directory = try TemporaryDirectory()
        let spill = try Spill(directory: directory.path, readAhead: 4096)
        let offsets = (0..<Self.count).map { spill.append(plain: Int64($0) &* 2_654_435_761) }
        final class Wrong: @unchecked Sendable { var count = 0 }
        let wrong = Wrong()
        // The second thread reads in order (windows read ahead), the caller here and there (small windows).
        let second = SecondThread {
            for (i, at) in offsets.enumerated() where spill.read(plain: Int64.self, at: at) != Int64(i) &* 2_654_435_761 {
                wrong.count += 1
            }
        }
        var mine = 0
        for k in 0..<Self.count {
            let i = (k &* 7_919) % Self.count
            if spill.read(plain: Int64.self, at: offsets[i]) != Int64(i) &* 2_654_435_761 { mine += 1 }
        }
        second.join()
        #expect(wrong.count == 0)
        #expect(mine == 0)
        #expect(spill.failure == nil)
    }

    @Test("a read past the end fails on either thread, and the spill says why")
    func pastTheEnd() throws {
        let directory = try TemporaryDirectory()
        let spill = try Spill(directory: directory.path, readAhead: 4096)
        spill.append(plain: Int64(1))
        final class Read: @unchecked Sendable { var value: Int64 = -1 }
        let read = Read()
        let second = SecondThread { read.value = spill.read(plain: Int64.self, at: 8) }
        second.join()
        #expect(read.value == 0)
        #expect(spill.read(plain: Int64.self, at: 0) == 1)
        #expect(spill.failure == "spill file ended early")
    }
}
