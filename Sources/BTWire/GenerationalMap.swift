/// A map that remembers the keys set in the last two generations of `generation` keys each: state per key that
/// stays bounded when nearly every key is new (a soak test's ever new peers, a long capture's ever different
/// links), forgetting the keys not set for longest. A generation is only retired when `mayForget` allows it (say,
/// when its newest entry is old enough).
public struct GenerationalMap<Key: Hashable, Value> {
    private var current: [Key: Value]
    private var previous: [Key: Value] = [:]
    /// Keys set per generation before the older one may be forgotten.
    public let generation: Int
    /// Keys forgotten so far.
    public private(set) var forgotten = 0

    public init(generation: Int) {
        self.generation = generation
        current = Dictionary(minimumCapacity: 0)
    }

    public subscript(key: Key) -> Value? { current[key] ?? previous[key] }

    /// A key found, and in which generation: what `set` and `update` need to know, so that they hash it once more
    /// rather than looking in both generations again.
    public struct Found {
        public var value: Value
        /// In the current generation (else the previous one).
        public var inCurrent: Bool
    }

    public func find(_ key: Key) -> Found? {
        if let value = current[key] { return Found(value: value, inCurrent: true) }
        if let value = previous[key] { return Found(value: value, inCurrent: false) }
        return nil
    }

    public var count: Int { current.count + previous.count }

    /// Sets `key` in the current generation, first retiring the older generation when the current one is full and
    /// `mayForget` agrees; returns what it forgot then.
    @discardableResult
    public mutating func set(_ key: Key, _ value: Value, mayForget: Bool = true) -> [Key: Value]? {
        set(key, value, found: find(key), mayForget: mayForget)
    }

    /// `set(_:_:mayForget:)` for a key `find` just looked up (`found`).
    @discardableResult
    public mutating func set(_ key: Key, _ value: Value, found: Found?, mayForget: Bool = true) -> [Key: Value]? {
        var gone: [Key: Value]?
        var inPrevious = found.map { !$0.inCurrent } ?? false
        if current.count >= generation, mayForget, found?.inCurrent != true {
            forgotten += previous.count
            gone = previous
            previous = current
            current = Dictionary(minimumCapacity: generation)
            inPrevious = false  // it was in the generation forgotten, or nowhere
        }
        current[key] = value
        if inPrevious { previous[key] = nil }
        return gone
    }

    /// Changes the value of `key`, which `find` just found, where it is, without making it recent.
    public mutating func update(_ key: Key, found: Found, _ change: (inout Value) -> Void) {
        if found.inCurrent { change(&current[key]!) } else { change(&previous[key]!) }
    }

    /// Every value remembered.
    public var values: some Sequence<Value> { [current.values, previous.values].joined() }
}

extension GenerationalMap: Sendable where Key: Sendable, Value: Sendable {}
extension GenerationalMap.Found: Sendable where Value: Sendable {}
