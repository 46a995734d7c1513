import BTWire
import BTCapture
import BTDecode
import BTTrack

/// Radio time and charge of what a capture shows (ENERGY.md §3): each scan session, each connection and its
/// phases, own advertising, and the host wake-ups, for the phone (the host in the capture) and, for
/// connections, the peripheral. Pure functions of the tracking model and a profile.
public struct EnergyModel: Sendable {
    public var profile: EnergyProfile

    public init(profile: EnergyProfile = EnergyProfile()) { self.profile = profile }

    // MARK: Pricing

    /// mA × s = mC.
    func phoneCharge(_ t: RadioTime) -> Double { profile.phone.txMilliamps * t.txSeconds + profile.phone.rxMilliamps * t.rxSeconds }

    // MARK: Scanning (§3.2)

    /// Duty cycle of a session: the share of time the radio listens. Unknown parameters (the capture joined a
    /// scan midway): 25 % (Android's BALANCED), between 5 % (screen-off) and 100 %.
    static let unknownDuty = (estimate: 0.25, low: 0.05, high: 1.0)
    /// SCAN_REQs sent per scan response received, at most: requests go unanswered (collisions, the advertiser
    /// busy), so the count of responses is only a lower bound.
    static let requestsPerResponseHigh = 3.0

    public struct ScanTime: Sendable {
        public var radio: RadioTime
        public var rxLow: Double
        public var rxHigh: Double
        public var txHigh: Double
    }

    /// Listening and scan-request time of `s` from `from` to `to` (seconds since its start; nil: its end).
    public func scanTime(_ s: ScanSession, duration seconds: Double) -> ScanTime {
        var duty = Self.unknownDuty
        if s.parametersKnown && !s.phys.isEmpty {
            let d = min(1, s.phys.reduce(0) { $0 + $1.dutyCycle })
            duty = (d, d, d)
        }
        let rx = seconds * duty.estimate
        let tx = s.isActive ? Double(s.scanResponses) * AirTime.seconds(bytes: AirTime.scanRequestBytes) : 0
        return ScanTime(radio: RadioTime(txSeconds: tx, rxSeconds: rx),
                        rxLow: seconds * duty.low * (1 - profile.phone.coexistenceShare), rxHigh: seconds * duty.high,
                        txHigh: tx * Self.requestsPerResponseHigh)
    }

    public func scanCost(_ s: ScanSession, duration seconds: Double) -> RadioCost {
        let t = scanTime(s, duration: seconds)
        let p = profile.phone
        return RadioCost(radioSeconds: t.radio.total, chargeMC: phoneCharge(t.radio),
                         lowMC: p.rxMilliamps * t.rxLow + p.txMilliamps * t.radio.txSeconds,
                         highMC: p.rxMilliamps * t.rxHigh + p.txMilliamps * t.txHigh)
    }

    /// What scanning at `s`'s duty cycle costs over `seconds` (a counterfactual: the scan stopped earlier).
    public func scanListening(_ s: ScanSession, seconds: Double) -> RadioCost {
        var stripped = s
        stripped.scanResponses = 0
        return scanCost(stripped, duration: seconds)
    }

    // MARK: Connections (§3.3)

    /// One phase's events and packets.
    public struct LinkTime: Sendable {
        /// Connection events the central opens: D / CI.
        public var events: Double
        /// Exchanges: at least one per event and one per data PDU each way, at most every data PDU in an
        /// exchange of its own.
        public var exchangesLow: Double
        public var exchangesHigh: Double
        /// The phone's radio time at the low and high exchange counts.
        public var phoneLow: RadioTime
        public var phoneHigh: RadioTime
        /// Events the peripheral listens to: every event, or one in 1 + latency (but every event with data).
        public var peripheralEventsLow: Double
        public var peripheralEventsHigh: Double
        /// Payload air time each way (for the peripheral's per-byte term).
        public var dataAirSent: Double
        public var dataAirReceived: Double
    }

    static func phy(_ v: UInt8) -> AirTime.PHY { AirTime.PHY(rawValue: v) ?? .le1M }

    /// The connection interval's range (Core Vol 6 Part B §4.5.1), seconds: from 375 µs with Shorter Connection
    /// Intervals (Core 6.2; 7.5 ms before) to 4 s.
    static let shortestInterval = 0.000375, longestInterval = 4.0

