#if canImport(Glibc)
import Glibc
#endif
import BTWire
import BTCapture
import BTDecode
import BTTrack
import BTRules

/// Fuzz targets a layer each, fed from memory (no file per input), so that the fuzzer runs thousands of inputs a
/// second; `BTLENS_FUZZ_TARGET` picks one (`pipeline`, the whole of btlens through a file, by default).
///
/// The decoder and tracker targets read the input as records framed by `RecordFrames`: the fuzzer mutates the
/// packets, not a container, so its inputs stay plausible HCI traffic. The reader targets put a valid file header
/// before the input so that the mutations land in the records.
enum LayerTarget: String, CaseIterable {
    case pipeline
    /// Every container, recognised by content, read from memory to its last record.
    case readers
    /// One container each, its header chosen by the input's first byte.
    case btsnoop, pcap, pcapng, packetLogger = "pklg"
    /// HCI packets through the decoder: L2CAP reassembly and signalling, ATT, EATT, SMP, advertising reports,
    /// link-layer records.
    case decode
    /// Advertising data structures.
    case advertisingData = "addata"
    /// Decoded records tracked and audited: connections, scans, ATT exchanges, the rules.
    case tracker

    static var selected: LayerTarget {
        guard let name = getenv("BTLENS_FUZZ_TARGET").map({ String(cString: $0) }) else { return .pipeline }
        guard let target = LayerTarget(rawValue: name) else {
            var message = "btlens-fuzz: BTLENS_FUZZ_TARGET=\(name) is none of \(allCases.map(\.rawValue).joined(separator: ", "))\n"
            message.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
            exit(2)
        }
        return target
    }

    /// Runs one input through the target; traps when a promise breaks.
    func run(_ bytes: UnsafeRawBufferPointer) {
        switch self {
        case .pipeline: FuzzMain.check(bytes)
        case .readers: LayerTarget.read(bytes)
        case .btsnoop: LayerTarget.read(LayerTarget.withHeader(bytes, LayerTarget.btsnoopHeader))
        case .pcap: LayerTarget.read(LayerTarget.withHeader(bytes, LayerTarget.pcapHeader))
        case .pcapng: LayerTarget.read(LayerTarget.withHeader(bytes, LayerTarget.pcapngHeader))
        case .packetLogger: LayerTarget.read(LayerTarget.withHeader(bytes) { _ in [] })
        case .decode: LayerTarget.decode(bytes)
        case .advertisingData: LayerTarget.advertisingData(bytes)
        case .tracker: LayerTarget.track(bytes)
        }
    }

    // MARK: Readers

