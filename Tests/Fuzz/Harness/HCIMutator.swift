import BTWire
import BTScenario

/// The tracker's and the anonymizer's structure-aware mutator (libFuzzer's `LLVMFuzzerCustomMutator`): it reads
/// the input as the typed HCI packets `RecordFrames` frames and mutates the sequence, not the bytes — packets of a
/// central's life inserted (scans, advertising reports, connections and their updates, ATT exchanges, SMP,
/// signalling, EATT, disconnections) on the connection handles and addresses the input already uses, packets
/// deleted, repeated, swapped or moved to another link, a packet's bytes mutated by libFuzzer and its length
/// fields set right again. Byte-level mutation alone breaks the lengths and handles, and the tracker then sees
/// malformed packets on links it never saw open: it would rarely get past the decoder.
struct HCIMutator {
    /// One framed record: its kind and direction bytes (`RecordFrames`) and its packet.
    struct Packet: Equatable {
        var kind: UInt8
        var aux: UInt8
        var bytes: [UInt8]
    }

    /// libFuzzer's own mutation of a buffer (`LLVMFuzzerMutate`): data, size, maximum size → new size.
    typealias ByteMutator = (UnsafeMutablePointer<UInt8>, Int, Int) -> Int

    static let maximumPacket = 255
    var random: SplitMix64
    let byteMutator: ByteMutator

    init(seed: UInt32, byteMutator: @escaping ByteMutator) {
        random = SplitMix64(seed: UInt64(seed) &* SplitMixHash.increment | 1)
        self.byteMutator = byteMutator
    }

    // MARK: Framing

    static func parse(_ bytes: UnsafeRawBufferPointer) -> [Packet] {
        var packets: [Packet] = []
        var at = 0
        while at + RecordFrames.headerLength <= bytes.count {
            let length = min(Int(bytes[at + 2]), bytes.count - at - RecordFrames.headerLength)
            let start = at + RecordFrames.headerLength
            packets.append(Packet(kind: bytes[at], aux: bytes[at + 1], bytes: Array(bytes[start..<(start + length)])))
            at = start + length
        }
        return packets
    }

    /// The packets framed again, as many as fit in `maximum` bytes.
    static func serialize(_ packets: [Packet], maximum: Int) -> [UInt8] {
        var out: [UInt8] = []
        for p in packets {
            let n = min(p.bytes.count, maximumPacket)
            guard out.count + RecordFrames.headerLength + n <= maximum else { break }
            out += [p.kind, p.aux, UInt8(n)] + p.bytes.prefix(n)
        }
        return out
    }

    // MARK: Mutation

    /// Mutates `data` (`size` bytes, room for `maximum`) in place; returns its new size.
    mutating func mutate(_ data: UnsafeMutablePointer<UInt8>, size: Int, maximum: Int) -> Int {
        // Now and then libFuzzer's plain mutation of the whole input: framing bytes matter too.
        if random.below(10) == 0 { return byteMutator(data, size, maximum) }
        var packets = Self.parse(UnsafeRawBufferPointer(start: data, count: size))
        let known = Known(packets)
        for _ in 0...random.below(3) { mutate(&packets, known: known) }
        let out = Self.serialize(packets, maximum: maximum)
        guard !out.isEmpty else { return byteMutator(data, size, maximum) }
        out.withUnsafeBytes { data.update(from: $0.bindMemory(to: UInt8.self).baseAddress!, count: out.count) }
        return out.count
    }

    mutating func mutate(_ packets: inout [Packet], known: Known) {
        let at = random.below(packets.count + 1)
        switch packets.isEmpty ? 0 : random.below(8) {
        case 0, 1:  // a plausible packet, or a request and its answer, on a link the input knows
            packets.insert(contentsOf: template(known), at: at)
        case 2:  // libFuzzer's mutation of one packet, its lengths set right again (mostly)
            let i = min(at, packets.count - 1)
            var bytes = packets[i].bytes + [UInt8](repeating: 0, count: Self.maximumPacket - packets[i].bytes.count)
            let n = bytes.withUnsafeMutableBufferPointer { byteMutator($0.baseAddress!, packets[i].bytes.count, Self.maximumPacket) }
            packets[i].bytes = Array(bytes.prefix(n))
            if random.below(4) != 0 { Self.fixLengths(&packets[i]) }
        case 3:
            packets.remove(at: min(at, packets.count - 1))
        case 4:  // repeated elsewhere (retransmission, a second notification)
            packets.insert(packets[random.below(packets.count)], at: at)
        case 5:
            packets.swapAt(random.below(packets.count), random.below(packets.count))
        case 6:  // moved to another link
            let i = min(at, packets.count - 1)
            Self.setHandle(&packets[i], known.handles[random.below(known.handles.count)])
        default:  // a run of packets repeated (an exchange, a scan burst)
            let from = random.below(packets.count)
            let run = packets[from..<min(packets.count, from + 1 + random.below(8))]
            packets.insert(contentsOf: run, at: at)
        }
    }

