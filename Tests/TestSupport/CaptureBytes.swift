import Foundation

/// Builds capture files byte by byte, independently of btlens' own writers, so reader tests check the
/// formats against their specifications rather than against btlens itself.
public enum CaptureBytes {
    public static func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
    public static func le32(_ v: UInt32) -> [UInt8] { be32(v).reversed() }
    public static func be64(_ v: UInt64) -> [UInt8] { be32(UInt32(v >> 32)) + be32(UInt32(v & 0xFFFF_FFFF)) }
    public static func le16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
    public static func be16(_ v: UInt16) -> [UInt8] { [UInt8(v >> 8), UInt8(v & 0xFF)] }

    /// The btsnoop epoch offset: µs from 0000-01-01 to 1970-01-01.
    public static let btsnoopUnixOffset: UInt64 = 0x00DC_DDB3_0F2F_8000

    /// btsnoop file header: "btsnoop\0", version 1, datalink.
    public static func btsnoopHeader(datalink: UInt32) -> [UInt8] {
        Array("btsnoop\0".utf8) + be32(1) + be32(datalink)
    }

    /// One btsnoop record at Unix time `unixMicros`.
    public static func btsnoopRecord(_ data: [UInt8], flags: UInt32, unixMicros: UInt64, originalLength: UInt32? = nil) -> [UInt8] {
        be32(originalLength ?? UInt32(data.count)) + be32(UInt32(data.count)) + be32(flags) + be32(0)
            + be64(unixMicros + btsnoopUnixOffset) + data
    }

    /// One PacketLogger record.
    public static func pklgRecord(_ payload: [UInt8], type: UInt8, seconds: UInt32, micros: UInt32, bigEndian: Bool) -> [UInt8] {
        let u32 = bigEndian ? be32 : le32
        return u32(UInt32(9 + payload.count)) + u32(seconds) + u32(micros) + [type] + payload
    }

    /// pcap header (little-endian writer), µs or ns magic.
    public static func pcapHeader(linktype: UInt32, nanoseconds: Bool = false, snaplen: UInt32 = 65535) -> [UInt8] {
        le32(nanoseconds ? 0xA1B2_3C4D : 0xA1B2_C3D4) + le16(2) + le16(4) + le32(0) + le32(0) + le32(snaplen) + le32(linktype)
    }

    public static func pcapRecord(_ data: [UInt8], seconds: UInt32, fraction: UInt32, originalLength: UInt32? = nil) -> [UInt8] {
        le32(seconds) + le32(fraction) + le32(UInt32(data.count)) + le32(originalLength ?? UInt32(data.count)) + data
    }

    /// pcapng: SHB + IDB (with if_tsresol when `tsresol` is given) + EPBs.
    public static func pcapng(linktype: UInt16, tsresol: UInt8? = nil, packets: [(data: [UInt8], timestamp: UInt64)]) -> [UInt8] {
        var out: [UInt8] = []
        // Section Header Block: type, length, BOM, version 1.0, section length -1, length.
        let shbBody = le32(0x1A2B_3C4D) + le16(1) + le16(0) + [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]
        out += le32(0x0A0D_0D0A) + le32(UInt32(12 + shbBody.count)) + shbBody + le32(UInt32(12 + shbBody.count))
        var idbBody = le16(linktype) + le16(0) + le32(0)
        if let tsresol {
            idbBody += le16(9) + le16(1) + [tsresol, 0, 0, 0] + le16(0) + le16(0)
        }
        out += le32(1) + le32(UInt32(12 + idbBody.count)) + idbBody + le32(UInt32(12 + idbBody.count))
        for p in packets {
            var body = le32(0) + le32(UInt32(p.timestamp >> 32)) + le32(UInt32(p.timestamp & 0xFFFF_FFFF))
                + le32(UInt32(p.data.count)) + le32(UInt32(p.data.count)) + p.data
            while body.count % 4 != 0 { body.append(0) }
            out += le32(6) + le32(UInt32(12 + body.count)) + body + le32(UInt32(12 + body.count))
        }
        return out
    }
}

extension TemporaryDirectory {
    /// Writes `bytes` to `name` inside the directory and returns the full path.
    @discardableResult
    public func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        let file = file(name)
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        return file
    }
}
