import BTWire

/// The state a ground-truth capture is built with: the script, the connections opened so far (their ids are
/// what the tracker will number them), the addresses and handles already used, and the manifest items.
final class TruthBuilder {
    let s: HCIScript
    /// Connections opened so far: the next one is `connections + 1`.
    private(set) var connections = 0
    private(set) var planted: [GroundTruthItem] = []
    private(set) var controls: [GroundTruthItem] = []
    private(set) var scanDuty: [GroundTruthScanDuty] = []
    private var usedAddresses: Set<UInt64> = [SampleDevices.phone.rawValue]
    private var usedLinkHandles: Set<UInt16> = []
    /// Failed connection attempts are reported once per capture (one finding for all of them): plant them once.
    var failuresPlanted = false

    /// Scan parameters every episode's LE Create Connection carries (the initiator's scan, not a scan session).
    static let initiatorScan = HCIUnits.slots(microseconds: Micros.ms(60))
    static let supervisionTimeout = HCIUnits.supervisionTimeout(microseconds: Micros.seconds(5))

    init(_ s: HCIScript) { self.s = s }

    // MARK: Time and randomness

    /// Capture time, Unix seconds.
    var t: Double { s.now.seconds }

    /// A uniform value in `range`, microsecond resolution.
    func uniform(_ range: ClosedRange<Double>) -> Double {
        let span = Int64(((range.upperBound - range.lowerBound) * 1e6).rounded())
        return range.lowerBound + Double(s.rng.int64(in: 0...max(0, span))) / 1e6
    }

    func int(_ range: ClosedRange<Int>) -> Int { s.rng.int(in: range) }
    func chance(_ percent: UInt64) -> Bool { s.rng.chance(percent, in: 100) }
    func pick<T>(_ items: [T]) -> T { items[int(0...items.count - 1)] }
    func shuffled<T>(_ items: [T]) -> [T] {
        var out = items
        guard out.count > 1 else { return out }
        for i in stride(from: out.count - 1, to: 0, by: -1) { out.swapAt(i, int(0...i)) }
        return out
    }

    func wait(_ seconds: Double) { s.advance(Int64((seconds * 1e6).rounded())) }
    func wait(_ range: ClosedRange<Double>) { wait(uniform(range)) }

    /// Microseconds since the script started, for schedules.
    var elapsed: Int64 { s.elapsed }
    static func micros(_ seconds: Double) -> Int64 { Int64((seconds * 1e6).rounded()) }

    /// Runs timed actions in time order (each at its time, or right after the previous one when that overran).
    func run(schedule: [(at: Int64, action: () -> Void)]) {
        let ordered = schedule.enumerated().sorted { a, b in
            a.element.at == b.element.at ? a.offset < b.offset : a.element.at < b.element.at
        }
        for (_, item) in ordered {
            s.advance(toElapsed: item.at)
            item.action()
        }
    }

    // MARK: Manifest

    func plant(_ rule: String, connection: Int?, handle: UInt16? = nil, from start: Double, to end: Double, _ note: String) {
        planted.append(GroundTruthItem(rule: rule, connection: connection, attributeHandle: handle, start: start, end: end,
                                       note: note))
    }

    func control(_ rule: String, connection: Int?, handle: UInt16? = nil, from start: Double, to end: Double, _ note: String) {
        controls.append(GroundTruthItem(rule: rule, connection: connection, attributeHandle: handle, start: start, end: end,
                                        note: note))
    }

    /// A scan whose duty cycle (all PHYs together) the energy model must show.
    func expectScanDuty(from start: Double, to end: Double, duty: Double, _ note: String) {
        scanDuty.append(GroundTruthScanDuty(start: start, end: end, dutyCycle: duty, note: note))
    }

    // MARK: Devices and links

    /// A peer nobody else in the capture uses: a random static address (top bits 11) or a public one.
    func newPeer() -> PeerAddress {
        while true {
            let bits = s.rng.next() & 0xFFFF_FFFF_FFFF
            let random = chance(70)
            let raw = random ? bits | 0xC000_0000_0000 : bits & 0x00FF_FFFF_FFFF | 0x0400_0000_0000
            guard usedAddresses.insert(raw).inserted else { continue }
            return PeerAddress(BDAddr(rawValue: raw), type: random ? LEParameter.randomAddress : LEParameter.publicAddress)
        }
    }

