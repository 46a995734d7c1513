import Testing
@testable import BTRules

@Suite("Finding fingerprints")
struct FindingFingerprintTests {
    @Test("numbers are dropped from the message; the ASCII fast path matches the Character-by-Character rule",
          arguments: [
              "connection #2 (handle 0x0041) stayed up 30 s without ATT traffic",
              "42 notifications at 1.0 Hz, 7.5 ms interval",
              "no digits at all",
              "",
              "Write Request to Heart Rate Control Point [0x001d] — 3×, ½ of them ²",  // not ASCII: the slow path
              "ID ٣ in Arabic-Indic digits, 10 µs",
          ])
    func withoutNumbers(message: String) {
        #expect(Finding.withoutNumbers(message) == message.filter { !$0.isNumber })
        #expect(!Finding.withoutNumbers(message).contains { $0.isASCII && $0.isNumber })
    }
}
