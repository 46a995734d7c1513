#if canImport(Glibc)
import Glibc
#endif
import BTWire
import BTCapture
import BTDecode
import BTTrack
import BTRules
import BTReport

/// Fuzz targets a layer each, fed from memory (no file per input), so that the fuzzer runs thousands of inputs a
/// second; `BTLENS_FUZZ_TARGET` picks one (`pipeline`, the whole of btlens, by default).
///
/// The decoder, tracker and anonymizer targets read the input as records framed by `RecordFrames`: the fuzzer
/// mutates the packets, not a container (for the tracker and the anonymizer through `HCIMutator`, so that their
/// inputs stay plausible HCI traffic). The reader targets put a valid file header before the input so that the
/// mutations land in the records.
enum LayerTarget: String, CaseIterable {
    case pipeline
    /// Every container, recognised by content, read from memory to its last record.
    case readers
    /// One container each, its header (datalink, linktype, byte order) chosen by the input's first byte.
    case btsnoop, pcap, pcapng, packetLogger = "pklg"
    /// Linux monitor frames (btsnoop 2001, pcap 254).
    case monitor
    /// Android's btsnooz: a summary's records, the btsnoop-headed log, a bug report's text.
    case btsnooz
    /// Archives and compressed captures with their decompression-bomb limits, bug reports' texts in them.
    case archive
    /// HCI packets through the decoder: L2CAP reassembly and signalling, ATT, EATT, SMP, advertising reports,
    /// link-layer records, each described as `decode -v` does.
    case decode
    /// ACL packets only: L2CAP reassembly, signalling, ATT, EATT, SMP.
    case l2cap
    /// Link-layer records only, in every air-sniffer container.
    case linkLayer = "ll"
    /// Advertising data structures.
    case advertisingData = "addata"
    /// Decoded records tracked and audited: connections, scans, ATT exchanges, the rules.
    case tracker
    /// The anonymizer, and its promise: nothing of the input's identifiers in its copy.
    case anonymizer

    static var selected: LayerTarget {
        guard let name = getenv("BTLENS_FUZZ_TARGET").map({ String(cString: $0) }) else { return .pipeline }
        guard let target = LayerTarget(rawValue: name) else {
            var message = "btlens-fuzz: BTLENS_FUZZ_TARGET=\(name) is none of \(allCases.map(\.rawValue).joined(separator: ", "))\n"
            message.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
            exit(2)
        }
        return target
    }

    /// Whether the target's inputs are framed HCI packets that `HCIMutator` mutates as such.
    var mutatesPackets: Bool { self == .tracker || self == .anonymizer }

    /// Runs one input through the target; traps when a promise breaks.
    func run(_ bytes: UnsafeRawBufferPointer) {
        switch self {
        case .pipeline: FuzzMain.check(bytes)
        case .readers: ReaderTargets.read(bytes)
        case .btsnoop: ReaderTargets.read(bytes, header: ReaderTargets.btsnoopHeader)
        case .pcap: ReaderTargets.read(bytes, header: ReaderTargets.pcapHeader)
        case .pcapng: ReaderTargets.read(bytes, header: ReaderTargets.pcapngHeader)
        case .packetLogger: ReaderTargets.readPacketLogger(bytes)
        case .monitor: ReaderTargets.read(bytes, header: ReaderTargets.monitorHeader)
        case .btsnooz: BTSnoozTarget.run(bytes)
        case .archive: ArchiveTarget.run(bytes)
        case .decode: LayerTarget.decode(bytes)
        case .l2cap: LayerTarget.decode(bytes, only: .acl)
        case .linkLayer: LayerTarget.decode(bytes, only: .linkLayer)
        case .advertisingData: LayerTarget.advertisingData(bytes)
        case .tracker: LayerTarget.track(bytes)
        case .anonymizer: AnonymizerTarget.run(bytes)
        }
    }

    // MARK: Decoders and the tracker

    /// Records of an input described as `decode -v` does, with their fields.
    static let describedRecords = 4

    /// Each framed record through `PacketDecoder` (with L2CAP), the first described with their fields as `decode -v` does.
    static func decode(_ bytes: UnsafeRawBufferPointer, only: RecordKind? = nil) {
        let issues = IssueLog()
        var decoder = PacketDecoder(issues: issues)
        var described = 0
        RecordFrames.each(bytes, only: only) { record in
            let frame = decoder.decode(record)
            if let pdu = frame.l2cap { require(pdu.payload.count <= 1 << 16 + 4, "L2CAP payload beyond its length field") }
            _ = frame.isMalformed
            // Describing costs twenty times decoding (strings): the first records only, which the fuzzer fills with
            // whatever it wants described.
            if described < describedRecords {
                _ = FrameDescription.summary(frame).count + FrameDescription.fields(frame).count
                described += 1
            }
        }
        require(issues.issues.count <= issues.keepLimit, "issues kept beyond the limit")
    }

    static func advertisingData(_ bytes: UnsafeRawBufferPointer) {
        var total = 0
        for structure in AdvertisingDataView(bytes) {
            require(structure.offset + structure.data.count <= bytes.count, "an AD structure beyond the data")
            total += 1
        }
        require(total <= bytes.count, "more AD structures than bytes")
        // What reports and the tracker read of it: every parsed field, the summary and the fields `decode -v` shows.
        let data = AdvertisingDataView(bytes)
        _ = (data.flags, data.localName, data.serviceUUIDs, data.solicitedServiceUUIDs, data.serviceData, data.manufacturerData,
             data.txPowerLevel, data.appearance, data.iBeacon, data.hasCompleteServiceUUIDList, data.malformation?.description)
        _ = data.summary.count + data.fields.count
        for structure in data { _ = (structure.uuids, structure.serviceData, structure.manufacturerData) }
    }

    /// The framed records of `bytes` decoded and tracked (advertisers aside).
    static func model(_ bytes: UnsafeRawBufferPointer) -> CaptureModel {
        let issues = IssueLog()
        var decoder = PacketDecoder(issues: issues)
        let tracker = CaptureTracker(options: .withoutAdvertisers)
        tracker.issues = issues
        RecordFrames.each(bytes) { tracker.observe(decoder.decode($0)) }
        return tracker.finish()
    }

    /// Framed records decoded and tracked, then the model finished and audited.
    static func track(_ bytes: UnsafeRawBufferPointer) {
        let model = model(bytes)
        require(model.records <= bytes.count, "\(model.records) records from \(bytes.count) bytes")
        _ = Auditor().audit(model, file: "fuzz")
    }
}
