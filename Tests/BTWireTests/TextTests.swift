import Testing
@testable import BTWire

@Suite("Escaping text that comes off the air")
struct TextEscapingTests {
    @Test("quotes, backslashes and every control character (C0, DEL, C1) are escaped; other text is kept")
    func escapes() {
        // A name that would clear the screen: ESC [ 2 J, then NUL.
        #expect(TextEscaping.escaped("\u{1B}[2J\u{0}") == "\\u001b[2J\\u0000")
        #expect(TextEscaping.escaped("a\"b\\c\nd\re\tf") == "a\\\"b\\\\c\\nd\\re\\tf")
        #expect(TextEscaping.escaped("\u{7F}\u{9B}1m") == "\\u007f\\u009b1m")
        #expect(TextEscaping.escaped("Polar H10 Ä ♥") == "Polar H10 Ä ♥")
        #expect(!TextEscaping.isControl("\u{A0}") && TextEscaping.isControl("\u{85}"))
    }
}

@Suite("Terminal width of names in tables")
struct TerminalWidthTests {
    @Test("wide characters take two columns, combining marks none; names are cut by columns, not characters")
    func width() {
        #expect(TerminalWidth.of("Polar H10") == 9)
        #expect(TerminalWidth.of("小米手环4") == 9)           // four wide characters and a digit
        #expect(TerminalWidth.of("e\u{301}") == 1)            // e + combining acute
        #expect(TerminalWidth.of("Ａ🎧") == 4)                // fullwidth A, an emoji
        #expect(TerminalWidth.truncated("小米手环 NFC 版", to: 8) == "小米手…")
        #expect(TerminalWidth.of(TerminalWidth.truncated("小米手环 NFC 版", to: 8)) == 7)
        #expect(TerminalWidth.truncated("Band\u{1B}[2J", to: 24) == "Band·[2J")
        #expect(TerminalWidth.truncated("[TV] Samsung 7 Series (55)", to: 24) == "[TV] Samsung 7 Series (…")
    }
}

@Suite("Parsing filter values")
struct HexParseTests {
    @Test("hex needs 0x, digits alone are decimal, bare hex letters are rejected")
    func parse() {
        #expect(Hex.parse("0x2042") == 0x2042 && Hex.parse("0X1a") == 0x1A)
        #expect(Hex.parse("2042") == 2042 && Hex.parse("64") == 64)
        #expect(Hex.parse("200c") == nil && Hex.parse("") == nil && Hex.parse("0x") == nil)
    }

    @Test("hex bytes read back what Hex.string wrote; odd lengths and other characters are rejected")
    func bytesRoundTrip() {
        let all = (0...255).map { UInt8($0) }
        #expect(Hex.bytes(Array(Hex.string(all).utf8)) == all)
        #expect(Hex.bytes(Array("0A1b".utf8)[...]) == [0x0A, 0x1B])
        #expect(Hex.bytes(Array("".utf8)) == [])
        #expect(Hex.bytes(Array("abc".utf8)) == nil && Hex.bytes(Array("0g".utf8)) == nil)
    }

    @Test("printable text excludes C1 control characters, as the escaper does")
    func printable() {
        let c1: [UInt8] = [0x41, 0xC2, 0x9B, 0x42]  // "A", U+009B (CSI), "B"
        #expect(c1.withUnsafeBytes { Hex.printableText($0) } == nil)
        #expect(Array("Ä ok".utf8).withUnsafeBytes { Hex.printableText($0) } == "Ä ok")
    }
}

@Suite("Decimal text")
struct DecimalTextTests {
    @Test("rounded, trailing zeros dropped, sign kept, never trapping")
    func format() {
        #expect(DecimalText.format(7.5, maximumFractionDigits: 2) == "7.5")
        #expect(DecimalText.format(30, maximumFractionDigits: 2) == "30")
        #expect(DecimalText.format(1.255, maximumFractionDigits: 2) == "1.25" || DecimalText.format(1.255, maximumFractionDigits: 2) == "1.26")
        #expect(DecimalText.format(-0.5, maximumFractionDigits: 2) == "-0.5")
        #expect(DecimalText.format(.infinity, maximumFractionDigits: 2) == "inf")
        #expect(DecimalText.format(1e30, maximumFractionDigits: 2) == String(1e30))
    }

