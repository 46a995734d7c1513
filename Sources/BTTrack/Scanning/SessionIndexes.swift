/// Indexes into `CaptureModel.scans`, ascending: the controller sessions an app scan covered. A scan's pieces are
/// consecutive sessions as a rule (one restarted scan, one client's lifetime), so they are kept as a range and only
/// a gap makes a list: an app scan holds no array of its own.
public struct SessionIndexes: RandomAccessCollection, Sendable, Equatable, ExpressibleByArrayLiteral {
    private enum Storage: Sendable, Equatable {
        /// lower..<upper.
        case range(Int32, Int32)
        case list([Int])
    }

    private var storage: Storage

    /// `indexes` ascending, without repeats.
    public init(_ indexes: [Int]) {
        if let first = indexes.first, let last = indexes.last, last - first == indexes.count - 1,
           let lower = Int32(exactly: first), let upper = Int32(exactly: last + 1) {
            storage = .range(lower, upper)
        } else if indexes.isEmpty {
            storage = .range(0, 0)
        } else {
            storage = .list(indexes)
        }
    }

    public init(arrayLiteral elements: Int...) { self.init(elements) }

    /// The indexes from `lower` up to `upper` (excluded).
    init(lower: Int32, upper: Int32) { storage = .range(lower, upper) }

    /// The range it is, or nil when it is a list.
    var range: (lower: Int32, upper: Int32)? {
        if case .range(let lower, let upper) = storage { return (lower, upper) }
        return nil
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int {
        switch storage {
        case .range(let lower, let upper): Int(upper - lower)
        case .list(let list): list.count
        }
    }

    public subscript(position: Int) -> Int {
        switch storage {
        case .range(let lower, _): Int(lower) + position
        case .list(let list): list[position]
        }
    }

    /// Adds `other`'s indexes: appended when they come after these (as a restart's do), merged otherwise.
    mutating func formUnion(_ other: SessionIndexes) {
        guard let theirs = other.first else { return }
        if case .range(let lower, let upper) = storage, case .range(let l, let u) = other.storage, lower < upper, l == upper {
            storage = .range(lower, u)
            return
        }
        if let mine = self.last, theirs > mine {
            self = SessionIndexes(Array(self) + Array(other))
        } else {
            self = SessionIndexes(Array(Set(Array(self) + Array(other))).sorted())
        }
    }
}