    /// The phone's view of a phase lasting `seconds` with `parameters`, `sent` and `received` traffic.
    public func linkTime(seconds: Double, parameters: ConnectionParameters?, txPHY: UInt8, rxPHY: UInt8,
                         sent: LinkLayerTraffic, received: LinkLayerTraffic, encrypted: Bool,
                         phoneIsCentral: Bool, channelSoundingSeconds: Double = 0) -> LinkTime {
        // Unseen parameters: a common 30 ms; values outside the spec's 375 µs–4 s (a damaged event) are clamped.
        let interval = min(max((parameters?.intervalMilliseconds ?? 30) / 1000, Self.shortestInterval), Self.longestInterval)
        let latency = Double(parameters?.latency ?? 0)
        let dc = Double(phoneIsCentral ? sent.pdus : received.pdus)  // central → peripheral
        let dp = Double(phoneIsCentral ? received.pdus : sent.pdus)
        // The events that happen: a subrated link wakes once in `factor` intervals, and after data for
        // `continuation` more at the base interval (Core 5.3 Vol 6 Part B §4.5.1), never more than every interval.
        let factor = Double(max(1, parameters?.subrateFactor ?? 1))
        let continuation = min(Double(parameters?.continuationNumber ?? 0), factor - 1)
        let n = min(max(0, seconds / (interval * factor)) + continuation * max(dc, dp), max(0, seconds / interval))
        let eLow = max(n, dc, dp), eHigh = n + dc + dp
        let tx = Self.phy(txPHY), rx = Self.phy(rxPHY)
        let dataSent = AirTime.dataPDUs(sent.pdus, bytes: sent.bytes, phy: tx, encrypted: encrypted)
        let dataReceived = AirTime.dataPDUs(received.pdus, bytes: received.bytes, phy: rx, encrypted: encrypted)
        let guardTime = profile.phone.listenGuardSeconds
        func phone(_ e: Double) -> RadioTime {
            // Every exchange: one packet each way, empty where no data went.
            let ownPDUs = Double(sent.pdus), peerPDUs = Double(received.pdus)
            // Channel Sounding: the radio alternates sending and receiving tones and packets for the subevent.
            return RadioTime(txSeconds: dataSent + max(0, e - ownPDUs) * AirTime.emptyPDU(phy: tx) + n * profile.phone.eventTxOverheadSeconds
                                 + channelSoundingSeconds / 2,
                             rxSeconds: dataReceived + max(0, e - peerPDUs) * AirTime.emptyPDU(phy: rx) + e * guardTime
                                 + n * profile.phone.eventRxOverheadSeconds + channelSoundingSeconds / 2)
        }
        let dataEvents = max(dc, dp)
        return LinkTime(events: n, exchangesLow: eLow, exchangesHigh: eHigh, phoneLow: phone(eLow), phoneHigh: phone(eHigh),
                        peripheralEventsLow: min(n, max((n / (1 + latency)).rounded(.up), dataEvents)),
                        peripheralEventsHigh: max(n, dataEvents),
                        dataAirSent: dataSent, dataAirReceived: dataReceived)
    }

    public func phoneCost(_ t: LinkTime) -> RadioCost {
        let q = profile.phone.eventOverheadMicrocoulombs / 1000
        let low = phoneCharge(t.phoneLow) + t.exchangesLow * q
        let high = phoneCharge(t.phoneHigh) + t.exchangesHigh * q
        return RadioCost(radioSeconds: t.phoneLow.total, chargeMC: low, lowMC: low, highMC: high)
    }

    /// The peripheral (its side of the link, priced with the peripheral profile): a fixed charge per event
    /// listened, the data bytes' air time beyond an empty packet, and sleep between (§3.3).
    public func peripheralCost(_ t: LinkTime, seconds: Double, peripheralSent: Double, peripheralReceived: Double) -> RadioCost {
        let p = profile.peripheral
        let bytes = peripheralSent * p.txMilliamps + peripheralReceived * p.rxMilliamps
        let sleep = p.sleepMicroamps / 1000 * seconds
        func charge(_ events: Double, _ perEvent: Double) -> Double { events * perEvent / 1000 + bytes + sleep }
        let radio = t.peripheralEventsLow * 2 * AirTime.emptyPDU() + peripheralSent + peripheralReceived
        return RadioCost(radioSeconds: radio, chargeMC: charge(t.peripheralEventsLow, p.emptyEventMicrocoulombs),
                         lowMC: charge(t.peripheralEventsLow, p.emptyEventLowMicrocoulombs),
                         highMC: charge(t.peripheralEventsHigh, p.emptyEventHighMicrocoulombs))
    }

    /// Idle connection events of `seconds` at `parameters`: what a link costs when nothing is sent.
    public func idleLink(seconds: Double, parameters: ConnectionParameters?, phoneIsCentral: Bool = true)
        -> (phone: RadioCost, peripheral: RadioCost) {
        let t = linkTime(seconds: seconds, parameters: parameters, txPHY: LinkPhase.phy1M, rxPHY: LinkPhase.phy1M,
                         sent: LinkLayerTraffic(), received: LinkLayerTraffic(), encrypted: false, phoneIsCentral: phoneIsCentral)
        return (phoneCost(t), peripheralCost(t, seconds: seconds, peripheralSent: 0, peripheralReceived: 0))
    }