    @Test("fixed decimals keep their zeros and the sign")
    func fixed() {
        #expect(DecimalText.fixed(3, fractionDigits: 1) == "3.0")
        #expect(DecimalText.fixed(-0.25, fractionDigits: 1) == "-0.3" || DecimalText.fixed(-0.25, fractionDigits: 1) == "-0.2")
        #expect(DecimalText.fixed(-0.04, fractionDigits: 1) == "0.0")
        #expect(DecimalText.fixed(12.34, fractionDigits: 0) == "12")
    }
}

@Suite("Hex and address text")
struct HexTextTests {
    @Test("hex strings with separators and limits, codes with width, addresses upper-case")
    func text() {
        let bytes: [UInt8] = [0x0A, 0x1B, 0xFF]
        #expect(Hex.string(bytes) == "0a1bff")
        #expect(Hex.string(bytes, separator: " ") == "0a 1b ff")
        #expect(Hex.string(bytes, separator: " ", limit: 2) == "0a 1b…")
        #expect(Hex.string(bytes, limit: 0) == "…" && Hex.string([UInt8]()) == "")
        #expect(Hex.u16(0x200C) == "0x200c" && Hex.u8(7) == "0x07" && Hex.format(0x12345, width: 3) == "0x345")
        #expect(BDAddr(rawValue: 0xC0_FF_EE_01_02_0A).description == "C0:FF:EE:01:02:0A")
    }
}

@Suite("Counts with their nouns")
struct PluralTests {
    @Test("one takes the singular; zero and many the plural, given or with an s")
    func plural() {
        #expect(Plural.of(1, "device") == "1 device")
        #expect(Plural.of(0, "device") == "0 devices")
        #expect(Plural.of(12, "report") == "12 reports")
        #expect(Plural.of(1, "entry", plural: "entries") == "1 entry")
        #expect(Plural.of(3, "entry", plural: "entries") == "3 entries")
    }
}

@Suite("Assigned numbers")
struct AssignedNumbersTests {
    @Test("the SIG's full lists name what the short table does not; the short names come first")
    func names() {
        #expect(CompanyID(rawValue: 0x012D).name == "Sony Corporation")
        #expect(CompanyID(rawValue: 0x004C).name == "Apple")
        #expect(BluetoothUUID(uuid16: 0x2ACF).name == "Step Climber Data")
        #expect(BluetoothUUID(uuid16: 0x1101).name == "Serial Port")
        #expect(BluetoothUUID(uuid16: 0xFE2C).name == "Google Fast Pair")
        #expect(BluetoothUUID(uuid16: 0x2A37).name == "Heart Rate Measurement")
        #expect(AssignedNumbers.sigCompanies.count > 3000 && AssignedNumbers.sigUUIDs.count > 1000)
    }

    /// horizon74_treadmill's module has characteristics fff1–fff5 under service fff0, as generic modules do;
    /// the SIG has since allocated 0xFFF3 and 0xFFF4 to FiRa as service UUIDs.
    @Test("member service UUIDs (0xFC00–0xFFFF) name services, not characteristics or descriptors")
    func memberUUIDs() {
        let fff3 = BluetoothUUID(uuid16: 0xFFF3)
        #expect(fff3.name == "FiRa Consortium" && fff3.isMemberServiceUUID && fff3.attributeName == nil)
        #expect(BluetoothUUID(uuid16: 0xFE2C).attributeName == nil)
        #expect(BluetoothUUID(uuid16: 0x2A37).attributeName == "Heart Rate Measurement")
        #expect(!BluetoothUUID(uuid16: 0x2A37).isMemberServiceUUID)
        #expect(BluetoothUUID(uuid16: 0x2902).attributeName == "Client Characteristic Configuration")
    }

    @Test("appearance: the value's name, else its category's with the subcategory, else the two numbers")
    func appearance() {
        #expect(AssignedNumbers.appearanceDescription(0x03C1) == "0x03c1 Keyboard")
        #expect(AssignedNumbers.appearanceDescription(0x0540) == "0x0540 Generic Sensor")
        #expect(AssignedNumbers.appearanceDescription(0x03FE) == "0x03fe Human Interface Device (HID) (subcategory 62)")
        #expect(AssignedNumbers.appearanceDescription(0xFFC1) == "0xffc1 category 1023 subcategory 1")
        #expect(AssignedNumbers.appearanceName(0xFFC1) == nil)
    }

    @Test("table lines without a hex value and a tab are skipped")
    func parse() {
        #expect(AssignedNumbers.parse("0001\tA\nzz\tB\n0002 C\n\n00FF\tD") == [0x0001: "A", 0x00FF: "D"])
    }
}
