/// A named, displayable field of a decoded packet, as `btlens decode -v` prints it (Wireshark's tree).
/// Built only on demand: the hot path never creates these.
public struct DecodedField: Equatable, Sendable {
    public var name: String
    public var value: String
    public var children: [DecodedField]

    public init(_ name: String, _ value: String, children: [DecodedField] = []) {
        self.name = name
        self.value = value
        self.children = children
    }
}

/// Something that can describe itself in one line and as a field tree.
public protocol PacketDescribing {
    /// One line, e.g. "ATT Read Request handle 0x002a".
    var summary: String { get }
    /// The decoded fields for `-v`.
    var fields: [DecodedField] { get }
}
