import BTWire

/// Writes JSON piece by piece, byte for byte as `JSONValue.serialized(indent:)` would write the whole value, so a
/// report with one large array (`energy --json`'s connections: 72 MB on a 31,000-link capture) never holds its
/// whole tree or text: each element is made, written to `write` and let go.
public struct JSONStreamWriter {
    let indent: Int?
    let write: (String) -> Void

    public init(indent: Int? = 2, write: @escaping (String) -> Void) {
        self.indent = indent
        self.write = write
    }

    /// A whole value at nesting `level` (0: the top).
    public func value(_ v: JSONValue, level: Int = 0) {
        var out = ""
        v.write(to: &out, indent: indent, level: level)
        write(out)
    }

    /// Text already serialised at the place it goes (a value set aside when it was made).
    public func raw(_ text: String) { write(text) }

    /// An object at nesting `level` whose members `body` gives in order.
    public func object(level: Int = 0, _ body: (inout Members) -> Void) {
        var members = Members(writer: self, level: level)
        body(&members)
        members.close()
    }

    /// An array at nesting `level` of `elements`, each made when it is written.
    public func array<S: Sequence>(level: Int = 0, _ elements: S, _ element: (S.Element) -> JSONValue) {
        var array = Elements(writer: self, level: level)
        for e in elements {
            array.next()
            value(element(e), level: level + 1)
        }
        array.close()
    }

    /// An array at nesting `level` whose elements the caller writes: `next()` before each, then the element at
    /// `level + 1`, and `close()` at the end.
    public func elements(level: Int = 0) -> Elements { Elements(writer: self, level: level) }

    /// What ends an array or object of `count` members at `level`: as `JSONValue` writes it, empty on one line.
    func close(count: Int, level: Int, empty: String, end: String) {
        var out = ""
        if count == 0 {
            out = empty
        } else {
            JSONValue.newline(&out, indent, level)
            out += end
        }
        write(out)
    }

    /// The elements of an array being written.
    public struct Elements {
        let writer: JSONStreamWriter
        public let level: Int
        public private(set) var count = 0

        /// "[" or ",", and the new line: what comes before an element.
        public mutating func next() {
            var out = count == 0 ? "[" : ","
            count += 1
            JSONValue.newline(&out, writer.indent, level + 1)
            writer.write(out)
        }

        public func close() { writer.close(count: count, level: level, empty: "[]", end: "]") }
    }

    /// The members of an object being written.
    public struct Members {
        let writer: JSONStreamWriter
        let level: Int
        var count = 0

        /// "{" or ",", the new line and the key: what comes before a member's value.
        mutating func key(_ key: String) -> String {
            var out = count == 0 ? "{" : ","
            count += 1
            JSONValue.newline(&out, writer.indent, level + 1)
            JSONValue.writeString(key, to: &out)
            out += writer.indent == nil ? ":" : ": "
            return out
        }

        public mutating func member(_ key: String, _ value: JSONValue) {
            var out = self.key(key)
            value.write(to: &out, indent: writer.indent, level: level + 1)
            writer.write(out)
        }

        /// A member whose value is an array of `elements`, each made when it is written.
        public mutating func array<S: Sequence>(_ key: String, _ elements: S, _ element: (S.Element) -> JSONValue) {
            writer.write(self.key(key))
            writer.array(level: level + 1, elements, element)
        }

        /// A member whose value is an object whose members `body` writes in order.
        public mutating func object(_ key: String, _ body: (inout Members) -> Void) {
            writer.write(self.key(key))
            writer.object(level: level + 1, body)
        }

        /// A member whose value is an array whose elements `body` writes (`Elements.next()` before each).
        public mutating func elements(_ key: String, _ body: (inout Elements) -> Void) {
            writer.write(self.key(key))
            var array = writer.elements(level: level + 1)
            body(&array)
            array.close()
        }

        /// A member whose value is an array of objects, each written member by member (`body`) when it comes.
        public mutating func objects<S: Sequence>(_ key: String, _ elements: S, _ body: (S.Element, inout Members) -> Void) {
            writer.write(self.key(key))
            var array = writer.elements(level: level + 1)
            for element in elements {
                array.next()
                writer.object(level: array.level + 1) { body(element, &$0) }
            }
            array.close()
        }

        func close() { writer.close(count: count, level: level, empty: "{}", end: "}") }
    }
}