    /// `exchanges` request/response pairs of `bytes` each way on a link: the packets' air time (the events they
    /// ride on are open anyway), for both sides.
    public func transactions(_ exchanges: Int, requestBytes: Int, responseBytes: Int, encrypted: Bool = false)
        -> (phone: RadioCost, peripheral: RadioCost) {
        let n = Double(exchanges)
        let request = AirTime.dataPDU(payload: requestBytes, encrypted: encrypted)
        let response = AirTime.dataPDU(payload: responseBytes, encrypted: encrypted)
        let empty = AirTime.emptyPDU()
        // The request's event: request out, empty back; the response's: empty out, response back.
        let phoneTime = RadioTime(txSeconds: n * (request + empty), rxSeconds: n * (response + empty))
        let phone = RadioCost(radioSeconds: phoneTime.total, chargeMC: phoneCharge(phoneTime), lowMC: phoneCharge(phoneTime) / 2,
                              highMC: phoneCharge(phoneTime))
        let p = profile.peripheral
        // The peripheral may have to wake for the response's event (latency unused): an event each, at most.
        let perEvent = p.emptyEventMicrocoulombs / 1000
        let bytes = n * ((request - empty) * p.rxMilliamps + (response - empty) * p.txMilliamps)
        let peripheral = RadioCost(radioSeconds: n * (request + response + 2 * empty), chargeMC: bytes + n * perEvent,
                                   lowMC: bytes, highMC: bytes + 2 * n * p.emptyEventHighMicrocoulombs / 1000)
        return (phone, peripheral)
    }

    // MARK: BR/EDR page and inquiry scan

    /// The receiver's time listening for pages and inquiries over `seconds` (nil: that scan off).
    public func classicScanTime(page: ClassicScanActivity?, inquiry: ClassicScanActivity?, seconds: Double) -> RadioTime {
        RadioTime(txSeconds: 0, rxSeconds: seconds * min(1, (page?.dutyCycle ?? 0) + (inquiry?.dutyCycle ?? 0)))
    }

    public func classicScanCost(_ t: RadioTime) -> RadioCost {
        let charge = phoneCharge(t)
        // Coexistence may take windows from it, as from an LE scan.
        return RadioCost(radioSeconds: t.total, chargeMC: charge, lowMC: charge * (1 - profile.phone.coexistenceShare),
                         highMC: charge)
    }

    // MARK: Advertising (§3.4)

    /// Mean delay the controller adds to each advertising interval (advDelay, 0–10 ms).
    static let meanAdvertisingDelay = 0.005
    static let advertisingChannels = 3.0

    /// Own advertising (the phone advertises): three PDUs per event, and listening for requests after each
    /// when connectable or scannable.
    /// The radio time of own advertising for `seconds`: each event's PDU on the advertising channels, and for a
    /// connectable or scannable set the listening after each for a request.
    public func advertisingTime(_ a: AdvertisingSession, seconds: Double) -> RadioTime {
        let interval = ((a.intervalMinimumMilliseconds ?? 100) + (a.intervalMaximumMilliseconds ?? a.intervalMinimumMilliseconds ?? 100)) / 2000
        let events = seconds / (interval + Self.meanAdvertisingDelay)
        let tx = events * Self.advertisingChannels * AirTime.advertisingPDU(data: a.advertisingData.count)
        let rx = a.isConnectable || a.isScannable
            ? events * Self.advertisingChannels * (AirTime.interFrameSpace + AirTime.seconds(bytes: AirTime.scanRequestBytes)) : 0
        return RadioTime(txSeconds: tx, rxSeconds: rx)
    }

    public func advertisingCost(_ a: AdvertisingSession, seconds: Double) -> RadioCost {
        let interval = ((a.intervalMinimumMilliseconds ?? 100) + (a.intervalMaximumMilliseconds ?? a.intervalMinimumMilliseconds ?? 100)) / 2000
        let t = advertisingTime(a, seconds: seconds)
        let charge = phoneCharge(t)
        // Interval known only as a range: the estimate is its middle.
        let fastest = (a.intervalMinimumMilliseconds ?? 100) / 1000, slowest = (a.intervalMaximumMilliseconds ?? 100) / 1000
        let scale = { (i: Double) in (interval + Self.meanAdvertisingDelay) / (i + Self.meanAdvertisingDelay) }
        return RadioCost(radioSeconds: t.total, chargeMC: charge, lowMC: charge * scale(slowest), highMC: charge * scale(fastest))
    }
}
