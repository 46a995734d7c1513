import Glibc
import Testing
import BTWire
import BTCapture
@testable import BTTrack

/// What a judged (slimmed) link keeps: on a long capture memory grows with these, up to `maximumConnections`.
@Suite("Judged links' footprint")
struct JudgedLinkFootprintTests {
    static func link() -> Connection {
        let start = RecordRef(number: 1, offset: 16, timestamp: Timestamp(nanoseconds: 0), controller: 0)
        return Connection(id: 1, controller: 0, handle: 0x40, transport: .le, start: start, implicitStart: false,
                          options: TrackerOptions())
    }

    /// Bytes the allocator set aside for `object` (glibc's `malloc_usable_size`, which `Glibc` does not export).
    static func allocated(_ object: AnyObject) -> Int {
        typealias UsableSize = @convention(c) (UnsafeMutableRawPointer?) -> Int
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_usable_size") else { return -1 }
        return unsafeBitCast(symbol, to: UsableSize.self)(Unmanaged.passUnretained(object).toOpaque())
    }

    @Test("a judged link without a database keeps one block of at most 256 bytes and shares the empty states")
    func withoutDatabase() {
        let c = Self.link()
        c.usage.update(0x0003) { $0.reads += 1 }
        c.slim()
        #expect(c.working == ConnectionWorkingState.released)
        #expect(c.database == LinkDatabase.empty)
        let bytes = Self.allocated(c)
        #expect(bytes > 0 && bytes <= 256, "\(bytes) bytes")
    }

    @Test("a judged link with a database keeps it and its use in a small box, not the whole working state")
    func withDatabase() {
        let c = Self.link()
        c.gatt.addService(start: 1, end: 5, uuid: BluetoothUUID(uuid16: 0x180F), primary: true)
        c.usage.update(0x0003) { $0.reads += 1 }
        c.slim()
        #expect(c.working == ConnectionWorkingState.released)
        #expect(c.database != LinkDatabase.empty)
        #expect(c.gatt.services.count == 1)
        #expect(c.usage[0x0003]?.reads == 1)
        // The box is the database and the use table, a small part of the working state the link let go.
        #expect(MemoryLayout<LinkDatabase>.size * 4 < MemoryLayout<ConnectionWorkingState>.size)
    }
}
