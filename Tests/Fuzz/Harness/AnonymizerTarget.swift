#if canImport(Glibc)
import Glibc
#endif
import BTCapture
import BTDecode

/// `btlens anonymize` on framed HCI records, and its promise checked as `btlens anonymize --check` checks it: no
/// address, name, key or serial number of the input is left in the copy, in any form the check looks for. The
/// copy is written as btsnoop (the writer `anonymize` uses) into a memory file and read back by the btsnoop reader.
enum AnonymizerTarget {
    /// The copy's file, in memory where the system has /dev/shm: one per process, unlinked at once, emptied for
    /// each input.
    nonisolated(unsafe) static let copyFile: Int32 = {
        let path = FuzzMain.scratch + ".copy"
        let fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0o600)
        require(fd >= 0, "cannot create \(path)")
        unlink(path)
        return fd
    }()

    /// Keyed pseudonyms (`anonymize --key`), which look random. Numbered ones (the default: 40:00:00:00:00:02) are
    /// mostly zeros, like the fuzzer's addresses: beside the bytes around them they can spell one of the input's
    /// addresses, which the check cannot tell from one left in place (the first input this target failed on).
    static let pseudonymKey = "btlens-fuzz"

    static func run(_ bytes: UnsafeRawBufferPointer) {
        // What the input holds, as `--check` collects it from the original.
        var original = IdentifierCollector(anonymizer: Anonymizer())
        guard let identifiers = try? original.visit(FramedRecords(bytes)) else { return }
        // The two readings of `btlens anonymize`: identifiers collected, then every packet rewritten and by value.
        let anonymizer = Anonymizer(key: pseudonymKey)
        var collector = IdentifierCollector(anonymizer: anonymizer)
        guard (try? collector.visit(FramedRecords(bytes))) != nil else { return }
        let copy = anonymizedCopy(bytes, anonymizer: anonymizer)
        copy.withUnsafeBytes { copy in
            guard let reader = try? BTSnoopReader(source: MemoryInput(copy).source()) else {
                fatalError("the copy is no btsnoop file")
            }
            var check = AnonymizeCheck(identifiers: identifiers)
            let report = try! check.visit(reader)
            guard report.hits.isEmpty else {
                fatalError("the copy still holds identifiers of the input:\n" + report.lines.joined(separator: "\n") + "\n"
                           + "the copy's records with them:\n" + records(copy, numbered: Set(report.hits.map(\.firstRecord))))
            }
        }
    }

    /// Records of a btsnoop copy, in hex (`number kind direction: bytes`), for a report.
    static func records(_ copy: UnsafeRawBufferPointer, numbered: Set<Int>) -> String {
        guard let reader = try? BTSnoopReader(source: MemoryInput(copy).source()) else { return "" }
        var lines: [String] = []
        while let record = reader.next() {
            guard numbered.contains(record.number) || numbered.contains(record.number + 1) else { continue }
            lines.append("\(record.number) \(record.kind) \(record.direction): " + record.payload.map { String($0, radix: 16) }.joined(separator: " "))
        }
        return lines.joined(separator: "\n")
    }

    /// The bytes of the btsnoop H4 file `AnonymizingCopier` writes.
    static func anonymizedCopy(_ bytes: UnsafeRawBufferPointer, anonymizer: Anonymizer) -> [UInt8] {
        require(ftruncate(copyFile, 0) == 0 && lseek(copyFile, 0, SEEK_SET) == 0, "cannot empty the copy's file")
        let writer = try! BTSnoopWriter(fd: copyFile, datalink: BTSnoopDatalink.h4)
        var copier = AnonymizingCopier(writer: writer, anonymizer: anonymizer, byValue: anonymizer.byValueScanner())
        _ = try! copier.visit(FramedRecords(bytes))
        try! writer.finish()
        let size = Int(lseek(copyFile, 0, SEEK_END))
        var copy = [UInt8](repeating: 0, count: size)
        let read = copy.withUnsafeMutableBytes { pread(copyFile, $0.baseAddress, size, 0) }
        require(read == size, "cannot read the copy back")
        return copy
    }
}
