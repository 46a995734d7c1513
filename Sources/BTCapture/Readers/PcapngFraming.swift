import BTWire

/// pcapng blocks framed here, straight from the `ByteSource`'s buffer, because libpcap does not say which
/// interface a packet came from: a file merged from two adapters (two hciN, or two sniffers with their own
/// clocks) must keep them apart. Each packet's record carries its interface number as its `controller` (the
/// Linux monitor linktype keeps the adapter its header names), and each interface has its own linktype,
/// snapshot length and time base (if_tsresol, if_tsoffset). A new section header starts a new interface list.
///
/// What libpcap refuses stops reading here too, reported like a btsnoop record: a block length below 12, not a
/// multiple of 4, or above `maximumBlockLength`; a packet block whose captured length runs past the block, or that
/// names an interface not described; an unknown byte-order magic or a section of another major version.
/// Interfaces of a linktype btlens does not read have their packets skipped and counted in one notice.
struct PcapngFraming {
    struct Interface {
        var linktype: Int
        var snapshot: Int
        /// Timestamp units per second (if_tsresol: 10^n, or 2^n with the top bit set; µs by default).
        var unitsPerSecond: UInt64
        /// if_tsoffset: seconds added to every timestamp.
        var offsetSeconds: Int64
        var accepted: Bool
    }

    /// A packet block: its interface, timestamp, lengths and where its data starts in the block.
    struct Packet {
        var interface: Int
        var timestamp: Timestamp?
        var captured: Int
        var original: Int
        var dataOffset: Int
    }

    typealias BlockType = PcapngBlock
    typealias Option = PcapngBlock.Option

    /// Type, length, and the trailing length; also the least a section header's byte-order magic needs.
    static let blockHeaderLength = 12
    static let minimumBlockLength = 12
    /// libpcap's limit on a block (INITIAL_MAX_BLOCKSIZE in sf-pcapng.c grows to this).
    static let maximumBlockLength = 16 * 1024 * 1024
    /// Interfaces a section may describe: a file of nothing but descriptions must not grow memory with its size.
    static let maximumInterfaces = 4096
    static let defaultUnitsPerSecond: UInt64 = 1_000_000
    static let nanosecondsPerSecond: UInt64 = 1_000_000_000
    /// Fixed fields before the data: EPB and OPB 20 (after type and length), SPB 4.
    static let enhancedPacketDataOffset = 28
    static let simplePacketDataOffset = 12

    var bigEndian = false
    var interfaces: [Interface] = []
    /// Packets skipped because their interface's linktype is not Bluetooth.
    var skipped = 0
    var skippedLinktypes: Set<Int> = []
    /// A simple packet block has no timestamp: it takes the previous packet's.
    var lastTimestamp = Timestamp(nanoseconds: 0)

    @inline(__always)
    func u16(_ b: UnsafeRawBufferPointer, _ o: Int) -> Int {
        let v = b.loadUnaligned(fromByteOffset: o, as: UInt16.self)
        return Int(bigEndian ? UInt16(bigEndian: v) : UInt16(littleEndian: v))
    }

    @inline(__always)
    func u32(_ b: UnsafeRawBufferPointer, _ o: Int) -> UInt32 {
        let v = b.loadUnaligned(fromByteOffset: o, as: UInt32.self)
        return bigEndian ? UInt32(bigEndian: v) : UInt32(littleEndian: v)
    }

    /// The whole block's length from its first 12 bytes, taking a section header's byte order first.
    mutating func blockLength(_ h: UnsafeRawBufferPointer) -> Result<Int, RecordFraming.ImpossibleLength> {
        let type = UInt32(littleEndian: h.loadUnaligned(as: UInt32.self))
        if type == BlockType.sectionHeader {
            let magic = UInt32(littleEndian: h.loadUnaligned(fromByteOffset: 8, as: UInt32.self))
            switch magic {
            case PcapMagic.pcapngByteOrder: bigEndian = false
            case PcapMagic.pcapngByteOrder.byteSwapped: bigEndian = true
            default: return .failure(.init(message: "pcapng section header with an unknown byte-order magic \(Hex.format(magic, width: 8)); rest of file skipped"))
            }
        }
        let length = Int(u32(h, 4))
        guard length >= Self.minimumBlockLength, length % 4 == 0, length <= Self.maximumBlockLength else {
            return .failure(.init(message: "pcapng block of length \(length) (at least \(Self.minimumBlockLength), a multiple of 4, at most \(Self.maximumBlockLength)); rest of file skipped"))
        }
        return .success(length)
    }

