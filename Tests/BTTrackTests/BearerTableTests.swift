@testable import BTTrack
import Testing

/// The outstanding requests and indications of a link, by bearer: the first two bearers are held inline and the
/// rest in a list, and every reader sees one map whose keys keep the order they were first added in.
@Suite("ATT bearer table")
struct BearerTableTests {
    typealias Key = ATTSession.BearerKey

    /// Bearers as a link with enhanced ATT has them: the fixed channel both ways, then dynamic channels.
    static let keys = [Key(bearer: 4, requestSent: true), Key(bearer: 4, requestSent: false),
                       Key(bearer: 0x40, requestSent: true), Key(bearer: 0x41, requestSent: true)]

    @Test("values are found by key, inline and past the inline slots")
    func lookups() {
        var table = ATTSession.BearerTable<Int>()
        for (i, key) in Self.keys.enumerated() { table[key] = i }
        for (i, key) in Self.keys.enumerated() { #expect(table[key] == i) }
        #expect(table[Key(bearer: 0x40, requestSent: false)] == nil)
        #expect(table.values == [0, 1, 2, 3])
    }

    @Test("a key set to nil keeps its place, and comes back there")
    func order() {
        var table = ATTSession.BearerTable<Int>()
        for (i, key) in Self.keys.enumerated() { table[key] = i }
        table[Self.keys[0]] = nil
        table[Self.keys[2]] = nil
        #expect(table.values == [1, 3])
        #expect(table.entries.map(\.key) == Self.keys)
        table[Self.keys[2]] = 7
        table[Self.keys[0]] = 5
        #expect(table.values == [5, 1, 7, 3])
    }

    @Test("setting nil for a key never added adds nothing; removeAll empties every slot")
    func empty() {
        var table = ATTSession.BearerTable<Int>()
        table[Self.keys[3]] = nil
        #expect(table.entries.isEmpty)
        for (i, key) in Self.keys.enumerated() { table[key] = i }
        table.removeAll()
        #expect(table.entries.isEmpty)
        #expect(Self.keys.allSatisfy { table[$0] == nil })
        table[Self.keys[3]] = 9
        #expect(table.entries.map(\.key) == [Self.keys[3]])
    }
}