    /// Bytes from memory, handed to a `ByteSource` as an archive member's would be.
    final class MemoryInput: ByteInput {
        let bytes: [UInt8]
        var position = 0
        init(_ bytes: [UInt8]) { self.bytes = bytes }
        func read(into buffer: UnsafeMutableRawPointer, count: Int) throws -> Int {
            let n = min(count, bytes.count - position)
            guard n > 0 else { return 0 }
            bytes.withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress! + position, byteCount: n) }
            position += n
            return n
        }
    }

    /// Every record of the capture `bytes` hold, through the decoder: a bounded count, issues within their limit.
    static func read(_ bytes: [UInt8]) {
        let issues = IssueLog()
        guard let capture = try? OpenedCapture.open(source: ByteSource(input: MemoryInput(bytes), capacity: 1 << 16), issues: issues)
        else { return }
        var collector = StatisticsCollector()
        guard let statistics = try? capture.accept(&collector) else { return }
        // A record takes at least its header: no more records than bytes.
        precondition(statistics.records <= bytes.count + 1, "\(statistics.records) records from \(bytes.count) bytes")
        precondition(issues.issues.count <= issues.keepLimit, "issues kept beyond the limit")
    }

    static func read(_ bytes: UnsafeRawBufferPointer) { read(Array(bytes)) }

    /// A file header chosen by the input's first byte, then the rest of the input.
    static func withHeader(_ bytes: UnsafeRawBufferPointer, _ header: (UInt8) -> [UInt8]) -> [UInt8] {
        guard let first = bytes.first else { return [] }
        return header(first) + Array(bytes.dropFirst())
    }

    static func btsnoopHeader(_ choice: UInt8) -> [UInt8] {
        let datalinks: [UInt32] = [BTSnoopDatalink.h1, BTSnoopDatalink.h4, BTSnoopDatalink.monitor]
        return BTSnoopReader.magic + bigEndian(UInt32(1)) + bigEndian(datalinks[Int(choice) % datalinks.count])
    }

    /// pcap linktypes btlens reads: HCI (187, 201, 254) and air sniffers (251, 256, 272, PPI 192).
    static let linktypes: [UInt32] = [187, 201, 254, 251, 256, 272, 192]

    static func pcapHeader(_ choice: UInt8) -> [UInt8] {
        littleEndian(UInt32(0xA1B2_C3D4)) + littleEndian(UInt16(2)) + littleEndian(UInt16(4)) + littleEndian(UInt32(0))
            + littleEndian(UInt32(0)) + littleEndian(UInt32(65535)) + littleEndian(linktypes[Int(choice) % linktypes.count])
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

    // MARK: Decoders and the tracker

    /// Each framed record through `PacketDecoder` (with L2CAP), its views read.
    static func decode(_ bytes: UnsafeRawBufferPointer) {
        let issues = IssueLog()
        var decoder = PacketDecoder(issues: issues)
        RecordFrames.each(bytes) { record in
            let frame = decoder.decode(record)
            if let pdu = frame.l2cap { precondition(pdu.payload.count <= 1 << 16 + 4, "L2CAP payload beyond its length field") }
            _ = frame.isMalformed
        }
        precondition(issues.issues.count <= issues.keepLimit, "issues kept beyond the limit")
    }

    static func advertisingData(_ bytes: UnsafeRawBufferPointer) {
        var total = 0
        for structure in AdvertisingDataView(bytes) {
            precondition(structure.offset + structure.data.count <= bytes.count, "an AD structure beyond the data")
            total += 1
        }
        precondition(total <= bytes.count, "more AD structures than bytes")
    }

    /// Framed records decoded and tracked, then the model finished and audited.
    static func track(_ bytes: UnsafeRawBufferPointer) {
        let issues = IssueLog()
        var decoder = PacketDecoder(issues: issues)
        let tracker = CaptureTracker(options: .withoutAdvertisers)
        tracker.issues = issues
        RecordFrames.each(bytes) { tracker.observe(decoder.decode($0)) }
        let model = tracker.finish()
        precondition(model.records <= bytes.count, "\(model.records) records from \(bytes.count) bytes")
        _ = Auditor().audit(model, file: "fuzz")
    }
}

/// The decoder and tracker targets' input: records one after another, each `kind` (a byte: command, event, ACL, SCO,
/// ISO, link layer), `direction` (a byte; for a link-layer record, its linktype), `length` (a byte), then that many
/// bytes of packet, cut short by the input's end; time advances 1 ms a record.
enum RecordFrames {
    static let kinds: [RecordKind] = [.command, .event, .acl, .acl, .acl, .event, .sco, .iso, .linkLayer]
    static let headerLength = 3
    /// LE air-sniffer linktypes: 251 (LE LL), 256 (LE LL with PHDR), 272 (nRF Sniffer).
    static let airLinktypes: [UInt32] = [251, 256, 272]

    static func each(_ bytes: UnsafeRawBufferPointer, _ body: (CaptureRecord) -> Void) {
        var offset = 0, number = 0
        while offset + headerLength <= bytes.count {
            let kind = kinds[Int(bytes[offset]) % kinds.count]
            let direction: Direction = bytes[offset + 1] & 1 == 0 ? .sent : .received
            let length = min(Int(bytes[offset + 2]), bytes.count - offset - headerLength)
            let payload = UnsafeRawBufferPointer(rebasing: bytes[(offset + headerLength)..<(offset + headerLength + length)])
            number += 1
            // A link-layer record's source is the sniffer's linktype: its direction byte picks one.
            let linktype = kind == .linkLayer ? airLinktypes[Int(bytes[offset + 1]) % airLinktypes.count] : 0
            body(CaptureRecord(number: number, offset: Int64(offset), timestamp: Timestamp(nanoseconds: Int64(number) * 1_000_000),
                               direction: direction, kind: kind, controller: 0, sourceType: linktype,
                               originalLength: length, payload: payload))
            offset += headerLength + length
        }
    }
}
