import BTWire

/// Finds identifiers' bytes in records and (for the copy) puts their replacements in place. Every identifier has
/// at least 4 bytes; a bit set over a hash of each position's first 4 bytes rules most positions out with one
/// load, so a scan costs little more than reading the bytes. Matches are leftmost, longest first (then the
/// identifier met first, then the form in `IdentifierForm`'s order), and do not overlap.
///
/// Names, keys and serial numbers are patterns: their bytes and replacements one after the other in one array,
/// the candidates for each first 4 bytes in one list. Addresses are not: the 6 bytes at a position (in either
/// order) and 17 bytes that read as an address in text are looked up in the capture's `AddressTable`, and the
/// replacement is made from the pseudonym when one is put in place. A capture of hundreds of thousands of
/// rotating addresses otherwise held four patterns of each.
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

    /// One identifier found at a position: `length` bytes of it.
    public struct Match: Sendable {
        public var length: Int
        /// Index in `CapturedIdentifiers.all` (for patterns made by `init(patterns:)`, the one given).
        public var identifier: Int
        public var form: IdentifierForm
        /// The pattern's index in `stored`; -1 for an address.
        let stored: Int
        /// The address found (`BDAddr.rawValue`), for an address.
        let address: UInt64
    }

    /// The addresses looked for by value, and the pseudonym each is given. A class: the scan hands it on at every
    /// position its first 4 bytes let through, without copying what it holds.
    public final class Addresses {
        let identifiers: CapturedIdentifiers
        let table: AddressTable
        /// Only the first `searched` of the table: those met when the scanner was made.
        let searched: Int
        let pseudonym: (UInt64) -> UInt64
        /// How many are looked for (`CapturedIdentifiers.distinctive`).
        let distinctive: Int
        /// Each looked for, by a hash of its value: most positions the first 4 bytes let through are no address,
        /// and one load in this (2 bytes an address, at most 512 kB) says so before the table is searched.
        let filter: BlockedFilter

        public init(identifiers: CapturedIdentifiers, pseudonym: @escaping (UInt64) -> UInt64) {
            self.identifiers = identifiers
            self.pseudonym = pseudonym
            let table = identifiers.addresses
            self.table = table
            searched = table.count
            // One reading of the table (set aside, it is read from a file): sized for every address, as nearly
            // all are distinctive.
            var n = 0
            var filter = BlockedFilter(count: searched, bitsEach: Self.filterBitsPerAddress, maximumBits: Self.filterMaximumBits)
            table.forEach(below: searched) { _, value in
                guard CapturedIdentifiers.distinctive(address: value) else { return }
                n += 1
                filter.insert(hash: SplitMixHash.hash(value))
            }
            distinctive = n
            self.filter = filter
        }

        static let filterBitsPerAddress = 16
        /// At most 512 kB, whatever the number of addresses: hundreds of thousands of them then have fewer bits
        /// each, and more positions reach the table (`AddressTable`, which rules most out in memory too).
        static let filterMaximumBits = 22

        /// The position of `value` if it is looked for.
        @inline(__always)
        func position(of value: UInt64) -> Int? {
            guard filter.mayContain(hash: SplitMixHash.hash(value)),
                  let p = table.position(of: value), p < searched,
                  CapturedIdentifiers.distinctive(address: value) else { return nil }
            return p
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
    let addresses: Addresses?

    /// The longest identifier's length: a window across two records keeps this many bytes less one of the first.
    public let longest: Int
    let filter: PrefixFilter
    /// First 4 bytes (little-endian) → where the patterns that begin so are listed in `lists`, longest first,
    /// ended by -1.
    let candidates: [UInt32: Int32]
    let lists: [Int32]

    /// The first 4 bytes' filter is at most 1 MB: past a million prefixes more positions pass it (and are ruled
    /// out by `Addresses.filter`), but memory does not grow with them. (Ten times as many positions passing made
    /// the copy take a quarter longer.)
    static let filterBitsPerPrefix = 8
    static let filterMaximumWordBits = 17

    /// An address in text: 17 bytes, two hex digits and a colon five times, then two.
    static let textLength = 17
    static let addressLength = 6

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

        public func scanner(addresses: Addresses? = nil) -> ValueScanner {
            ValueScanner(arena: arena, stored: stored, addresses: addresses)
        }
    }

    public convenience init(patterns: [Pattern]) {
        var builder = Builder()
        for p in patterns { builder.add(bytes: p.bytes, replacement: p.replacement, identifier: p.identifier, form: p.form) }
        self.init(arena: builder.arena, stored: builder.stored, addresses: nil)
    }

    init(arena: [UInt8], stored: [Stored], addresses: Addresses?) {
        self.arena = arena
        self.stored = stored
        let looked = addresses.flatMap { $0.distinctive > 0 ? $0 : nil }
        self.addresses = looked
        longest = max(stored.map { Int($0.length) }.max() ?? 0, looked == nil ? 0 : Self.textLength)
        // The distinct first 4 bytes: a pattern's; an address's in either byte order; the few of addresses in
        // text (3 hex digits and a colon: at most 8,192).
        var textPrefixes = Set<UInt32>()
        if let looked {
            let table = looked.identifiers.addresses
            table.forEach(below: looked.searched) { _, value in
                guard CapturedIdentifiers.distinctive(address: value) else { return }
                textPrefixes.insert(Self.textPrefix(value, digits: Hex.upperDigits))
                textPrefixes.insert(Self.textPrefix(value, digits: Hex.lowerDigits))
            }
        }
        let entries = stored.count + 2 * (looked?.distinctive ?? 0) + textPrefixes.count
        var filter = PrefixFilter(count: entries, bitsEach: Self.filterBitsPerPrefix, maximumWordBits: Self.filterMaximumWordBits)
        func set(_ prefix: UInt32) { filter.insert(prefix) }
        // Each pattern by its first 4 bytes, in the patterns' order within each.
        var byPrefix: [(prefix: UInt32, index: Int32)] = []
        byPrefix.reserveCapacity(stored.count)
        for (i, p) in stored.enumerated() {
            let prefix = Self.prefix(arena, at: Int(p.start))
            set(prefix)
            byPrefix.append((prefix, Int32(i)))
        }
        if let looked {
            let table = looked.identifiers.addresses
            table.forEach(below: looked.searched) { _, value in
                guard CapturedIdentifiers.distinctive(address: value) else { return }
                set(UInt32(truncatingIfNeeded: value))
                set(UInt32(truncatingIfNeeded: Anonymizer.reversed(value)))
            }
            for prefix in textPrefixes { set(prefix) }
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
            // Longest first; of one length, in the patterns' order.
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

    /// The first 4 bytes of an address in text (`AB:C`), as a prefix.
    static func textPrefix(_ value: UInt64, digits: [UInt8]) -> UInt32 {
        let top = Int(value >> 40 & 0xFF), next = Int(value >> 32 & 0xFF)
        return UInt32(digits[top >> 4]) | UInt32(digits[top & 0xF]) << 8 | UInt32(UInt8(ascii: ":")) << 16
            | UInt32(digits[next >> 4]) << 24
    }

    /// The address 17 bytes at `p` spell in text, in upper or lower case hex (digits only: upper, the form looked
    /// for first); nil for anything else, mixed case too.
    @inline(__always)
    static func addressText(_ p: UnsafeRawPointer) -> (value: UInt64, form: IdentifierForm)? {
        var value: UInt64 = 0
        var upper = false, lower = false
        for i in 0..<textLength {
            let c = p.load(fromByteOffset: i, as: UInt8.self)
            if i % 3 == 2 {
                guard c == UInt8(ascii: ":") else { return nil }
                continue
            }
            let digit: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = c - UInt8(ascii: "0")
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = c - UInt8(ascii: "A") + 10; upper = true
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = c - UInt8(ascii: "a") + 10; lower = true
            default: return nil
            }
            value = value << 4 | UInt64(digit)
        }
        if upper && lower { return nil }
        return (value, lower ? .lowerText : .upperText)
    }

    public var isEmpty: Bool { stored.isEmpty && addresses == nil }

    /// How many identifiers are looked for.
    public var identifiersLookedFor: Int { Set(stored.map(\.identifier)).count + (addresses?.distinctive ?? 0) }

    /// Every pattern, addresses' four forms included, in the order of their identifiers (for checks and tests;
    /// the scan does not list them).
    public var patterns: [Pattern] {
        var all: [Pattern] = stored.map { p in
            let start = Int(p.start), n = Int(p.length)
            return Pattern(bytes: Array(arena[start..<start + n]), replacement: Array(arena[start + n..<start + 2 * n]),
                           identifier: Int(p.identifier), form: p.form)
        }
        if let addresses {
            let table = addresses.identifiers.addresses
            table.forEach(below: addresses.searched) { position, value in
                guard CapturedIdentifiers.distinctive(address: value) else { return }
                let made = addresses.pseudonym(value)
                let identifier = addresses.identifiers.index(ofAddress: position)
                for form in [IdentifierForm.asCarried, .reversed, .upperText, .lowerText] {
                    all.append(Pattern(bytes: Self.spelled(value, form), replacement: Self.spelled(made, form),
                                       identifier: identifier, form: form))
                }
            }
        }
        return all.sorted { ($0.identifier, $0.form.rawValue) < ($1.identifier, $1.form.rawValue) }
    }

    /// An address's bytes in one of its forms.
    static func spelled(_ value: UInt64, _ form: IdentifierForm) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: form == .asCarried || form == .reversed ? addressLength : textLength)
        bytes.withUnsafeMutableBytes { spell(value, form, into: $0.baseAddress!) }
        return bytes
    }

    /// Writes an address's bytes in one of its forms at `p`.
    @inline(__always)
    static func spell(_ value: UInt64, _ form: IdentifierForm, into p: UnsafeMutableRawPointer) {
        switch form {
        case .asCarried:
            for k in 0..<addressLength { p.storeBytes(of: UInt8(truncatingIfNeeded: value >> (8 * UInt64(k))), toByteOffset: k, as: UInt8.self) }
        case .reversed:
            for k in 0..<addressLength {
                p.storeBytes(of: UInt8(truncatingIfNeeded: value >> (8 * UInt64(addressLength - 1 - k))), toByteOffset: k, as: UInt8.self)
            }
        case .upperText, .lowerText:
            let digits = form == .upperText ? Hex.upperDigits : Hex.lowerDigits
            for i in 0..<addressLength {
                let b = Int(truncatingIfNeeded: value >> (8 * UInt64(addressLength - 1 - i))) & 0xFF
                p.storeBytes(of: digits[b >> 4], toByteOffset: 3 * i, as: UInt8.self)
                p.storeBytes(of: digits[b & 0xF], toByteOffset: 3 * i + 1, as: UInt8.self)
                if i < addressLength - 1 { p.storeBytes(of: UInt8(ascii: ":"), toByteOffset: 3 * i + 2, as: UInt8.self) }
            }
        }
    }

    /// Calls `found(position, match)` for each match in `p` that ends after `endingAfter` (bytes before it were
    /// scanned with the record before). After a match the scan goes on past it, or with `overlapping` at its
    /// second byte, so that a match overlapping it is found too (`rewrite`).
    @inline(__always)
    public func matches(in p: UnsafeRawBufferPointer, endingAfter: Int = 0, overlapping: Bool = false, _ found: (Int, Match) -> Void) {
        let count = p.count
        guard longest > 0, count >= 4, let base = p.baseAddress else { return }
        var i = 0
        let last = count - 4
        let wordShift = filter.shift
        let book = addresses
        filter.words.withUnsafeBufferPointer { words in
            while i <= last {
                let prefix = (base + i).loadUnaligned(as: UInt32.self).littleEndian
                guard PrefixFilter.mayContain(prefix, in: words, shift: wordShift) else {
                    i += 1
                    continue
                }
                var best: Match?
                // (No dictionary lookup when every identifier is an address.)
                if !lists.isEmpty, var at = candidates[prefix].map(Int.init) {
                    while lists[at] >= 0 {
                        let index = Int(lists[at])
                        at += 1
                        let p = stored[index]
                        let n = Int(p.length), start = Int(p.start)
                        guard i + n <= count, i + n > endingAfter else { continue }
                        var equal = true
                        for k in 4..<n where base.load(fromByteOffset: i + k, as: UInt8.self) != arena[start + k] { equal = false; break }
                        if equal {
                            best = Match(length: n, identifier: Int(p.identifier), form: p.form, stored: index, address: 0)
                            break
                        }
                    }
                }
                if let book { best = addressMatch(at: i, in: base, count: count, endingAfter: endingAfter, book, better: best) }
                if let best {
                    found(i, best)
                    i += overlapping ? 1 : best.length
                } else {
                    i += 1
                }
            }
        }
    }

    /// The address found at `i` if it comes before `other` (longer, or as long and met first), else `other`.
    @inline(__always)
    func addressMatch(at i: Int, in base: UnsafeRawPointer, count: Int, endingAfter: Int, _ addresses: Addresses,
                      better other: Match?) -> Match? {
        var best = other
        func consider(_ length: Int, _ position: Int, _ form: IdentifierForm, _ value: UInt64) {
            let identifier = addresses.identifiers.index(ofAddress: position)
            if let b = best, b.length > length || (b.length == length && (b.identifier, b.form.rawValue) < (identifier, form.rawValue)) {
                return
            }
            best = Match(length: length, identifier: identifier, form: form, stored: -1, address: value)
        }
        let text = Self.textLength
        if (best?.length ?? 0) <= text, i + text <= count, i + text > endingAfter,
           base.load(fromByteOffset: i + 2, as: UInt8.self) == UInt8(ascii: ":"),
           let (value, form) = Self.addressText(base + i), let position = addresses.position(of: value) {
            consider(text, position, form, value)
        }
        let raw = Self.addressLength
        if (best?.length ?? 0) <= raw, i + raw <= count, i + raw > endingAfter {
            let value = UInt64((base + i).loadUnaligned(as: UInt32.self).littleEndian)
                | UInt64((base + i + 4).loadUnaligned(as: UInt16.self).littleEndian) << 32
            if let position = addresses.position(of: value) { consider(raw, position, .asCarried, value) }
            let reversed = Anonymizer.reversed(value)
            if let position = addresses.position(of: reversed) { consider(raw, position, .reversed, reversed) }
        }
        return best
    }

    /// Puts each match's replacement in place; returns how many. Matches that overlap are each replaced: an
    /// identifier that begins inside another one's bytes (a key's last byte the first of an address) was left in
    /// place when the scan went on past the first, wherever the replacement kept the shared bytes (found by
    /// fuzzing). The scan reads the bytes as they are rewritten, so it sees what the copy will hold.
    public func rewrite(_ p: UnsafeMutableRawBufferPointer, endingAfter: Int = 0) -> Int {
        var replaced = 0
        matches(in: UnsafeRawBufferPointer(p), endingAfter: endingAfter, overlapping: true) { at, match in
            if match.stored >= 0 {
                let pattern = stored[match.stored]
                let n = Int(pattern.length), from = Int(pattern.start) + n
                for k in 0..<n { p[at + k] = arena[from + k] }
            } else if let addresses {
                Self.spell(addresses.pseudonym(match.address), match.form, into: p.baseAddress! + at)
            }
            replaced += 1
        }
        return replaced
    }
}
