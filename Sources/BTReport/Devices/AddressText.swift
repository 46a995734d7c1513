import BTWire

/// "AA:BB:CC:DD:EE:FF" built from bytes in one step. `BDAddr.description` builds the string scalar by
/// scalar and then uppercases it, which showed up when printing thousands of advertisers.
enum AddressText {
    static let digits: [UInt8] = Array("0123456789ABCDEF".utf8)

    static func of(_ address: BDAddr) -> String {
        var bytes = [UInt8](repeating: UInt8(ascii: ":"), count: 17)
        for i in 0..<6 {
            let b = Int(truncatingIfNeeded: address.rawValue >> (8 * UInt64(5 - i))) & 0xFF
            bytes[3 * i] = digits[b >> 4]
            bytes[3 * i + 1] = digits[b & 0xF]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
