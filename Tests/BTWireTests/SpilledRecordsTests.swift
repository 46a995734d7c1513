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

    @Test("text read back a piece at a time: whole characters in each piece, the same text joined, in a file and in memory")
    func textInPieces() throws {
        let directory = try TemporaryDirectory()
        // One-, two-, three- and four-byte characters, so that every piece size cuts some of them.
        let text = String(repeating: "a é → 🔋 \n", count: 40)
        for path in [directory.path, nil] as [String?] {
            let spill = try Spill(directory: path)
            spill.append("before")
            let at = spill.append(text)
            spill.append("after")
            for chunk in [4, 5, 6, 7, 64, 1 << 16] {
                var pieces: [String] = []
                spill.readText(at: at, count: text.utf8.count, chunk: chunk) { pieces.append($0) }
                #expect(pieces.joined() == text, "pieces of \(chunk)")
                #expect(pieces.allSatisfy { !$0.contains("\u{FFFD}") && $0.utf8.count <= max(4, chunk) })
                #expect(pieces.count >= text.utf8.count / max(4, chunk))
            }
            var none: [String] = []
            spill.readText(at: at, count: 0) { none.append($0) }
            #expect(none.isEmpty)
        }
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
            #expect(Array(records.ids) == [2, 5, 7, 9] && records.index(of: 4) == nil && records.index(of: 10) == nil)
            for id in [2, 5, 7, 9] {
                let i = try #require(records.index(of: id))
                let value = records.spill.read(plain: Plain.self, at: records.offset(at: i))
                #expect(value == Plain(a: Int64(id) * 1000, b: UInt8(id), c: id == 9 ? nil : Double(id) / 4))
                let text = records.spill.read(at: records.offset(at: i) + Int64(MemoryLayout<Plain>.stride), count: 6)
                #expect(text == "link \(id)")
            }
            // Past the end: zeros and the failure said, not a crash.
            let beyond = records.spill.read(plain: Plain.self, at: records.spilledBytes + 64)
            #expect(beyond == Plain(a: 0, b: 0, c: Optional<Double>.none) || beyond.a == 0)
            #expect(path == nil || records.failure != nil)
            #expect(records.count == 4)
        }
        // A directory that does not exist: memory, and why.
        let missing = SpilledRecords(directory: directory.file("missing"))
        #expect(!missing.isFile && missing.spillFailure?.contains("missing") == true)
        try #require(FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }

    @Test("records that follow another kind's are found through its index, every one or some missing, in id order")
    func following() throws {
        let directory = try TemporaryDirectory()
        for path in [directory.path, nil] as [String?] {
            for missing in [[], [7], [5, 2, 9, 7]] as [[Int]] {
                let leader = SpilledRecords(directory: path)
                let rows = SpilledRecords(following: leader)
                let other = SpilledRecords(following: leader)
                for id in [5, 2, 9, 7] {
                    // As the HTML report writes a link: its row, its other record (when it has one), then the lead.
                    rows.begin(id: id)
                    rows.spill.append("row \(id)")
                    if !missing.contains(id) {
                        other.begin(id: id)
                        other.spill.append("gatt \(id)")
                    }
                    leader.begin(id: id)
                    leader.spill.append("lead \(id)")
                }
                rows.sortByID()
                other.sortByID()
                #expect(Array(leader.ids) == [2, 5, 7, 9] && Array(rows.ids) == [2, 5, 7, 9] && rows.count == 4)
                let present = [2, 5, 7, 9].filter { !missing.contains($0) }
                #expect(Array(other.ids) == present.map(Int32.init) && other.count == present.count)
                for (i, id) in [2, 5, 7, 9].enumerated() {
                    #expect(leader.spill.read(at: leader.offset(at: i), count: 6) == "lead \(id)")
                    #expect(rows.spill.read(at: rows.offset(at: i), count: 5) == "row \(id)")
                    #expect(rows.index(of: id) == i)
                }
                for (i, id) in present.enumerated() {
                    #expect(other.spill.read(at: other.offset(at: i), count: 6) == "gatt \(id)")
                    #expect(other.index(of: id) == i)
                }
                #expect(missing.allSatisfy { other.index(of: $0) == nil })
            }
        }
    }
}
