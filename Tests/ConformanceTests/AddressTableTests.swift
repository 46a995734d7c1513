import Testing
import BTWire
import TestSupport
@testable import BTDecode

/// The anonymizer's table of addresses (order of appearance, found by value) and the pass by value that looks
/// addresses up in it instead of keeping patterns of each.
@Suite("anonymizer address table")
struct AddressTableTests {
    @Test("addresses keep their order of appearance through growth, and the table stops at its limit")
    func orderAndLimit() {
        let table = AddressTable(limit: 5_000)
        // More than the first slots hold, so the index grows several times.
        for i in 0..<6_000 {
            let value = SplitMixHash.hash(UInt64(i)) & 0xFFFF_FFFF_FFFF
            let (position, added) = table.insert(value)
            if i < 5_000 {
                #expect(position == i && added)
            } else {
                #expect(position == nil && !added)
            }
        }
        #expect(table.count == 5_000)
        for i in stride(from: 0, to: 6_000, by: 7) {
            let value = SplitMixHash.hash(UInt64(i)) & 0xFFFF_FFFF_FFFF
            #expect(table.position(of: value) == (i < 5_000 ? i : nil))
            if i < 5_000 {
                #expect(table[i] == value)
                let again = table.insert(value)
                #expect(again.position == i && !again.added)
            }
        }
    }

    @Test("the filters in front of the table: every value added passes, few others do, and the size is capped")
    func blockedFilter() {
        var filter = BlockedFilter(count: 20_000, bitsEach: 16, maximumBits: 22)
        #expect(filter.words.count * 64 == 1 << 19)
        for i in 0..<20_000 { filter.insert(hash: SplitMixHash.hash(UInt64(i))) }
        #expect((0..<20_000).allSatisfy { filter.mayContain(hash: SplitMixHash.hash(UInt64($0))) })
        let passed = (20_000..<220_000).filter { filter.mayContain(hash: SplitMixHash.hash(UInt64($0))) }.count
        #expect(passed < 200_000 / 50, "\(passed) of 200,000 values never added passed")
        // Past the cap, fewer bits each: still no value added is missed.
        var capped = BlockedFilter(count: 1_000_000, bitsEach: 16, maximumBits: 16)
        #expect(capped.words.count * 64 == 1 << 16)
        for i in 0..<5_000 { capped.insert(hash: SplitMixHash.hash(UInt64(i))) }
        #expect((0..<5_000).allSatisfy { capped.mayContain(hash: SplitMixHash.hash(UInt64($0))) })
    }

    @Test("the filter of segments set aside: every value added passes, about 1 in 80 others do")
    func splitBlockFilter() {
        var filter = SplitBlockFilter(count: 20_000, bitsEach: 10)
        #expect(filter.byteCount == (20_000 * 10 + 255) / 256 * 32)
        for i in 0..<20_000 { filter.insert(hash: SplitMixHash.hash(UInt64(i))) }
        #expect((0..<20_000).allSatisfy { filter.mayContain(hash: SplitMixHash.hash(UInt64($0))) })
        let passed = (20_000..<220_000).filter { filter.mayContain(hash: SplitMixHash.hash(UInt64($0))) }.count
        #expect(passed > 0 && passed < 200_000 / 50, "\(passed) of 200,000 values never added passed")
        // An empty filter lets nothing through.
        let empty = SplitBlockFilter(count: 0, bitsEach: 10)
        #expect(!(0..<1_000).contains { empty.mayContain(hash: SplitMixHash.hash(UInt64($0))) })
    }

    @Test("the filter of first 4 bytes: every prefix added passes, about 1 in 20 others or fewer, and the size is capped")
    func prefixFilter() {
        var filter = PrefixFilter(count: 30_000, bitsEach: 8, maximumWordBits: 17)
        #expect(filter.words.count == 1 << 12)
        let added = (0..<30_000).map { UInt32(truncatingIfNeeded: SplitMixHash.hash(UInt64($0))) }
        for p in added { filter.insert(p) }
        #expect(added.allSatisfy { filter.mayContain($0) })
        let passed = (30_000..<230_000).filter { filter.mayContain(UInt32(truncatingIfNeeded: SplitMixHash.hash(UInt64($0)))) }.count
        #expect(passed > 0 && passed < 200_000 / 16, "\(passed) of 200,000 prefixes never added passed")
        // Consecutive prefixes (bytes of a counter) spread as well as random ones.
        var counted = PrefixFilter(count: 30_000, bitsEach: 8, maximumWordBits: 17)
        for p in 0..<UInt32(30_000) { counted.insert(p) }
        let passedCounted = (UInt32(1 << 20)..<UInt32(1 << 20 + 200_000)).filter { counted.mayContain($0) }.count
        #expect(passedCounted < 200_000 / 16, "\(passedCounted) of 200,000 consecutive prefixes never added passed")
        // Nor a run of zero bytes or of 0xFF, however full the filter.
        var full = PrefixFilter(count: 512, bitsEach: 8, maximumWordBits: 6)
        for p in added.prefix(512) { full.insert(p) }
        #expect(!full.mayContain(0) && !full.mayContain(UInt32.max))
        var capped = PrefixFilter(count: 10_000_000, bitsEach: 8, maximumWordBits: 10)
        #expect(capped.words.count == 1 << 10)
        for p in added { capped.insert(p) }
        #expect(added.allSatisfy { capped.mayContain($0) })
    }

