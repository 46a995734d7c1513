import BTWire
import BTCapture

/// The identifiers a capture holds, as the field-aware pass of the `Anonymizer` meets them (the first pass of
/// `btlens anonymize`, and `anonymize --check`): device addresses, names (advertised, local, remote, GAP Device
/// Name values), IRKs, LTKs, link keys and other keys, and serial numbers read from Device Information. The
/// by-value pass then looks for their bytes everywhere. Bounded by the number of distinct identifiers (at most
/// `limit`), not by the capture's size.
public final class CapturedIdentifiers {
    /// What kind of identifier: an address, a name, a key or a serial number.
    public enum Kind: UInt8, Sendable {
        case address, name, key, serialNumber
    }

    /// One identifier met in a capture's fields, and the bytes that replace it.
    public struct Identifier: Sendable {
        public var kind: Kind
        /// An address's 6 bytes as HCI carries them (little-endian); a name's, key's or serial number's bytes as
        /// found.
        public var bytes: [UInt8]
        /// What it is, for messages: "address", "name", "LTK", "IRK", "link key", "serial number", …
        public var label: String

        /// An address as it is written (`AA:BB:CC:DD:EE:FF`), a name or serial number quoted, a key by its
        /// length and first bytes only.
        public var description: String {
            switch kind {
            case .address:
                return "address " + BDAddr(rawValue: bytes.prefix(6).enumerated().reduce(0) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) }).description
            case .name, .serialNumber:
                return "\(label) \"\(String(decoding: bytes, as: UTF8.self))\""
            case .key:
                let digits = Array("0123456789abcdef")
                return "\(label) " + String(bytes.prefix(2).flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0xF)]] })
                    + "… (\(bytes.count) bytes)"
            }
        }
    }

    public static let limit = 1 << 20
    /// Bytes an identifier must have at least to be looked for by value: shorter ones occur by chance.
    public static let minimumLength = 4

    /// The addresses, in order of appearance (the `Anonymizer`'s table, which numbers its pseudonyms by it).
    public let addresses: AddressTable
    /// Names, keys and serial numbers, in order of appearance, and how many addresses had been met before each
    /// (which places it among them in `all`).
    @exclusivity(unchecked) var others: [Identifier] = []
    @exclusivity(unchecked) var addressesBefore: [Int] = []
    /// Names by their FNV-1a hash (as the `Anonymizer`'s names table), met by the field pass.
    @exclusivity(unchecked) var nameHashes: Set<UInt64> = []
    /// Names, keys and serial numbers by their bytes.
    @exclusivity(unchecked) var values: [[UInt8]: Int] = [:]
    /// GAP Device Name values read over ATT: names whose replacement is given after the first pass (so the names
    /// the field pass meets are numbered as in one pass).
    @exclusivity(unchecked) var attributeNames: [[UInt8]] = []

    public init(addresses: AddressTable = AddressTable(limit: CapturedIdentifiers.limit)) {
        self.addresses = addresses
    }

    public var count: Int { addresses.count + others.count }
    public func count(_ kind: Kind) -> Int {
        kind == .address ? addresses.count : others.reduce(0) { $0 + ($1.kind == kind ? 1 : 0) }
    }

    /// Every identifier in order of appearance, each made when it is read (an address's bytes and label are not
    /// kept).
    public var all: All { All(found: self) }

    /// `all`: the identifiers by their place in order of appearance, addresses made from the table when read.
    public struct All: RandomAccessCollection {
        let found: CapturedIdentifiers
        public var startIndex: Int { 0 }
        public var endIndex: Int { found.count }
        public subscript(index: Int) -> Identifier {
            if let other = found.other(at: index) { return found.others[other] }
            return CapturedIdentifiers.address(found.addresses[found.addressPosition(at: index)])
        }
    }

    static func address(_ value: UInt64) -> Identifier {
        Identifier(kind: .address, bytes: BDAddr(rawValue: value).bytes, label: "address")
    }

    /// The place in `all` of the name, key or serial number `j`.
    func index(ofOther j: Int) -> Int { j + addressesBefore[j] }

    /// How many names, keys and serial numbers are placed before `index` of `all` (their places increase).
    func othersBefore(_ index: Int) -> Int { (0..<others.count).partitioningIndex { self.index(ofOther: $0) >= index } }

    /// Which name, key or serial number is at `index` of `all`, if one is.
    func other(at index: Int) -> Int? {
        let j = othersBefore(index)
        return j < others.count && self.index(ofOther: j) == index ? j : nil
    }

    /// The place in `all` of the address at `position`: after every other met when at most `position` addresses had
    /// been.
    func index(ofAddress position: Int) -> Int { position + addressesBefore.partitioningIndex { $0 > position } }

    /// The address position of `index` of `all` (not one of the others).
    func addressPosition(at index: Int) -> Int { index - othersBefore(index) }

    /// A name the field pass met, by its hash (checked first, so a name seen again costs no allocation).
    func name(hash: UInt64, _ p: UnsafeMutableRawBufferPointer, from: Int, to: Int) {
        guard !nameHashes.contains(hash), count < Self.limit else { return }
        nameHashes.insert(hash)
        value(Array(p[from..<to]), kind: .name, label: "name")
    }

    func value(_ bytes: [UInt8], kind: Kind, label: String) {
        guard !bytes.isEmpty, values[bytes] == nil, count < Self.limit else { return }
        values[bytes] = count
        addressesBefore.append(addresses.count)
        others.append(Identifier(kind: kind, bytes: bytes, label: label))
    }

    /// A key (16 bytes, or a PIN) at `at`: kept unless it is all one byte (zeros: no key).
    func key(_ p: UnsafeMutableRawBufferPointer, at: Int, count: Int, label: String) {
        guard at >= 0, count > 0, at + count <= p.count else { return }
        let first = p[at]
        var same = true
        for i in at..<at + count where p[i] != first { same = false; break }
        if same { return }
        value(Array(p[at..<at + count]), kind: .key, label: label)
    }

    /// A GAP Device Name or Serial Number String read over ATT: up to its first NUL.
    func attributeValue(_ bytes: [UInt8], kind: Kind) {
        let text = Array(bytes.prefix { $0 != 0 })
        guard text.count >= Self.minimumLength, values[text] == nil else { return }
        if kind == .name { attributeNames.append(text) }
        value(text, kind: kind, label: kind == .name ? "name" : "serial number")
    }

    /// Whether the bytes are worth looking for anywhere: long enough, and (for addresses and keys, which are
    /// binary) of at least three distinct byte values, (for text) not one byte repeated. `00:00:00:00:00:01` or
    /// a name of spaces would match the capture's own structure.
    static func distinctive(_ bytes: [UInt8], kind: Kind) -> Bool {
        guard bytes.count >= minimumLength else { return false }
        var seen: Set<UInt8> = []
        for b in bytes { seen.insert(b); if seen.count >= 3 { return true } }
        return (kind == .name || kind == .serialNumber) && seen.count == 2
    }

    /// `distinctive` for an address's 6 bytes, without making them an array (asked at every match by value).
    @inline(__always)
    static func distinctive(address value: UInt64) -> Bool {
        let first = value & 0xFF
        var second: UInt64?
        for i in 1..<6 {
            let b = value >> (8 * UInt64(i)) & 0xFF
            if b == first { continue }
            if let second, b != second { return true }
            second = b
        }
        return false
    }
}

