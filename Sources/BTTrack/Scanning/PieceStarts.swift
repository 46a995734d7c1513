import BTCapture

/// When each piece of an app scan started (`AppScan.pieceStarts`), in order. Most scans are one piece: the first
/// start is kept inline and only a restarted scan's further starts take an array.
public struct PieceStarts: RandomAccessCollection, Sendable, ExpressibleByArrayLiteral {
    private var head: RecordRef?
    private var rest: [RecordRef] = []

    public init(arrayLiteral elements: RecordRef...) {
        head = elements.first
        rest = Array(elements.dropFirst())
    }

    init(_ starts: [RecordRef]) {
        head = starts.first
        rest = Array(starts.dropFirst())
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { head == nil ? 0 : 1 + rest.count }

    public subscript(position: Int) -> RecordRef { position == 0 ? head! : rest[position - 1] }

    mutating func append(contentsOf other: PieceStarts) {
        for start in other {
            if head == nil { head = start } else { rest.append(start) }
        }
    }
}