    /// A connection handle no other link in the capture had.
    func newLinkHandle() -> UInt16 {
        while true {
            let h = UInt16(int(0x0001...0x0EFF))
            if usedLinkHandles.insert(h).inserted { return h }
        }
    }

    /// A relaxed connection interval, 30–50 ms (units of 1.25 ms): idle time at it is not an idle fast interval.
    func relaxedInterval() -> UInt16 { UInt16(int(24...40)) }

    struct Link {
        let connection: LEConnection
        /// The tracker's `Connection.id`.
        let id: Int
        /// When the Connection Complete arrived (Unix seconds).
        let up: Double
    }

    /// The phone connects as central with LE Create Connection at `interval` (relaxed unless told) and `latency`;
    /// `acceptList` and `whileInitiating` as `HCIScript.connect` takes them.
    func connect(_ peer: PeerAddress, interval: UInt16? = nil, latency: UInt16 = 0, acceptList: Bool = false,
                 whileInitiating: (() -> Void)? = nil) -> Link {
        let chosen = interval ?? relaxedInterval()
        let parameters = ConnectionParameters(intervalMin: chosen, intervalMax: chosen, latency: latency,
                                              supervisionTimeout: Self.supervisionTimeout)
        let link = s.connect(to: peer, handle: newLinkHandle(), parameters: parameters, scanInterval: Self.initiatorScan,
                             scanWindow: Self.initiatorScan, chosenInterval: chosen, acceptList: acceptList,
                             whileInitiating: whileInitiating)
        connections += 1
        return Link(connection: link, id: connections, up: t)
    }

    /// A central connects to the phone while it advertises.
    func accept(_ peer: PeerAddress) -> Link {
        let link = s.acceptConnection(from: peer, handle: newLinkHandle(), interval: relaxedInterval(),
                                      supervisionTimeout: Self.supervisionTimeout, enhanced: chance(50))
        connections += 1
        return Link(connection: link, id: connections, up: t)
    }

    /// The phone as GATT client of `server` on `link`; half the time it exchanges MTU first.
    func client(_ link: Link, _ server: GATTServer) -> ATTChannel {
        let att = ATTChannel(script: s, connection: link.connection, server: server, clientSide: .local)
        if chance(50) { att.exchangeMTU(pick([185, 247, 517])) }
        return att
    }

    /// The app is done: a short pause (well under every idle threshold), then disconnect.
    func hangUp(_ link: Link) {
        wait(0.3...2.0)
        s.disconnect(link.connection)
    }

    /// A Connection Complete that reports failure (the peer was out of range).
    func failedAttempt(to peer: PeerAddress) {
        let parameters = ConnectionParameters(intervalMin: relaxedInterval(), intervalMax: 40,
                                              supervisionTimeout: Self.supervisionTimeout)
        s.commandStatus(.leCreateConnection(peer: peer, scanInterval: Self.initiatorScan, scanWindow: Self.initiatorScan,
                                            parameters: parameters))
        wait(0.3...2.0)
        var info = ConnectionCompleteInfo(handle: 0, role: LEParameter.centralRole, peer: peer, interval: 0, latency: 0,
                                          supervisionTimeout: 0)
        info.status = .connectionFailedToBeEstablished
        s.emit(.leConnectionComplete(info))
        s.pause(s.timing.hostReaction)
    }

    /// A connection attempt the host withdraws: LE Create Connection Cancel, then the controller ends the
    /// attempt with Unknown Connection Identifier (0x02). Not a failure of the radio.
    func cancelledAttempt(to peer: PeerAddress) {
        let parameters = ConnectionParameters(intervalMin: relaxedInterval(), intervalMax: 40,
                                              supervisionTimeout: Self.supervisionTimeout)
        s.commandStatus(.leCreateConnection(peer: peer, scanInterval: Self.initiatorScan, scanWindow: Self.initiatorScan,
                                            parameters: parameters))
        wait(1.0...4.0)
        s.commandComplete(HCICommand(Self.leCreateConnectionCancel))
        var info = ConnectionCompleteInfo(handle: 0, role: LEParameter.centralRole, peer: peer, interval: 0, latency: 0,
                                          supervisionTimeout: 0)
        info.status = HCIStatus(rawValue: 0x02)
        s.emit(.leConnectionComplete(info))
        s.pause(s.timing.hostReaction)
    }

    static let leCreateConnectionCancel = HCIOpcode(rawValue: 0x200E)
}