/// How an identifier's bytes stand where they were found.
public enum IdentifierForm: UInt8, Sendable, CustomStringConvertible {
    /// As HCI carries it (an address little-endian).
    case asCarried
    /// Byte order reversed (an address as written, most significant byte first).
    case reversed
    /// An address as text, `AA:BB:CC:DD:EE:FF` or `aa:bb:cc:dd:ee:ff`.
    case upperText, lowerText

    public var description: String {
        switch self {
        case .asCarried: "in HCI byte order"
        case .reversed: "in reversed byte order"
        case .upperText, .lowerText: "as text"
        }
    }
}

/// Consecutive records' bytes seen as one stream, so an identifier split between two records (an ACL packet and
/// its continuation) is found too: each record is scanned after the last `longest - 1` bytes of the record before;
/// an ACL continuation without its 4-byte header, so its data joins the data before it.
struct ScanWindow {
    var buffer: UnsafeMutableRawBufferPointer

    init() { buffer = .allocate(byteCount: 1 << 16, alignment: 8) }

    func deallocate() { buffer.deallocate() }

    /// Bytes of a record left out of its window: an ACL continuation's header.
    static func skipped(kind: RecordKind, _ payload: UnsafeRawBufferPointer) -> Int {
        kind == .acl && payload.count >= 4 && payload[1] >> 4 & 0x3 == 0x1 ? 4 : 0
    }

    /// The previous record's tail (at most `keep` bytes of `tail`), then `payload`, in `buffer`; returns the
    /// window and how many bytes of it came from the previous record.
    mutating func load(tail: UnsafeRawBufferPointer, keep: Int, payload: UnsafeRawBufferPointer) -> (UnsafeMutableRawBufferPointer, Int) {
        let carried = min(max(0, keep), tail.count)
        let total = carried + payload.count
        if total > buffer.count {
            buffer.deallocate()
            buffer = .allocate(byteCount: total, alignment: 8)
        }
        if carried > 0 {
            UnsafeMutableRawBufferPointer(rebasing: buffer[0..<carried])
                .copyMemory(from: UnsafeRawBufferPointer(rebasing: tail[(tail.count - carried)...]))
        }
        if payload.count > 0 {
            UnsafeMutableRawBufferPointer(rebasing: buffer[carried..<total]).copyMemory(from: payload)
        }
        return (UnsafeMutableRawBufferPointer(rebasing: buffer[0..<total]), carried)
    }
}
