import BTWire
#if canImport(Glibc)
import Glibc
#endif

/// The SHA-256 of a file's bytes, read in blocks.
enum FileDigest {
    struct ReadError: Error, CustomStringConvertible {
        var description: String
    }

    static let blockSize = 1 << 20

    static func sha256(_ path: String) throws -> String {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw ReadError(description: String(cString: strerror(errno))) }
        defer { close(fd) }
        var hash = SHA256()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: blockSize, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let n = read(fd, buffer.baseAddress, blockSize)
            if n < 0 {
                if errno == EINTR { continue }
                throw ReadError(description: String(cString: strerror(errno)))
            }
            if n == 0 { break }
            hash.update(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
        }
        return hash.finalize()
    }
}
