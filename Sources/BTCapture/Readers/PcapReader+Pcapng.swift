import BTWire

extension PcapngFraming {
    /// Blocks, and bytes, looked at for the first interface description: it comes first in any real file, and a
    /// crafted one must not make the look-ahead buffer hundreds of megabytes.
    static let blocksSearched = 16
    static let bytesSearched = 1 << 20

    /// The first interface a pcapng starting with a section header describes, read without consuming anything;
    /// nil when the start is not one this framing reads (libpcap then decides what it is).
    static func firstInterface(_ source: ByteSource) throws -> Interface? {
        try firstInterface { count in try source.ensure(count) ? source.peek(count) : nil }
    }

    /// The same, in bytes already read (what libpcap was handed, for the resolution it does not expose).
    static func firstInterface(in bytes: UnsafeRawBufferPointer) -> Interface? {
        firstInterface { count in count <= bytes.count ? UnsafeRawBufferPointer(rebasing: bytes[..<count]) : nil }
    }

    /// - Parameter start: the first `count` bytes, nil when there are fewer.
    static func firstInterface(_ start: (Int) throws -> UnsafeRawBufferPointer?) rethrows -> Interface? {
        var framing = PcapngFraming()
        var offset = 0
        for index in 0..<blocksSearched {
            guard let head = try start(offset + blockHeaderLength) else { return nil }
            guard case .success(let length) = framing.blockLength(UnsafeRawBufferPointer(rebasing: head[offset...])),
                  offset + length <= bytesSearched, let bytes = try start(offset + length) else { return nil }
            let block = UnsafeRawBufferPointer(rebasing: bytes[offset...])
            let type = framing.u32(block, 0)
            guard index > 0 || type == BlockType.sectionHeader,
                  type != BlockType.enhancedPacket, type != BlockType.simplePacket, type != BlockType.obsoletePacket,
                  framing.take(block, type: type) == nil else { return nil }
            if let first = framing.interfaces.first { return first }
            offset += length
        }
        return nil
    }
}

extension PcapReader {
    /// The next packet of a pcapng framed here: blocks that are not packets update the section's interfaces
    /// and are not records; packets of interfaces btlens does not read keep their number and are skipped.
    func nextBlock() -> CaptureRecord? {
        while true {
            guard let frame = RecordFraming.next(source, issues: issues, recordNumber: &recordNumber, stopped: &stopped,
                                                 headerLength: PcapngFraming.blockHeaderLength,
                                                 totalLength: { pcapng!.blockLength($0) }) else {
                reportSkipped()
                return nil
            }
            let block = UnsafeRawBufferPointer(start: frame.header.baseAddress, count: frame.length)
            lastEnd = frame.offset + Int64(frame.length)
            let type = pcapng!.u32(block, 0)
            switch type {
            case PcapngFraming.BlockType.enhancedPacket, PcapngFraming.BlockType.simplePacket,
                 PcapngFraming.BlockType.obsoletePacket:
                switch pcapng!.packet(block, type: type) {
                case .failure(let problem):
                    issues.report(.absurdLength, record: recordNumber, offset: frame.offset, problem.message)
                    stopped = true
                    reportSkipped()
                    return nil
                case .success(let packet):
                    let interface = pcapng!.interfaces[packet.interface]
                    guard interface.accepted else {
                        pcapng!.skipped += 1
                        pcapng!.skippedLinktypes.insert(interface.linktype)
                        continue
                    }
                    let timestamp = packet.timestamp ?? pcapng!.lastTimestamp
                    pcapng!.lastTimestamp = timestamp
                    let bytes = UnsafeRawBufferPointer(rebasing: block[packet.dataOffset..<(packet.dataOffset + packet.captured)])
                    var record = CaptureRecord(number: recordNumber, offset: frame.offset, timestamp: timestamp,
                                               direction: .unknown, kind: .unknown,
                                               controller: UInt16(truncatingIfNeeded: packet.interface),
                                               sourceType: UInt32(interface.linktype), originalLength: packet.original,
                                               payload: bytes)
                    record.length = frame.length
                    classify(&record, bytes, linktype: interface.linktype)
                    return record
                }
            default:
                recordNumber -= 1  // not a packet
                if let problem = pcapng!.take(block, type: type) {
                    issues.report(.absurdLength, record: recordNumber + 1, offset: frame.offset, problem)
                    stopped = true
                    reportSkipped()
                    return nil
                }
            }
        }
    }

    /// Once, at the end: how many packets came from interfaces that are not Bluetooth.
    func reportSkipped() {
        guard let framing = pcapng, framing.skipped > 0 else { return }
        let names = framing.skippedLinktypes.sorted().map { "\(Linktype.name($0)) (linktype \($0))" }.joined(separator: ", ")
        issues.notice("\(framing.skipped) packets of pcapng interfaces with \(names) skipped: not Bluetooth")
        pcapng!.skipped = 0
    }
}
