/// The link layer's CRC-24 [Core Vol 6 Part B §3.1.1]: polynomial x²⁴+x¹⁰+x⁹+x⁶+x⁴+x³+x+1 over the PDU header
/// and payload, sent least significant bit first. Computed here bit-reflected, so the result equals the 3
/// stored bytes read as a little-endian u24 (LINKLAYER.md §1.2; Sniffle's crc_ble.py does the same).
public enum LLCRC {
    /// The advertising physical channel's CRC initial value; a connection's comes from its CONNECT_IND.
    public static let advertisingInitialValue: UInt32 = 0x55_5555
    /// The polynomial, bit-reflected.
    static let reflectedPolynomial: UInt32 = 0xDA_6000
    static let mask: UInt32 = 0xFF_FFFF

    /// One step per byte instead of eight per bit: a 42 000-packet capture checks every data PDU.
    static let table: [UInt32] = (0..<256).map { byte in
        var s = UInt32(byte)
        for _ in 0..<8 { s = (s >> 1) ^ (s & 1 != 0 ? reflectedPolynomial : 0) }
        return s
    }

    /// The CRC of `pdu` (header and payload) with `initialValue` as the spec writes it (CRCInit).
    public static func compute(_ pdu: UnsafeRawBufferPointer, initialValue: UInt32) -> UInt32 {
        var state = reverse24(initialValue)
        table.withUnsafeBufferPointer { t in
            for byte in pdu { state = (state >> 8) ^ t[Int((state ^ UInt32(byte)) & 0xFF)] }
        }
        return state & mask
    }

    static func reverse24(_ value: UInt32) -> UInt32 { (value & mask).bitReversed >> 8 }
}

extension UInt32 {
    var bitReversed: UInt32 {
        var v = self
        v = ((v >> 1) & 0x5555_5555) | ((v & 0x5555_5555) << 1)
        v = ((v >> 2) & 0x3333_3333) | ((v & 0x3333_3333) << 2)
        v = ((v >> 4) & 0x0F0F_0F0F) | ((v & 0x0F0F_0F0F) << 4)
        return v.byteSwapped
    }
}
