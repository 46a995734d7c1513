@testable import BTTrack
import BTWire
import Testing

/// The links' peers as `reconnect-by-scan` looks them up: every peer is found, exactly while they are few and
/// through the Bloom filter after; devices that were no peer are rarely taken for one.
@Suite("Peer filter")
struct PeerFilterTests {
    /// Distinct 48-bit addresses, the same on every run.
    static func addresses(_ count: Int, seed: UInt64) -> [UInt64] {
        (0..<count).map { SplitMixHash.hash(seed &+ UInt64($0)) & 0xFFFF_FFFF_FFFF }
    }

    @Test("few peers are held exactly: no other device is taken for one")
    func exact() {
        var filter = PeerFilter()
        let peers = Self.addresses(PeerFilter.exactLimit, seed: 1)
        for p in peers { filter.insert(p) }
        #expect(peers.allSatisfy(filter.contains))
        #expect(!Self.addresses(20_000, seed: 1 << 40).contains(where: filter.contains))
    }

    @Test("past the exact limit every peer is still found, the ones held exactly before included")
    func noFalseNegatives() {
        var filter = PeerFilter()
        let peers = Self.addresses(310_000, seed: 2)
        for p in peers { filter.insert(p) }
        #expect(peers.allSatisfy(filter.contains))
    }

    @Test("wrongly taken for a peer: fewer than 1 device in 2,000 at 27,000 peers (1 GB of many links), 1 in 15 at 310,000")
    func falsePositives() {
        let others = Self.addresses(200_000, seed: 1 << 41)
        for (peers, oneIn) in [(27_000, 2_000), (310_000, 15)] {
            var filter = PeerFilter()
            for p in Self.addresses(peers, seed: 3) { filter.insert(p) }
            let wrong = others.filter(filter.contains).count
            #expect(wrong > 0)  // a Bloom filter this full must err sometimes: the test reads the filter, not the set
            #expect(wrong * oneIn < others.count, "\(wrong) of \(others.count) at \(peers) peers")
        }
    }
}
