/// A value that can be set aside as bytes in a `Spill` (`SetAsideArray`) and read back by the process that wrote
/// it: plain fields as they are in memory, lists after them.
public protocol SetAsideValue: Sendable {
    /// Appends `value` to `spill`; returns where it begins.
    static func append(_ value: Self, to spill: Spill) -> Int64
    /// The value appended at `offset`. A spill that cannot be read back (its disk failed: `Spill.failure`) gives
    /// a value of zeros, never a crash.
    static func read(from spill: Spill, at offset: Int64) -> Self
}

/// A plain value (no reference in it: `Spill.append(plain:)`) set aside as its bytes.
public protocol PlainSetAsideValue: SetAsideValue {}

extension PlainSetAsideValue {
    // Inlinable, so the reads are made for the type (no generic type lookups at run time per value).
    @inlinable public static func append(_ value: Self, to spill: Spill) -> Int64 { spill.append(plain: value) }
    @inlinable public static func read(from spill: Spill, at offset: Int64) -> Self { spill.read(plain: Self.self, at: offset) }
}

/// Values in order, as the model holds its scan sessions and the app's scans: in memory, or — when made with a
/// directory — all but the latest few set aside in an unlinked file there, memory keeping about 4 bytes for each.
/// Readers index and iterate them like an array; a value read from the file is decoded on each access. A capture
/// of tens of thousands of scans then costs the same memory at 10 GB as at 1 GB.
///
/// A value type: a copy that changes a value set aside writes the changed value at the file's end and points its
/// own index there, so the other copy still reads the old one (the file is only ever appended to). Writes come
/// from one thread at a time; reads may come from any once the writing is done.
public struct SetAsideArray<Element: SetAsideValue>: RandomAccessCollection, Sendable, ExpressibleByArrayLiteral {
    /// Where the values set aside are; nil when every value is in memory.
    @usableFromInline let spill: Spill?
    /// The directory of `spill`, for arrays made like this one (`emptyCopy`).
    @usableFromInline let directory: String?
    /// Where each value set aside begins, in index order; `SetAsideArray.pinnedMark` for those in `pinned`.
    @usableFromInline var setAside = PackedOffsets()
    /// Values past `recent` that were still open when their turn came (`append`'s `isOpen`): held in memory until
    /// they are not, then written. As many as are open at once (a few advertising sets, a scan per controller).
    @usableFromInline var pinned: [Int: Element] = [:]
    @usableFromInline static var pinnedMark: Int64 { -1 }
    /// The values from `setAside.count` on.
    @usableFromInline var recent: [Element] = []
    /// How many stay in memory before the oldest are set aside.
    @usableFromInline let kept: Int

    /// Values kept in memory before the oldest are set aside, unless told otherwise: the open scan sessions and
    /// those just ended (late reports, the next session's comparison with the last) are nearly always among them.
    public static var recentKept: Int { 64 }

    public init() {
        spill = nil
        directory = nil
        kept = Self.recentKept
    }

    public init(_ values: [Element]) {
        self.init()
        recent = values
    }

    public init(arrayLiteral elements: Element...) { self.init(elements) }

    /// Values set aside in `directory` once `kept` newer ones follow, at least one (in memory, as bytes, when the
    /// file cannot be made: `spillError` says why).
    /// `readAhead`: bytes read from the file at once when values are read in order (`Spill.readAhead`); a value
    /// read here and there costs a read of its own either way.
    public init(spillingTo directory: String, kept: Int = Self.recentKept, readAhead: Int = Spill.readAheadWindow) {
        self.kept = Swift.max(1, kept)
        self.directory = directory
        let made = Spill.fileOrMemory(in: directory, readAhead: readAhead)
        spill = made.spill
        spillError = made.error
    }

    /// An empty array that sets its values aside as this one does, in a file of its own.
    public func emptyCopy() -> Self { emptyCopy(of: Element.self) }

    /// An empty array of `type` that sets its values aside as this one does (values made from these).
    public func emptyCopy<T: SetAsideValue>(of type: T.Type) -> SetAsideArray<T> {
        guard let directory else { return SetAsideArray<T>() }
        return SetAsideArray<T>(spillingTo: directory, kept: kept, readAhead: spill?.readAhead ?? 0)
    }

    /// Room for `n` values in memory, for an array that keeps them there (made without a directory).
    public mutating func reserveCapacity(_ n: Int) {
        if spill == nil { recent.reserveCapacity(n) }
    }

    /// Why the values could not be set aside in a file (they are then held in memory, as bytes).
    public private(set) var spillError: SpillError?

    /// What went wrong writing or reading the values set aside (a full disk), or what they were made from, if
    /// anything.
    public var failure: String? {
        spill?.flush()
        return spill?.failure ?? sourceFailure
    }

    /// What went wrong setting aside what the values were made from (`failure` reports it).
    public var sourceFailure: String?

    @inlinable public var startIndex: Int { 0 }
    @inlinable public var endIndex: Int { setAside.count + recent.count }

    @inlinable public subscript(i: Int) -> Element {
        get {
            if i >= setAside.count { return recent[i - setAside.count] }
            if setAside[i] == Self.pinnedMark, let value = pinned[i] { return value }
            return Element.read(from: spill!, at: setAside[i])
        }
        set {
            if i >= setAside.count {
                recent[i - setAside.count] = newValue
            } else if setAside[i] == Self.pinnedMark {
                pinned[i] = newValue
            } else {
                setAside[i] = Element.append(newValue, to: spill!)
            }
        }
        // In place: a session's list appended to through the subscript is not copied at each change.
        _modify {
            if i >= setAside.count {
                yield &recent[i - setAside.count]
            } else if setAside[i] == Self.pinnedMark, var value = pinned.removeValue(forKey: i) {
                defer { pinned[i] = value }
                yield &value
            } else {
                var value = Element.read(from: spill!, at: setAside[i])
                defer { setAside[i] = Element.append(value, to: spill!) }
                yield &value
            }
        }
    }

    /// Adds a value at the end; sets the oldest in memory aside once `kept` follow them. Those `isOpen` (by index)
    /// says may still change much wait in memory until it says they do not (a change to a value set aside writes
    /// it anew: an open session's growing list would be written again and again).
    @inlinable public mutating func append(_ value: Element, isOpen: (Int) -> Bool = { _ in false }) {
        recent.append(value)
        guard let spill else { return }
        for (i, held) in pinned where !isOpen(i) {
            setAside[i] = Element.append(held, to: spill)
            pinned[i] = nil
        }
        guard recent.count >= 2 * kept else { return }
        let moving = recent.count - kept
        for k in 0..<moving {
            let index = setAside.count
            if isOpen(index) {
                pinned[index] = recent[k]
                setAside.append(Self.pinnedMark)
            } else {
                setAside.append(Element.append(recent[k], to: spill))
            }
        }
        recent.removeFirst(moving)
    }

    /// Removes the values `shouldRemove` picks, keeping the others in order.
    public mutating func removeAll(where shouldRemove: (Element) throws -> Bool) rethrows {
        var kept = emptyCopy()
        for value in self where try !shouldRemove(value) { kept.append(value) }
        self = kept
    }

    /// The file the values are set aside in, for what a value sets aside of its own as it grows (a scan's
    /// connections, `RecordRefList`); nil when the values stay in memory.
    public var fileForLists: Spill? { spill.flatMap { $0.isFile ? $0 : nil } }

    /// Bytes set aside (rewritten values included).
    public var spilledBytes: Int64 { spill?.size ?? 0 }
    /// How many values are set aside, not in memory.
    public var setAsideCount: Int { setAside.count - pinned.count }
}
