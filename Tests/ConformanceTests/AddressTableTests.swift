import Testing
import BTWire
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
