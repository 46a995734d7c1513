import Foundation
import Testing
@testable import BTWire
import TestSupport

/// What `energy`, the text `timeline` and the jsonl export set aside while a capture is read.
@Suite("Spilled records")
struct SpilledRecordsTests {
    struct Plain: Equatable {
        var a: Int64
        var b: UInt8
        var c: Double?
    }

    @Test("records written out of id order are found by id, in a file and in memory; plain values read back as written")
    func byID() throws {
        let directory = try TemporaryDirectory()
        for path in [directory.path, nil] as [String?] {
            let records = SpilledRecords(directory: path)
            #expect(records.isFile == (path != nil) && records.spillError == nil)
            for id in [5, 2, 9, 7] {
                records.begin(id: id)
                records.spill.append(plain: Plain(a: Int64(id) * 1000, b: UInt8(id), c: id == 9 ? nil : Double(id) / 4))
                records.spill.append("link \(id)")
            }
            records.sortByID()
            #expect(records.ids == [2, 5, 7, 9] && records.index(of: 4) == nil && records.index(of: 10) == nil)
            for id in [2, 5, 7, 9] {
                let i = try #require(records.index(of: id))
                let value = records.spill.read(plain: Plain.self, at: records.offsets[i])
                #expect(value == Plain(a: Int64(id) * 1000, b: UInt8(id), c: id == 9 ? nil : Double(id) / 4))
                let text = records.spill.read(at: records.offsets[i] + Int64(MemoryLayout<Plain>.stride), count: 6)
                #expect(text == "link \(id)")
            }
            // Past the end: zeros and the failure said, not a crash.
            let beyond = records.spill.read(plain: Plain.self, at: records.spilledBytes + 64)
            #expect(beyond == Plain(a: 0, b: 0, c: Optional<Double>.none) || beyond.a == 0)
            #expect(path == nil || records.failure != nil)
            #expect(records.count == 4 && records.offsets.count == 4)
        }
        // A directory that does not exist: memory, and why.
        let missing = SpilledRecords(directory: directory.file("missing"))
        #expect(!missing.isFile && missing.spillFailure?.contains("missing") == true)
        try #require(FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }
}
