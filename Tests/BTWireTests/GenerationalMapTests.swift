import Testing
import BTWire

/// `GenerationalMap`: the links' peers (numbering, the latest link of each) and the text timeline's likenesses of
/// links remembered for two generations, so that ever new keys cost bounded memory.
@Suite("A map of two generations")
struct GenerationalMapTests {
    @Test("two generations remembered, the older forgotten only when allowed, and returned when it is")
    func generations() {
        var m = GenerationalMap<Int, Int>(generation: 3)
        for k in 0..<3 { #expect(m.set(k, k) == nil) }
        // The current generation is full: the next new key starts a new one, forgetting nothing yet.
        #expect(m.set(3, 3)?.isEmpty == true)
        for k in 4..<6 { #expect(m.set(k, k) == nil) }
        #expect(m.count == 6 && m[0] == 0)
        // Not allowed to forget: the generation grows instead.
        #expect(m.set(6, 6, mayForget: false) == nil)
        #expect(m.count == 7 && m[0] == 0)
        // Allowed: the oldest generation (0, 1, 2) is returned and forgotten.
        let gone = m.set(7, 7)
        #expect(gone.map { Set($0.keys) } == [0, 1, 2])
        #expect(m[0] == nil && m[3] == 3 && m[7] == 7 && m.forgotten == 3)
        // `find` says which generation holds a key.
        #expect(m.find(3)?.inCurrent == false && m.find(7)?.inCurrent == true && m.find(99) == nil)
        // A key set again is recent: it moves to the current generation (it survives the next retirement), whether
        // `set` looks it up or is told where `find` found it.
        m.set(3, 30)
        #expect(m.find(3)?.inCurrent == true && m.count == 5)
        m.set(5, 50, found: m.find(5))
        #expect(m.find(5)?.inCurrent == true && m.count == 5)
        // `update` changes a value where it is.
        if let four = m.find(4) { m.update(4, found: four) { $0 = 40 } }
        #expect(m[3] == 30 && m[4] == 40 && m[5] == 50 && m.find(4)?.inCurrent == false)
    }
}
