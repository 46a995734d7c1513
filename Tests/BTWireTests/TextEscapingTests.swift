import Testing
import BTWire

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
