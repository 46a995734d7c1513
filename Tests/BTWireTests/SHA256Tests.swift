import Testing
@testable import BTWire

@Suite("SHA-256")
struct SHA256Tests {
    static func digest(_ bytes: [UInt8], chunk: Int? = nil) -> String {
        var hash = SHA256()
        if let chunk {
            var i = 0
            while i < bytes.count {
                hash.update(Array(bytes[i..<min(i + chunk, bytes.count)]))
                i += chunk
            }
        } else {
            hash.update(bytes)
        }
        return hash.finalize()
    }

    @Test("FIPS 180-4 examples and the lengths around a block's padding")
    func vectors() {
        #expect(Self.digest([]) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(Self.digest(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(Self.digest(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        // One million 'a' (FIPS 180-2 appendix B.3), fed in uneven pieces.
        #expect(Self.digest([UInt8](repeating: 0x61, count: 1_000_000), chunk: 4093)
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test("the digest does not depend on how the bytes are split")
    func chunking() {
        let bytes = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        let whole = Self.digest(bytes)
        for chunk in [1, 3, 55, 56, 63, 64, 65, 128, 999] { #expect(Self.digest(bytes, chunk: chunk) == whole, "chunk \(chunk)") }
        for n in [55, 56, 57, 63, 64, 65, 119, 120] {
            #expect(Self.digest(Array(bytes.prefix(n)), chunk: 7) == Self.digest(Array(bytes.prefix(n))), "\(n) bytes")
        }
    }
}