    /// Connection handles and peer addresses the input uses (some made up when it has none).
    struct Known {
        var handles: [UInt16] = []
        var addresses: [[UInt8]] = []

        init(_ packets: [Packet]) {
            for p in packets {
                let b = p.bytes
                if p.kind == RecordFrames.eventByte, b.count >= 14, b[0] == 0x3E, b[2] == 0x01 || b[2] == 0x0A {
                    handles.append(UInt16(b[4]) | UInt16(b[5] & 0x0F) << 8)
                    addresses.append(Array(b[8..<14]))
                } else if p.kind == RecordFrames.eventByte, b.count >= 12, b[0] == 0x3E, b[2] == 0x02 {
                    addresses.append(Array(b[6..<12]))
                } else if RecordFrames.kinds[Int(p.kind) % RecordFrames.kinds.count] == .acl, b.count >= 2 {
                    handles.append(UInt16(b[0]) | UInt16(b[1] & 0x0F) << 8)
                }
            }
            handles = Array(Set(handles).sorted().prefix(8)) + [0x0040, 0x0041]
            addresses = Array(addresses.prefix(8)) + [[0x11, 0x22, 0x33, 0x44, 0x55, 0xC6], [0xA1, 0xB2, 0xC3, 0xD4, 0xE5, 0x46]]
        }
    }

    // MARK: Lengths and handles

    /// The HCI (and first L2CAP) length fields of `packet` made to match its bytes.
    static func fixLengths(_ packet: inout Packet) {
        var b = packet.bytes
        switch RecordFrames.kinds[Int(packet.kind) % RecordFrames.kinds.count] {
        case .command where b.count >= 3:
            b[2] = UInt8(b.count - 3)
        case .event where b.count >= 2:
            b[1] = UInt8(b.count - 2)
        case .acl where b.count >= 4:
            b[2] = UInt8(b.count - 4)
            b[3] = 0
            // A first fragment carries the L2CAP length; a continuation does not.
            if (b[1] >> 4) & 3 != 1, b.count >= 8 {
                b[4] = UInt8(b.count - 8)
                b[5] = 0
            }
        default:
            break
        }
        packet.bytes = b
    }

    static func setHandle(_ packet: inout Packet, _ handle: UInt16) {
        let b = packet.bytes
        switch RecordFrames.kinds[Int(packet.kind) % RecordFrames.kinds.count] {
        case .acl where b.count >= 2:
            packet.bytes[0] = UInt8(handle & 0xFF)
            packet.bytes[1] = b[1] & 0xF0 | UInt8(handle >> 8)
        case .event where b.count >= 6 && b[0] == 0x3E && [0x01, 0x03, 0x07, 0x0A, 0x0C].contains(b[2]):
            // LE Connection (Enhanced) Complete and Update Complete: status, then the handle; Data Length Change
            // and PHY Update Complete: the handle first (status for PHY).
            let at = b[2] == 0x07 ? 3 : 4
            packet.bytes[at] = UInt8(handle & 0xFF)
            packet.bytes[at + 1] = UInt8(handle >> 8)
        case .event where b.count >= 5 && (b[0] == 0x05 || b[0] == 0x08):  // Disconnection Complete, Encryption Change
            packet.bytes[3] = UInt8(handle & 0xFF)
            packet.bytes[4] = UInt8(handle >> 8)
        default:
            break
        }
    }
}

/// The mutator's choices, reproducible from libFuzzer's seed (the scenarios' generator).
extension SplitMix64 {
    /// A number in 0..<n (0 when n is 0).
    mutating func below(_ n: Int) -> Int { Int(next(below: UInt64(max(0, n)))) }

    mutating func byte() -> UInt8 { UInt8(truncatingIfNeeded: next()) }
}
