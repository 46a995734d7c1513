import BTWire

/// Text for the `summary` and `fields` of the protocol PDUs (ATT, SMP, L2CAP signalling, advertising data), so
/// every layer prints handles, UUIDs, values and durations the same way. Only the describing code calls these;
/// decoding never builds text.
enum PDUFieldText {
    /// A handle or CID as `0x002a`.
    static func handle(_ value: UInt16) -> String { Hex.u16(value) }

    /// A handle range as `0x0001-0xffff`.
    static func range(_ start: UInt16, _ end: UInt16) -> String { Hex.u16(start) + "-" + Hex.u16(end) }

    /// A UUID with its SIG name when it has one: `Primary Service (2800)`, else `fff0` or the full 128-bit form.
    static func uuid(_ uuid: BluetoothUUID) -> String {
        if let name = uuid.name { return name + " (" + uuid.description + ")" }
        return uuid.description
    }

    /// An attribute value: hex, followed by the text in quotes when every byte is printable. `(empty)` when empty.
    static func value(_ bytes: UnsafeRawBufferPointer) -> String {
        guard !bytes.isEmpty else { return "(empty)" }
        let hex = Hex.string(bytes)
        if let text = Hex.printableText(bytes) { return hex + " \"" + TextEscaping.escaped(text) + "\"" }
        return hex
    }

    /// Key material and other opaque blobs: hex only, never text.
    static func hex(_ bytes: UnsafeRawBufferPointer) -> String {
        bytes.isEmpty ? "(empty)" : Hex.string(bytes)
    }

    /// A code as `Name (0x0a)`, or just the hex when the code has no name.
    static func named(_ name: String?, _ code: UInt8) -> String {
        guard let name else { return Hex.u8(code) }
        return name + " (" + Hex.u8(code) + ")"
    }

    static func named(_ name: String?, _ code: UInt16) -> String {
        guard let name else { return Hex.u16(code) }
        return name + " (" + Hex.u16(code) + ")"
    }

    /// `units × stepHundredths / 100` ms as text without floating point: 6 × 125 → `7.5 ms`, 200 × 1000 → `2000 ms`.
    static func milliseconds(_ units: UInt16, stepHundredths: Int) -> String {
        let hundredths = Int(units) * stepHundredths
        var text = String(hundredths / 100)
        let fraction = hundredths % 100
        if fraction != 0 {
            text += "." + (fraction < 10 ? "0" : "") + String(fraction)
            if text.hasSuffix("0") { text.removeLast() }
        }
        return text + " ms"
    }

    /// Connection interval (×1.25 ms) with its raw value: `7.5 ms (0x0006)`.
    static func interval(_ units: UInt16) -> String {
        milliseconds(units, stepHundredths: 125) + " (" + Hex.u16(units) + ")"
    }

    /// Supervision timeout (×10 ms) with its raw value: `2000 ms (0x00c8)`.
    static func timeout(_ units: UInt16) -> String {
        milliseconds(units, stepHundredths: 1000) + " (" + Hex.u16(units) + ")"
    }
}
