import BTCapture

/// The decoder, tracker and anonymizer targets' input: records one after another, each `kind` (a byte: command,
/// event, ACL, SCO, ISO, link layer), `direction` (a byte; for a link-layer record, its linktype), `length` (a
/// byte), then that many bytes of packet, cut short by the input's end; time advances 1 ms a record.
/// The fuzzer mutates packets, not a container, so its inputs stay plausible HCI traffic (`HCIMutator` keeps them so).
enum RecordFrames {
    static let kinds: [RecordKind] = [.command, .event, .acl, .acl, .acl, .event, .sco, .iso, .linkLayer]
    static let headerLength = 3
    /// The kind bytes `HCIMutator` writes.
    static let commandByte: UInt8 = 0, eventByte: UInt8 = 1, aclByte: UInt8 = 2
    /// LE air-sniffer linktypes: 251 (LE LL), 256 (LE LL with PHDR), 272 (nRF Sniffer), 192 (PPI).
    static let airLinktypes: [UInt32] = [251, 256, 272, 192]

    /// Each record of `bytes`; `only` makes every record that kind (the L2CAP and link-layer targets).
    static func each(_ bytes: UnsafeRawBufferPointer, only: RecordKind? = nil, _ body: (CaptureRecord) -> Void) {
        var offset = 0, number = 0
        while offset + headerLength <= bytes.count {
            let kind = only ?? kinds[Int(bytes[offset]) % kinds.count]
            let direction: Direction = bytes[offset + 1] & 1 == 0 ? .sent : .received
            let length = min(Int(bytes[offset + 2]), bytes.count - offset - headerLength)
            let payload = UnsafeRawBufferPointer(rebasing: bytes[(offset + headerLength)..<(offset + headerLength + length)])
            number += 1
            // A link-layer record's source is the sniffer's linktype: its direction byte picks one.
            let linktype = kind == .linkLayer ? airLinktypes[Int(bytes[offset + 1] >> 1) % airLinktypes.count] : 0
            body(CaptureRecord(number: number, offset: Int64(offset), timestamp: Timestamp(nanoseconds: Int64(number) * 1_000_000),
                               direction: direction, kind: kind, controller: 0, sourceType: linktype,
                               originalLength: length, payload: payload))
            offset += headerLength + length
        }
    }

    /// How many records `bytes` frames.
    static func count(_ bytes: UnsafeRawBufferPointer) -> Int {
        var n = 0
        each(bytes) { _ in n += 1 }
        return n
    }
}

/// Framed records as a capture (`RecordSource`), for what reads one: the anonymizer's copier and collector.
final class FramedRecords: RecordSource {
    let info = CaptureInfo(format: .btsnoop(datalink: BTSnoopDatalink.h4), timestampDigits: 6)
    let issues = IssueLog()
    private var records: [CaptureRecord] = []
    private var index = 0

    /// `bytes` must outlive the source: records point into it.
    init(_ bytes: UnsafeRawBufferPointer) {
        RecordFrames.each(bytes) { records.append($0) }
    }

    func next() -> CaptureRecord? {
        guard index < records.count else { return nil }
        index += 1
        return records[index - 1]
    }
}
