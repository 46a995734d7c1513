import BTWire
import BTCapture
import BTDecode

/// The capture readers' targets: the input read from memory to its last record, through the decoder, by the
/// reader the content calls for (`readers`) or one container each, its header chosen by the input's first byte so
/// that the mutations land in the records.
enum ReaderTargets {
    /// Every record `capture` yields, through the decoder: a bounded count, issues within their limit.
    static func readAll(_ capture: OpenedCapture, inputBytes: Int, issues: IssueLog) {
        var reader = DecodingReader()
        guard let records = try? capture.accept(&reader) else { return }
        // A record takes at least its header: no more records than bytes.
        require(records <= inputBytes + 1, "\(records) records from \(inputBytes) bytes")
        require(issues.issues.count <= issues.keepLimit, "issues kept beyond the limit")
    }

    /// Every record decoded as `stats` decodes it (air records in place); their count. Not `StatisticsCollector`
    /// itself: its tables (half a MiB, zeroed for each capture) would cost more than reading a fuzzer's input.
    struct DecodingReader: RecordSourceVisitor {
        mutating func visit<S: RecordSource>(_ source: S) throws -> Int {
            var decoder = PacketDecoder(issues: source.issues)
            var records = 0
            while let record = source.next() {
                _ = record.kind == .linkLayer ? decoder.decodeLinkLayer(record).isMalformed : decoder.decode(record).isMalformed
                records += 1
            }
            return records
        }
    }

    /// Any container, recognised by content as `OpenedCapture` does for a file.
    static func read(header: [UInt8] = [], _ bytes: UnsafeRawBufferPointer) {
        let input = MemoryInput(header: header, bytes)
        let issues = IssueLog()
        guard let capture = try? OpenedCapture.open(source: input.source(), issues: issues) else { return }
        readAll(capture, inputBytes: input.count, issues: issues)
    }

    /// The input after its first byte, behind the header `header` makes of that byte.
    static func read(_ bytes: UnsafeRawBufferPointer, header: (UInt8) -> [UInt8]) {
        guard let first = bytes.first else { return }
        read(header: header(first), UnsafeRawBufferPointer(rebasing: bytes.dropFirst()))
    }

    /// PacketLogger in the byte order the first byte's low bit picks (its sniffing is the `readers` target's).
    static func readPacketLogger(_ bytes: UnsafeRawBufferPointer) {
        guard let first = bytes.first else { return }
        let input = MemoryInput(UnsafeRawBufferPointer(rebasing: bytes.dropFirst()))
        let issues = IssueLog()
        let reader = PacketLoggerReader(source: input.source(), bigEndian: first & 1 == 1, issues: issues)
        readAll(.packetLogger(reader), inputBytes: input.count, issues: issues)
    }

    /// Linux monitor frames: btsnoop's monitor datalink (2001) or pcap's linktype 254, by the first byte.
    static func monitorHeader(_ choice: UInt8) -> [UInt8] {
        choice & 1 == 0 ? btsnoopHeader(datalink: BTSnoopDatalink.monitor) : pcapHeader(linktype: UInt32(Linktype.bluetoothLinuxMonitor))
    }

    static func btsnoopHeader(_ choice: UInt8) -> [UInt8] {
        let datalinks: [UInt32] = [BTSnoopDatalink.h1, BTSnoopDatalink.h4, BTSnoopDatalink.monitor]
        return btsnoopHeader(datalink: datalinks[Int(choice) % datalinks.count])
    }

    static func btsnoopHeader(datalink: UInt32) -> [UInt8] {
        BTSnoopReader.magic + bigEndian(UInt32(1)) + bigEndian(datalink)
    }

    /// pcap linktypes btlens reads: HCI (187, 201, 254) and air sniffers (251, 256, 272, PPI 192).
    static let linktypes: [UInt32] = [187, 201, 254, 251, 256, 272, 192]

    static func pcapHeader(_ choice: UInt8) -> [UInt8] {
        pcapHeader(linktype: linktypes[Int(choice) % linktypes.count])
    }

    static func pcapHeader(linktype: UInt32) -> [UInt8] {
        littleEndian(UInt32(0xA1B2_C3D4)) + littleEndian(UInt16(2)) + littleEndian(UInt16(4)) + littleEndian(UInt32(0))
            + littleEndian(UInt32(0)) + littleEndian(UInt32(65535)) + littleEndian(linktype)
    }

    static func pcapngHeader(_ choice: UInt8) -> [UInt8] {
        let shb = littleEndian(UInt32(0x0A0D_0D0A)) + littleEndian(UInt32(28)) + littleEndian(UInt32(0x1A2B_3C4D))
            + littleEndian(UInt16(1)) + littleEndian(UInt16(0)) + littleEndian(UInt64.max) + littleEndian(UInt32(28))
        let idb = littleEndian(UInt32(1)) + littleEndian(UInt32(20)) + littleEndian(UInt16(truncatingIfNeeded: linktypes[Int(choice) % linktypes.count]))
            + littleEndian(UInt16(0)) + littleEndian(UInt32(0)) + littleEndian(UInt32(20))
        return shb + idb
    }

    static func bigEndian<T: FixedWidthInteger>(_ v: T) -> [UInt8] { withUnsafeBytes(of: v.bigEndian, Array.init) }
    static func littleEndian<T: FixedWidthInteger>(_ v: T) -> [UInt8] { withUnsafeBytes(of: v.littleEndian, Array.init) }
}
