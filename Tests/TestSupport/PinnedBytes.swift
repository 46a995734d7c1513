/// Test bytes at a fixed address for as long as the arena lives.
///
/// Decoders return views that borrow their input (`LLAdvertisingPDU`, `LLCapturedPacket`), so a test
/// that keeps a decoded value must keep its bytes too: an array's `withUnsafeBytes` pointer is dead
/// once the closure returns, and reading through it only passes by luck of the allocator.
/// A suite holds one arena; Swift Testing makes a suite instance per test, so it frees with the test.
public final class ByteArena {
    private var blocks: [UnsafeMutableRawBufferPointer] = []

    public init() {}

    /// A copy of `bytes` that stays valid until the arena is released.
    public func hold(_ bytes: [UInt8]) -> UnsafeRawBufferPointer {
        let block = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 8)
        blocks.append(block)
        bytes.withUnsafeBytes { block.copyMemory(from: $0) }
        return UnsafeRawBufferPointer(rebasing: block[0..<bytes.count])
    }

    deinit { for block in blocks { block.deallocate() } }
}
