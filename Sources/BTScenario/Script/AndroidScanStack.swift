import BTWire

/// Android's scan manager as the controller sees it (AOSP ScanManager and the stack's APCF bookkeeping): scan
/// clients share one controller scan. Each client gets an APCF filter index — its conditions, then a feature
/// selection; an unfiltered client an all-pass one — and whenever a client starts or stops, the stack disables
/// the controller scan, programs the parameters of the most demanding client left and enables it again, with
/// duplicate filtering off (Android filters duplicates itself). The controller then reports the advertisers
/// some client's filters let through. Command order and bytes follow real btsnoop logs (yeelock frames 364–441).
public final class AndroidScanStack {
    /// Android's scan modes and the parameters a stack of the real captures programs for them (0.625 ms slots).
    public enum ScanMode: Int, Comparable, Sendable {
        case lowPower, balanced, lowLatency

        public var interval: UInt16 { Self.interval }
        public var window: UInt16 {
            switch self {
            case .lowPower: Self.lowPowerWindow
            case .balanced: Self.balancedWindow
            case .lowLatency: Self.interval
            }
        }

        /// 5000 ms for every mode; the window sets the duty cycle: 500 ms (10 %), 1250 ms (25 %), 5000 ms (100 %).
        static let interval: UInt16 = 8000
        static let lowPowerWindow: UInt16 = 800
        static let balancedWindow: UInt16 = 2000

        public static func < (a: ScanMode, b: ScanMode) -> Bool { a.rawValue < b.rawValue }
    }

    /// One scan client of the stack (an app's or the OS's `BluetoothLeScanner.startScan`).
    public struct Client {
        public var index: UInt8
        public var mode: ScanMode
        /// APCF conditions added under the index before its feature selection; empty for an all-pass filter.
        public var conditions: [HCICommand]
        /// Feature selection bits (`APCF.Feature`); `APCF.Feature.none` for an all-pass filter.
        public var features: UInt16
        /// The advertisers its filters let through.
        public var advertisers: [SimulatedAdvertiser]

        public init(index: UInt8, mode: ScanMode, conditions: [HCICommand] = [], features: UInt16 = APCF.Feature.none,
                    advertisers: [SimulatedAdvertiser]) {
            self.index = index
            self.mode = mode
            self.conditions = conditions
            self.features = features
            self.advertisers = advertisers
        }
    }

    let script: HCIScript
    public private(set) var clients: [Client] = []
    /// The parameters in the controller, nil before the first programming.
    var programmed: ScanMode?
    public private(set) var scanning = false
    var stream: AdvertisingReportStream?
    /// Advertisers that stopped (connected): kept paused across re-programming.
    var silent: Set<PeerAddress> = []
    var slotsLeft = APCF.controllerSlots

    public init(script: HCIScript) { self.script = script }

    /// The client's filters go into the controller (APCF enable, conditions, feature selection) and, unless told
    /// otherwise, the scan is re-programmed for it.
    public func start(_ client: Client, reprogram: Bool = true) {
        script.apcf(.apcfEnable(true))
        for condition in client.conditions {
            slotsLeft -= 1
            script.apcf(condition, available: slotsLeft)
        }
        slotsLeft -= 1
        script.apcf(.apcfAddFeatureSelection(index: client.index, features: client.features), available: slotsLeft)
        clients.append(client)
        if reprogram { self.reprogram() }
    }

    /// The client's filter index is deleted and, unless told otherwise, the scan re-programmed for the rest.
    public func stop(index: UInt8, reprogram: Bool = true) {
        guard let i = clients.firstIndex(where: { $0.index == index }) else { return }
        slotsLeft += UInt8(clients[i].conditions.count + 1)
        script.apcf(.apcfDeleteFeatureSelection(index: index), available: slotsLeft)
        clients.remove(at: i)
        if reprogram { self.reprogram() }
    }

    /// Every client stops; the controller scan is disabled.
    public func stopAll() {
        for c in clients { stop(index: c.index, reprogram: false) }
        reprogram()
    }

    /// Disable the controller scan; with clients left, program the old parameters, then the most demanding
    /// client's, and enable again (the stack writes the parameters twice, as the captures show).
    public func reprogram() {
        if scanning {
            script.background = nil
            script.commandComplete(.leSetScanEnable(false, filterDuplicates: true))
            scanning = false
        }
        guard let mode = clients.map(\.mode).max() else { return }
        let previous = programmed ?? mode
        script.commandComplete(.leSetScanParameters(active: true, interval: previous.interval, window: previous.window,
                                                    ownAddressType: LEParameter.randomAddress))
        script.commandComplete(.leSetScanParameters(active: true, interval: mode.interval, window: mode.window,
                                                    ownAddressType: LEParameter.randomAddress))
        script.commandComplete(.leSetScanEnable(true, filterDuplicates: false))
        programmed = mode
        scanning = true
        var seen: Set<PeerAddress> = []
        let heard = clients.flatMap(\.advertisers).filter { seen.insert($0.peer).inserted }
        let stream = AdvertisingReportStream(advertisers: heard, mode: .legacy, active: true, filterDuplicates: false,
                                             scanInterval: mode.interval, scanWindow: mode.window,
                                             startingAt: script.elapsed, seed: script.rng.next())
        for peer in silent { stream.setAdvertising(peer, false) }
        self.stream = stream
        script.background = stream
    }

    /// An advertiser stops (it connected) or resumes.
    public func setAdvertising(_ peer: PeerAddress, _ on: Bool) {
        if on { silent.remove(peer) } else { silent.insert(peer) }
        stream?.setAdvertising(peer, on)
    }
}
