#if canImport(Glibc)
import Glibc
#endif
import BTCapture
import BTDecode

/// `btlens anonymize` on framed HCI records, and its promise checked as `btlens anonymize --check` checks it: no
/// address, name, key or serial number of the input is left in the copy, in any form the check looks for
/// (`AnonymizerLeaks`: left in place, not spelled by the replacements). The
/// copy is written by a writer `anonymize` uses (btsnoop H4, or pcap with linktype 201 as for a pcap input, by the
/// input's length) into a file in memory, and read back by the reader its content calls for.
enum AnonymizerTarget {
    static let copyPath = FuzzMain.scratch + ".copy"

    static func run(_ bytes: UnsafeRawBufferPointer) {
        // What the input holds, as `--check` collects it from the original.
        var original = IdentifierCollector(anonymizer: Anonymizer())
        guard let identifiers = try? original.visit(FramedRecords(bytes)) else { return }
        // The two readings of `btlens anonymize`: identifiers collected, then every packet rewritten and by value.
        // Every other input with all but the latest two addresses set aside in a file, as a long capture's are.
        let anonymizer = bytes.count % 4 < 2 ? Anonymizer()
            : Anonymizer(directory: FuzzMain.scratchDirectory, addressesInMemory: 2)
        var collector = IdentifierCollector(anonymizer: anonymizer)
        guard (try? collector.visit(FramedRecords(bytes))) != nil else { return }
        let copy = anonymizedCopy(bytes, anonymizer: anonymizer, pcap: bytes.count % 2 == 1)
        copy.withUnsafeBytes { copy in
            guard let reader = try? OpenedCapture.open(source: MemoryInput(copy).source()) else {
                fatalError("the copy is no capture")
            }
            var check = AnonymizeCheck(identifiers: identifiers)
            let report = try! reader.accept(&check)
            // What the check finds is a leak when the input had those bytes there (not when replacements spelled them).
            guard !report.hits.isEmpty, let again = try? OpenedCapture.open(source: MemoryInput(copy).source()) else { return }
            let leaks = AnonymizerLeaks.find(copy: again, input: bytes, identifiers: identifiers)
            guard leaks.isEmpty else {
                fatalError("the copy still holds identifiers of the input:\n" + leaks.joined(separator: "\n") + "\n"
                           + "the copy's records with them:\n" + records(copy, numbered: Set(report.hits.map(\.firstRecord))))
            }
        }
    }

    /// Records of a copy, in hex (`number kind direction: bytes`), for a report.
    static func records(_ copy: UnsafeRawBufferPointer, numbered: Set<Int>) -> String {
        guard let reader = try? OpenedCapture.open(source: MemoryInput(copy).source()) else { return "" }
        var lines: [String] = []
        while let record = reader.nextRecord() {
            guard numbered.contains(record.number) || numbered.contains(record.number + 1) else { continue }
            lines.append("\(record.number) \(record.kind) \(record.direction): " + record.payload.map { String($0, radix: 16) }.joined(separator: " "))
        }
        return lines.joined(separator: "\n")
    }

    /// The bytes of the file `AnonymizingCopier` writes.
    static func anonymizedCopy(_ bytes: UnsafeRawBufferPointer, anonymizer: Anonymizer, pcap: Bool) -> [UInt8] {
        let writer: any HCIRecordWriter = pcap
            ? try! PcapWriter(path: copyPath, linktype: Linktype.bluetoothHCIH4WithPHDR)
            : try! BTSnoopWriter(path: copyPath, datalink: BTSnoopDatalink.h4)
        var copier = AnonymizingCopier(writer: writer, anonymizer: anonymizer, byValue: anonymizer.byValueScanner())
        _ = try! copier.visit(FramedRecords(bytes))
        try! writer.finish()
        guard let copy = FuzzMain.read(copyPath) else { fatalError("cannot read \(copyPath) back") }
        return copy
    }
}