    @Test("segments set aside in a file: the same positions, values and order as a table held in memory")
    func segmentsSetAside() throws {
        let directory = try TemporaryDirectory()
        let held = AddressTable(limit: 5_000)
        let spilled = AddressTable(limit: 5_000, directory: directory.path, segmentLength: 700)
        func value(_ i: Int) -> UInt64 { SplitMixHash.hash(UInt64(i)) & 0xFFFF_FFFF_FFFF }
        // Each address met again now and then, as advertisers are: the later ones find the earlier in the file.
        for i in 0..<6_000 {
            for table in [held, spilled] {
                let (position, added) = table.insert(value(i))
                #expect(position == (i < 5_000 ? i : nil) && added == (i < 5_000))
                if i % 3 == 0 && i > 10 {
                    let again = table.insert(value(i / 3))
                    #expect(again.position == i / 3 && !again.added)
                }
            }
        }
        #expect(spilled.count == 5_000 && spilled.setAside == 4_900 && spilled.failure == nil)
        // Seven segments of 700 set aside, merged as a binary counter carries: 2,800, 1,400 and 700.
        #expect(spilled.segmentCount == 3)
        for i in stride(from: 0, to: 6_000, by: 5) {
            #expect(spilled.position(of: value(i)) == (i < 5_000 ? i : nil))
            // Not among them: neither the same address reversed nor one never met.
            #expect(spilled.position(of: value(i) ^ 0x8000_0000_0000) == held.position(of: value(i) ^ 0x8000_0000_0000))
            if i < 5_000 { #expect(spilled[i] == value(i)) }
        }
        var seen: [UInt64] = []
        spilled.forEach(below: 4_321) { position, v in
            #expect(position == seen.count)
            seen.append(v)
        }
        #expect(seen == (0..<4_321).map(value))
        // The by-value pass finds an address set aside in either byte order, and gives the pseudonym the first
        // reading gave it.
        let anonymizer = Anonymizer(directory: directory.path, addressesInMemory: 3)
        anonymizer.collectIdentifiers()
        var given: [UInt64: UInt64] = [:]
        for i in 0..<20 {
            let carried: [UInt8] = (0..<6).map { UInt8(truncatingIfNeeded: value(i) >> (8 * UInt64($0))) }
            var command: [UInt8] = [0x05, 0x20, 0x06] + carried
            command.withUnsafeMutableBytes { anonymizer.anonymize(kind: .command, payload: $0) }
            var made: UInt64 = 0
            for k in 0..<6 { made |= UInt64(command[3 + k]) << (8 * UInt64(k)) }
            given[value(i)] = made
        }
        let scanner = anonymizer.byValueScanner()
        #expect(scanner.identifiersLookedFor == 20)
        for i in [0, 7, 19] {
            let carried: [UInt8] = (0..<6).map { UInt8(truncatingIfNeeded: value(i) >> (8 * UInt64($0))) }
            var bytes: [UInt8] = [0xEE] + carried + [0xEE] + carried.reversed()
            #expect(bytes.withUnsafeMutableBytes { scanner.rewrite($0) } == 2)
            let made = given[value(i)]!
            #expect(anonymizer.pseudonym(value(i)) == made)
            let madeBytes: [UInt8] = (0..<6).map { UInt8(truncatingIfNeeded: made >> (8 * UInt64($0))) }
            let expected: [UInt8] = [0xEE] + madeBytes + [0xEE] + madeBytes.reversed()
            #expect(bytes == expected)
        }
    }

    @Test("segments a directory cannot take stay in memory, each apart (not merged), and find the same positions")
    func segmentsKeptInMemory() {
        let table = AddressTable(limit: 5_000, directory: "/nonexistent/btlens-test", segmentLength: 700)
        func value(_ i: Int) -> UInt64 { SplitMixHash.hash(UInt64(i)) & 0xFFFF_FFFF_FFFF }
        for i in 0..<5_000 { #expect(table.insert(value(i)).position == i) }
        #expect(table.keptInMemory != nil && table.setAside == 4_900)
        #expect(table.segmentCount == 7)
        for i in stride(from: 0, to: 5_000, by: 3) {
            #expect(table.position(of: value(i)) == i)
            #expect(table[i] == value(i))
        }
        #expect(table.position(of: value(5_001)) == nil)
    }

    @Test("an address is found by value in HCI order, reversed and as text in either case; not in mixed case")
    func addressForms() {
        let anonymizer = Anonymizer()
        anonymizer.collectIdentifiers()
        let address: UInt64 = 0xD7_5A_13_9C_2E_61
        var command: [UInt8] = [0x05, 0x20, 0x06] + (0..<6).map { UInt8(truncatingIfNeeded: address >> (8 * UInt64($0))) }
        command.withUnsafeMutableBytes { anonymizer.anonymize(kind: .command, payload: $0) }
        let scanner = anonymizer.byValueScanner()
        #expect(scanner.identifiersLookedFor == 1 && scanner.longest == 17)
        let made = anonymizer.pseudonym(address)
        let carried = (0..<6).map { UInt8(truncatingIfNeeded: address >> (8 * UInt64($0))) }
        let upper = Array("D7:5A:13:9C:2E:61".utf8), lower = Array("d7:5a:13:9c:2e:61".utf8)
        let mixed = Array("D7:5a:13:9C:2E:61".utf8)
        var bytes: [UInt8] = [0xEE] + carried + [0xEE] + carried.reversed() + [0x20] + upper + [0x20] + lower + [0x20] + mixed
        let replaced = bytes.withUnsafeMutableBytes { scanner.rewrite($0) }
        #expect(replaced == 4)
        let madeText = BDAddr(rawValue: made).description
        let expected: [UInt8] = [0xEE] + (0..<6).map { UInt8(truncatingIfNeeded: made >> (8 * UInt64($0))) } + [0xEE]
            + (0..<6).reversed().map { UInt8(truncatingIfNeeded: made >> (8 * UInt64($0))) } + [0x20] + Array(madeText.utf8)
            + [0x20] + Array(madeText.lowercased().utf8) + [0x20] + mixed
        #expect(bytes == expected)
        // What is found, and as what.
        var forms: [IdentifierForm] = []
        var original: [UInt8] = [0x00] + carried + [0x00] + upper
        original.withUnsafeBytes { scanner.matches(in: $0) { _, match in forms.append(match.form); #expect(match.identifier == 0) } }
        #expect(forms == [.asCarried, .upperText])
        // The patterns listed for checks: the address's four forms with their replacements.
        let patterns = scanner.patterns
        #expect(patterns.map(\.form) == [.asCarried, .reversed, .upperText, .lowerText])
        #expect(patterns[2].bytes == upper && patterns[2].replacement == Array(madeText.utf8))
    }

    @Test("an address of two byte values is not looked for; one met after the scanner was made is not either")
    func notLookedFor() {
        let anonymizer = Anonymizer()
        anonymizer.collectIdentifiers()
        let plain: UInt64 = 0x00_00_00_00_00_01
        var command: [UInt8] = [0x05, 0x20, 0x06] + (0..<6).map { UInt8(truncatingIfNeeded: plain >> (8 * UInt64($0))) }
        command.withUnsafeMutableBytes { anonymizer.anonymize(kind: .command, payload: $0) }
        let scanner = anonymizer.byValueScanner()
        #expect(scanner.isEmpty && scanner.identifiersLookedFor == 0)
        // Met in the copy's reading only: given a pseudonym, but the scanner looks for what the first reading met.
        let later: UInt64 = 0x12_34_56_78_9A_BC
        _ = anonymizer.pseudonym(later)
        let withOne = Anonymizer()
        withOne.collectIdentifiers()
        let first: UInt64 = 0x22_33_44_55_66_77
        var set: [UInt8] = [0x05, 0x20, 0x06] + (0..<6).map { UInt8(truncatingIfNeeded: first >> (8 * UInt64($0))) }
        set.withUnsafeMutableBytes { withOne.anonymize(kind: .command, payload: $0) }
        let oneScanner = withOne.byValueScanner()
        _ = withOne.pseudonym(later)
        var bytes: [UInt8] = (0..<6).map { UInt8(truncatingIfNeeded: later >> (8 * UInt64($0))) }
        #expect(bytes.withUnsafeMutableBytes { oneScanner.rewrite($0) } == 0)
    }
}
