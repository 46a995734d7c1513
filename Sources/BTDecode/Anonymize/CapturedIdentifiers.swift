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

    @exclusivity(unchecked) public private(set) var all: [Identifier] = []
    @exclusivity(unchecked) var addresses: [UInt64: Int] = [:]
    /// Names by their FNV-1a hash (as the `Anonymizer`'s names table), met by the field pass.
    @exclusivity(unchecked) var nameHashes: Set<UInt64> = []
    /// Names, keys and serial numbers by their bytes.
    @exclusivity(unchecked) var values: [[UInt8]: Int] = [:]
    /// GAP Device Name values read over ATT: names whose replacement is given after the first pass (so the names
    /// the field pass meets are numbered as in one pass).
    @exclusivity(unchecked) var attributeNames: [[UInt8]] = []

    public init() {}

    public var count: Int { all.count }
    public func count(_ kind: Kind) -> Int { all.reduce(0) { $0 + ($1.kind == kind ? 1 : 0) } }

    /// The original addresses (as `BDAddr.rawValue`).
    public var addressValues: Dictionary<UInt64, Int>.Keys { addresses.keys }

    func address(_ value: UInt64) {
        guard addresses[value] == nil, all.count < Self.limit else { return }
        addresses[value] = all.count
        all.append(Identifier(kind: .address, bytes: (0..<6).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) },
                              label: "address"))
    }

    /// A name the field pass met, by its hash (checked first, so a name seen again costs no allocation).
    func name(hash: UInt64, _ p: UnsafeMutableRawBufferPointer, from: Int, to: Int) {
        guard !nameHashes.contains(hash), all.count < Self.limit else { return }
        nameHashes.insert(hash)
        value(Array(p[from..<to]), kind: .name, label: "name")
    }

    func value(_ bytes: [UInt8], kind: Kind, label: String) {
        guard !bytes.isEmpty, values[bytes] == nil, all.count < Self.limit else { return }
        values[bytes] = all.count
        all.append(Identifier(kind: kind, bytes: bytes, label: label))
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

/// Finds identifiers' bytes in records and (for the copy) puts their replacements in place. Every pattern has
/// at least 4 bytes; a bit set over a hash of each position's first 4 bytes rules most positions out with one
/// load, so a scan costs little more than reading the bytes. Matches are leftmost, longest first, and do not
/// overlap.
public final class ValueScanner {
    /// The bytes searched for, and what replaces them.
    public struct Pattern: Sendable {
        public var bytes: [UInt8]
        /// The same length as `bytes`.
        public var replacement: [UInt8]
        /// Index in `CapturedIdentifiers.all`.
        public var identifier: Int
        public var form: IdentifierForm
    }

    public let patterns: [Pattern]
    /// The longest pattern's length: a window across two records keeps this many bytes less one of the first.
    public let longest: Int
    let filter: [UInt64]
    let filterShift: UInt32
    /// First 4 bytes (little-endian) → patterns, longest first.
    let candidates: [UInt32: [Int32]]

    public init(patterns: [Pattern]) {
        let usable = patterns.filter { $0.bytes.count >= 4 && $0.bytes.count == $0.replacement.count }
        self.patterns = usable
        longest = usable.map(\.bytes.count).max() ?? 0
        var bits = 12
        while (1 << bits) < usable.count * 32 && bits < 26 { bits += 1 }
        filterShift = UInt32(32 - bits)
        var filter = [UInt64](repeating: 0, count: (1 << bits) / 64)
        var candidates: [UInt32: [Int32]] = [:]
        for (i, pattern) in usable.enumerated() {
            let prefix = Self.prefix(pattern.bytes)
            let slot = Int((prefix &* 0x9E37_79B1) >> filterShift)
            filter[slot >> 6] |= 1 << UInt64(slot & 63)
            candidates[prefix, default: []].append(Int32(i))
        }
        for (prefix, list) in candidates where list.count > 1 {
            candidates[prefix] = list.sorted { usable[Int($0)].bytes.count > usable[Int($1)].bytes.count }
        }
        self.filter = filter
        self.candidates = candidates
    }

    static func prefix(_ b: [UInt8]) -> UInt32 {
        UInt32(b[0]) | UInt32(b[1]) << 8 | UInt32(b[2]) << 16 | UInt32(b[3]) << 24
    }

    public var isEmpty: Bool { patterns.isEmpty }

    /// Calls `found(position, pattern)` for each match in `p` that ends after `endingAfter` (bytes before it
    /// were scanned with the record before). After a match the scan goes on past it, or with `overlapping` at
    /// its second byte, so that a match overlapping it is found too (`rewrite`).
    @inline(__always)
    public func matches(in p: UnsafeRawBufferPointer, endingAfter: Int = 0, overlapping: Bool = false, _ found: (Int, Int) -> Void) {
        let count = p.count
        guard longest > 0, count >= 4, let base = p.baseAddress else { return }
        var i = 0
        let last = count - 4
        let shift = filterShift
        filter.withUnsafeBufferPointer { bits in
            while i <= last {
                let prefix = (base + i).loadUnaligned(as: UInt32.self).littleEndian
                let slot = Int((prefix &* 0x9E37_79B1) >> shift)
                guard bits[slot >> 6] & (1 << UInt64(slot & 63)) != 0, let list = candidates[prefix] else {
                    i += 1
                    continue
                }
                var matched = 0
                for index in list {
                    let bytes = patterns[Int(index)].bytes
                    let n = bytes.count
                    guard i + n <= count, i + n > endingAfter else { continue }
                    var equal = true
                    for k in 4..<n where base.load(fromByteOffset: i + k, as: UInt8.self) != bytes[k] { equal = false; break }
                    if equal {
                        found(i, Int(index))
                        matched = n
                        break
                    }
                }
                i += matched > 0 && !overlapping ? matched : 1
            }
        }
    }

    /// Puts each match's replacement in place; returns how many. Matches that overlap are each replaced: an
    /// identifier that begins inside another one's bytes (a key's last byte the first of an address) was left in
    /// place when the scan went on past the first, wherever the replacement kept the shared bytes (found by
    /// fuzzing). The scan reads the bytes as they are rewritten, so it sees what the copy will hold.
    public func rewrite(_ p: UnsafeMutableRawBufferPointer, endingAfter: Int = 0) -> Int {
        var replaced = 0
        matches(in: UnsafeRawBufferPointer(p), endingAfter: endingAfter, overlapping: true) { at, index in
            let replacement = patterns[index].replacement
            for k in 0..<replacement.count { p[at + k] = replacement[k] }
            replaced += 1
        }
        return replaced
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
