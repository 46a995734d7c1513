/// Where an object's members go as they are made: written at once (`JSONStreamWriter.Members`), or gathered into
/// a value (`JSONMembers`). A report that describes an object once, as members to a sink, writes it either way
/// byte for byte alike; a long array member (a link's 20,000 events) is then never a tree when streamed.
public protocol JSONMemberSink {
    mutating func member(_ key: String, _ value: JSONValue)
    /// A member whose value is an array of `elements`, each made when it is written.
    mutating func array<S: Sequence>(_ key: String, _ elements: S, _ element: (S.Element) -> JSONValue)
}

extension JSONStreamWriter.Members: JSONMemberSink {}

/// An object's members gathered in order (`JSONValue.object`).
public struct JSONMembers: JSONMemberSink {
    public private(set) var members: [(String, JSONValue)] = []

    public init() {}

    public mutating func member(_ key: String, _ value: JSONValue) { members.append((key, value)) }

    public mutating func array<S: Sequence>(_ key: String, _ elements: S, _ element: (S.Element) -> JSONValue) {
        members.append((key, .array(elements.map(element))))
    }

    public var value: JSONValue { .object(members) }
}
