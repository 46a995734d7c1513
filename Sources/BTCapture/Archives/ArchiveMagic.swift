/// Compressed streams and archives recognised by their first bytes (never by the file name), so btlens hands
/// them to libarchive and reads the capture inside.
public enum ArchiveMagic {
    /// The container a file's first bytes announce, or nil when they announce none btlens opens.
    public static func kind(_ head: UnsafeRawBufferPointer) -> String? {
        func starts(_ magic: [UInt8], at offset: Int = 0) -> Bool {
            head.count >= offset + magic.count && head[offset..<offset + magic.count].elementsEqual(magic)
        }
        if starts([0x1F, 0x8B]) { return "gzip" }                            // RFC 1952
        if starts([0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00]) { return "xz" }      // xz file format 1.0.4, 2.1.1.1
        if starts([0x28, 0xB5, 0x2F, 0xFD]) { return "zstd" }                // RFC 8878, 3.1.1
        if starts([0x42, 0x5A, 0x68]) { return "bzip2" }                     // "BZh"
        if starts([0x50, 0x4B, 0x03, 0x04]) || starts([0x50, 0x4B, 0x05, 0x06]) { return "zip" }  // APPNOTE 4.3.7, 4.3.16
        if starts(Array("ustar".utf8), at: 257) { return "tar" }             // POSIX ustar and GNU tar headers
        if starts([0x37, 0x7A, 0xBC, 0xAF, 0x27, 0x1C]) { return "7z" }
        return nil
    }
}
