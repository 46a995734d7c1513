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
/// overlap. The patterns' bytes and replacements are kept one after the other in one array, and the candidates
/// for each first 4 bytes in one list: a capture of hundreds of thousands of addresses (four patterns each) spent
/// about 850 bytes per address on arrays of their own.
public final class ValueScanner {
    /// The bytes searched for, and what replaces them.
    public struct Pattern: Sendable {
        public var bytes: [UInt8]
        /// The same length as `bytes`.
        public var replacement: [UInt8]
        /// Index in `CapturedIdentifiers.all`.
        public var identifier: Int
        public var form: IdentifierForm

        public init(bytes: [UInt8], replacement: [UInt8], identifier: Int, form: IdentifierForm) {
            self.bytes = bytes
            self.replacement = replacement
            self.identifier = identifier
            self.form = form
        }
    }

    /// Where a pattern is in `arena` (its bytes, then as many of its replacement's), and whose it is.
    struct Stored: Sendable {
        var start: UInt32
        var length: UInt32
        var identifier: Int32
        var form: IdentifierForm
    }

    /// Every pattern's bytes and replacement, one after the other.
    let arena: [UInt8]
    let stored: [Stored]

    /// The patterns, each made when it is read (for messages and checks; the scan reads `arena`).
    public struct Patterns: RandomAccessCollection, Sendable {
        let arena: [UInt8]
        let stored: [Stored]
        public var startIndex: Int { 0 }
        public var endIndex: Int { stored.count }
        public subscript(i: Int) -> Pattern {
            let p = stored[i], start = Int(p.start), n = Int(p.length)
            return Pattern(bytes: Array(arena[start..<start + n]), replacement: Array(arena[start + n..<start + 2 * n]),
                           identifier: Int(p.identifier), form: p.form)
        }
    }

    public var patterns: Patterns { Patterns(arena: arena, stored: stored) }
    /// The longest pattern's length: a window across two records keeps this many bytes less one of the first.
    public let longest: Int
    let filter: [UInt64]
    let filterShift: UInt32
    /// First 4 bytes (little-endian) → where the patterns that begin so are listed in `lists`, longest first,
    /// ended by -1.
    let candidates: [UInt32: Int32]
    let lists: [Int32]

    /// Patterns added one at a time (`Anonymizer.byValueScanner`), without a list of them all first.
    public struct Builder {
        var arena: [UInt8] = []
        var stored: [Stored] = []

        public init() {}

        /// Adds a pattern; one shorter than 4 bytes, or whose replacement is not as long, is left out.
        public mutating func add<B: Collection<UInt8>, R: Collection<UInt8>>(bytes: B, replacement: R, identifier: Int,
                                                                            form: IdentifierForm) {
            guard bytes.count >= 4, bytes.count == replacement.count else { return }
            stored.append(Stored(start: UInt32(arena.count), length: UInt32(bytes.count), identifier: Int32(identifier), form: form))
            arena.append(contentsOf: bytes)
            arena.append(contentsOf: replacement)
        }

        public func scanner() -> ValueScanner { ValueScanner(arena: arena, stored: stored) }
    }

    public convenience init(patterns: [Pattern]) {
        var builder = Builder()
        for p in patterns { builder.add(bytes: p.bytes, replacement: p.replacement, identifier: p.identifier, form: p.form) }
        self.init(arena: builder.arena, stored: builder.stored)
    }

    init(arena: [UInt8], stored: [Stored]) {
        self.arena = arena
        self.stored = stored
        longest = stored.map { Int($0.length) }.max() ?? 0
        var bits = 12
        while (1 << bits) < stored.count * 32 && bits < 26 { bits += 1 }
        filterShift = UInt32(32 - bits)
        var filter = [UInt64](repeating: 0, count: (1 << bits) / 64)
        // Each pattern by its first 4 bytes, in the patterns' order within each.
        var byPrefix: [(prefix: UInt32, index: Int32)] = []
        byPrefix.reserveCapacity(stored.count)
        for (i, p) in stored.enumerated() {
            let prefix = Self.prefix(arena, at: Int(p.start))
            let slot = Int((prefix &* 0x9E37_79B1) >> filterShift)
            filter[slot >> 6] |= 1 << UInt64(slot & 63)
            byPrefix.append((prefix, Int32(i)))
        }
        byPrefix.sort { ($0.prefix, $0.index) < ($1.prefix, $1.index) }
        var candidates: [UInt32: Int32] = [:]
        var lists: [Int32] = []
        lists.reserveCapacity(byPrefix.count * 2)
        var g = 0
        while g < byPrefix.count {
            var e = g
            while e < byPrefix.count && byPrefix[e].prefix == byPrefix[g].prefix { e += 1 }
            var list = byPrefix[g..<e].map(\.index)
            // The same sort of the same list as when each first 4 bytes kept an array of their own: the same order.
            if list.count > 1 { list = list.sorted { stored[Int($0)].length > stored[Int($1)].length } }
            candidates[byPrefix[g].prefix] = Int32(lists.count)
            lists += list
            lists.append(-1)
            g = e
        }
        self.filter = filter
        self.candidates = candidates
        self.lists = lists
    }

    static func prefix(_ b: [UInt8], at i: Int = 0) -> UInt32 {
        UInt32(b[i]) | UInt32(b[i + 1]) << 8 | UInt32(b[i + 2]) << 16 | UInt32(b[i + 3]) << 24
    }

    public var isEmpty: Bool { stored.isEmpty }

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
                guard bits[slot >> 6] & (1 << UInt64(slot & 63)) != 0, var at = candidates[prefix].map(Int.init) else {
                    i += 1
                    continue
                }
                var matched = 0
                while lists[at] >= 0 {
                    let index = Int(lists[at])
                    at += 1
                    let p = stored[index]
                    let n = Int(p.length), start = Int(p.start)
                    guard i + n <= count, i + n > endingAfter else { continue }
                    var equal = true
                    for k in 4..<n where base.load(fromByteOffset: i + k, as: UInt8.self) != arena[start + k] { equal = false; break }
                    if equal {
                        found(i, index)
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
            let pattern = stored[index]
            let n = Int(pattern.length), from = Int(pattern.start) + n
            for k in 0..<n { p[at + k] = arena[from + k] }
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
