/// How the app used one attribute on a connection.
public struct AttributeUsage: Sendable, Equatable {
    public var reads = 0
    public var readBlobs = 0
    public var writeRequests = 0
    public var writeCommands = 0
    public var preparedWrites = 0
    public var notifications = 0
    public var indications = 0
    public var errors = 0
    var lastValueBytes: ValueSnapshot?
    public var lastValueAt: RecordRef?

    public init() {}

    /// Last value seen (read response, notification, write), first `keptValueBytes` bytes.
    public var lastValue: [UInt8]? { lastValueBytes?.bytes }

    /// Keeps the first bytes of `value`: a copy into inline storage, so a stream of notifications neither
    /// allocates nor touches a reference count.
    @inline(__always)
    mutating func keep(value: UnsafeRawBufferPointer, at: RecordRef) {
        // In place after the first: only the value's bytes are copied, not a whole new snapshot.
        if lastValueBytes == nil { lastValueBytes = ValueSnapshot(value) } else { lastValueBytes!.replace(with: value) }
        lastValueAt = at
    }

    /// Adds a later connection's usage of the same attribute (counts add up; its last value wins).
    public mutating func add(_ later: AttributeUsage) {
        reads += later.reads; readBlobs += later.readBlobs; writeRequests += later.writeRequests
        writeCommands += later.writeCommands; preparedWrites += later.preparedWrites
        notifications += later.notifications; indications += later.indications; errors += later.errors
        if let v = later.lastValueBytes { lastValueBytes = v; lastValueAt = later.lastValueAt }
    }

    /// Takes `other`'s last value (and its record) in place of this one's.
    public mutating func keepLastValue(of other: AttributeUsage) {
        lastValueBytes = other.lastValueBytes
        lastValueAt = other.lastValueAt
    }

    public var total: Int { reads + readBlobs + writeRequests + writeCommands + preparedWrites + notifications + indications }
    public static let keptValueBytes = ValueSnapshot.capacity
}

/// Up to 64 bytes of an attribute value, stored inline.
struct ValueSnapshot: Sendable, Equatable {
    static let capacity = 64
    private var storage: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
    private(set) var count: Int

    @inline(__always)
    init(_ value: UnsafeRawBufferPointer) {
        count = min(value.count, Self.capacity)
        let n = count
        if n > 0, let base = value.baseAddress {
            withUnsafeMutableBytes(of: &storage) { $0.baseAddress!.copyMemory(from: base, byteCount: n) }
        }
    }

    /// Keeps `value` instead; bytes past its end are left as they were, as only the first `count` are read.
    @inline(__always)
    mutating func replace(with value: UnsafeRawBufferPointer) {
        count = min(value.count, Self.capacity)
        let n = count
        if n > 0, let base = value.baseAddress {
            withUnsafeMutableBytes(of: &storage) { $0.baseAddress!.copyMemory(from: base, byteCount: n) }
        }
    }

    var bytes: [UInt8] {
        withUnsafeBytes(of: storage) { Array($0.prefix(count)) }
    }

    static func == (a: ValueSnapshot, b: ValueSnapshot) -> Bool { a.bytes == b.bytes }
}

/// A handle packed for `KeyTable` (bit 63 keeps it non-zero).
struct HandleKey: PackedKey {
    let rawValue: UInt64
    init(rawValue: UInt64) { self.rawValue = rawValue }
    @inline(__always) init(_ handle: UInt16) { rawValue = UInt64(handle) | 1 << 63 }
    var handle: UInt16 { UInt16(truncatingIfNeeded: rawValue) }
}

/// Usage per attribute handle of one connection. Updated for every ATT PDU, so lookups go through a
/// `KeyTable` (no hashing) into a list in first-use order; read like a dictionary.
public struct AttributeUsageTable: Sequence, Sendable, Equatable {
    public typealias Element = (key: UInt16, value: AttributeUsage)

    private var index = KeyTable<HandleKey>(limit: Int.max, initialSlots: 16)
    private var entries: [Element] = []

    public init() {}

    public var count: Int { entries.count }
    public var isEmpty: Bool { entries.isEmpty }
    public var keys: [UInt16] { entries.map(\.key) }
    public var values: [AttributeUsage] { entries.map(\.value) }

    public subscript(handle: UInt16) -> AttributeUsage? {
        get {
            guard let slot = index.slot(of: HandleKey(handle)) else { return nil }
            return entries[Int(index.value(at: slot))].value
        }
        set {
            if let newValue { update(handle) { $0 = newValue } } else { remove(handle) }
        }
    }

    /// Updates the usage of `handle`, adding it first when new.
    @inline(__always)
    mutating func update(_ handle: UInt16, _ body: (inout AttributeUsage) -> Void) {
        guard let found = index.findOrInsert(HandleKey(handle), value: Int64(entries.count)) else { return }
        if found.inserted { entries.append((handle, AttributeUsage())) }
        body(&entries[Int(index.value(at: found.slot))].value)
    }

    private mutating func remove(_ handle: UInt16) {
        guard index.slot(of: HandleKey(handle)) != nil else { return }
        let kept = entries.filter { $0.key != handle }
        self = AttributeUsageTable()
        for e in kept { update(e.key) { $0 = e.value } }
    }

    /// A finished link's table: no growth slack.
    mutating func compact() {
        if Connection.hasSlack(entries) { entries = entries.map { $0 } }
    }

    public func makeIterator() -> IndexingIterator<[Element]> { entries.makeIterator() }

    public static func == (a: AttributeUsageTable, b: AttributeUsageTable) -> Bool {
        a.entries.count == b.entries.count && a.entries.allSatisfy { b[$0.key] == $0.value }
    }
}