    /// Takes a block that is not a packet (section header, interface description, others ignored); an error
    /// message when it makes the rest unreadable.
    mutating func take(_ block: UnsafeRawBufferPointer, type: UInt32) -> String? {
        switch type {
        case BlockType.sectionHeader:
            // type, length, magic, major u16, minor u16, section length i64, options.
            guard block.count >= 16 + 4 else { return "pcapng section header of \(block.count) bytes is too short" }
            let major = u16(block, 12)
            guard major == Int(PcapngBlock.majorVersion) else { return "pcapng section of version \(major).\(u16(block, 14)) is not read" }
            interfaces.removeAll(keepingCapacity: true)
        case BlockType.interfaceDescription:
            // type, length, linktype u16, reserved u16, snaplen u32, options.
            guard block.count >= 20 else { return "pcapng interface description of \(block.count) bytes is too short" }
            guard interfaces.count < Self.maximumInterfaces else {
                return "pcapng section describes more than \(Self.maximumInterfaces) interfaces; rest of file skipped"
            }
            let linktype = u16(block, 8)
            let snaplen = Int(u32(block, 12))
            var interface = Interface(linktype: linktype,
                                      snapshot: snaplen == 0 || snaplen > PcapReader.maximumSnapshot ? PcapReader.maximumSnapshot : snaplen,
                                      unitsPerSecond: Self.defaultUnitsPerSecond, offsetSeconds: 0,
                                      accepted: PcapReader.accepts(linktype))
            var o = 16
            let end = block.count - 4
            while o + 4 <= end {
                let code = UInt16(u16(block, o)), length = u16(block, o + 2)
                if code == Option.endOfOptions || o + 4 + length > end { break }
                if code == Option.timestampResolution, length >= 1 {
                    let r = block[o + 4]
                    let exponent = Int(r & ~Option.binaryResolution)
                    if r & Option.binaryResolution != 0 {
                        if exponent < 64 { interface.unitsPerSecond = 1 << UInt64(exponent) }
                    } else if exponent <= 19 {
                        var units: UInt64 = 1
                        for _ in 0..<exponent { units *= 10 }
                        interface.unitsPerSecond = units
                    }
                } else if code == Option.timestampOffset, length >= 8 {
                    let v = block.loadUnaligned(fromByteOffset: o + 4, as: UInt64.self)
                    interface.offsetSeconds = Int64(bitPattern: bigEndian ? UInt64(bigEndian: v) : UInt64(littleEndian: v))
                }
                o += 4 + (length + 3) & ~3
            }
            interfaces.append(interface)
        default:
            break  // statistics, name resolution, decryption secrets, custom blocks: nothing btlens uses
        }
        return nil
    }

    /// The packet in `block` of `type` (EPB, OPB or SPB), or an error message.
    mutating func packet(_ block: UnsafeRawBufferPointer, type: UInt32) -> Result<Packet, RecordFraming.ImpossibleLength> {
        let interface: Int
        var timestamp: Timestamp?
        let captured: Int, original: Int, dataOffset: Int
        if type == BlockType.simplePacket {
            guard block.count >= Self.simplePacketDataOffset + 4 else {
                return .failure(.init(message: "pcapng simple packet block of \(block.count) bytes is too short"))
            }
            interface = 0
            original = Int(u32(block, 8))
            dataOffset = Self.simplePacketDataOffset
            captured = min(original, block.count - dataOffset - 4)
        } else {
            guard block.count >= Self.enhancedPacketDataOffset + 4 else {
                return .failure(.init(message: "pcapng packet block of \(block.count) bytes is too short"))
            }
            interface = type == BlockType.obsoletePacket ? u16(block, 8) : Int(u32(block, 8))
            let units = UInt64(u32(block, 12)) << 32 | UInt64(u32(block, 16))
            captured = Int(u32(block, 20))
            original = Int(u32(block, 24))
            dataOffset = Self.enhancedPacketDataOffset
            guard captured <= block.count - dataOffset - 4 else {
                return .failure(.init(message: "pcapng packet of \(captured) captured bytes is longer than its \(block.count)-byte block"))
            }
            if interface < interfaces.count { timestamp = time(units, interfaces[interface]) }
        }
        guard interface < interfaces.count else {
            return .failure(.init(message: "pcapng packet on interface \(interface), but the section describes \(interfaces.count)"))
        }
        return .success(Packet(interface: interface, timestamp: timestamp, captured: min(captured, interfaces[interface].snapshot),
                               original: original, dataOffset: dataOffset))
    }

    /// `units` since the epoch in the interface's resolution, as a timestamp (whole-width arithmetic: a binary
    /// resolution of 2^-63 s does not overflow).
    func time(_ units: UInt64, _ interface: Interface) -> Timestamp {
        let perSecond = interface.unitsPerSecond
        let seconds = units / perSecond, fraction = units % perSecond
        let product = fraction.multipliedFullWidth(by: Self.nanosecondsPerSecond)
        let nanoseconds = perSecond.dividingFullWidth(product).quotient
        return Timestamp(seconds: Int64(truncatingIfNeeded: seconds) &+ interface.offsetSeconds,
                         nanoseconds: Int64(nanoseconds))
    }
}
