/// The links up now, by (controller, handle). Every ACL packet looks its link up here, so the lookup goes
/// through a `KeyTable` (no hashing) into a dense list; a closed link's key stays in the table marked absent,
/// which bounds the table by the distinct handles seen (at most 4096 per controller).
struct OpenLinks {
    struct LinkKey: PackedKey {
        let rawValue: UInt64
        init(rawValue: UInt64) { self.rawValue = rawValue }
        @inline(__always) init(_ key: UInt32) { rawValue = UInt64(key) | 1 << 63 }
    }

    /// Position in `links`, or -1 when the link is closed.
    private var index = KeyTable<LinkKey>(limit: Int.max, initialSlots: 16)
    private(set) var links: [Connection] = []
    private var keys: [UInt32] = []

    var count: Int { links.count }
    var values: [Connection] { links }

    /// The open link of `key`, borrowed: `links` keeps it alive while it is open, and a strong reference
    /// would cost a retain and a release for every ACL packet whose link is not the one before.
    @inline(__always)
    func borrowed(_ key: UInt32) -> Unmanaged<Connection>? {
        guard let slot = index.slot(of: LinkKey(key)) else { return nil }
        let i = Int(index.value(at: slot))
        guard i >= 0 else { return nil }
        return links.withUnsafeBufferPointer { Unmanaged.passUnretained($0[i]) }
    }

    subscript(key: UInt32) -> Connection? {
        get {
            guard let slot = index.slot(of: LinkKey(key)) else { return nil }
            let i = index.value(at: slot)
            return i >= 0 ? links[Int(i)] : nil
        }
        set {
            guard let found = index.findOrInsert(LinkKey(key), value: -1) else { return }
            let i = Int(index.value(at: found.slot))
            if let newValue {
                if i >= 0 {
                    links[i] = newValue
                } else {
                    index.setValue(Int64(links.count), at: found.slot)
                    links.append(newValue)
                    keys.append(key)
                }
            } else if i >= 0 {
                // Move the last link into the freed place.
                index.setValue(-1, at: found.slot)
                let last = links.count - 1
                if i != last {
                    links[i] = links[last]
                    keys[i] = keys[last]
                    if let moved = index.slot(of: LinkKey(keys[i])) { index.setValue(Int64(i), at: moved) }
                }
                links.removeLast()
                keys.removeLast()
            }
        }
    }
}
