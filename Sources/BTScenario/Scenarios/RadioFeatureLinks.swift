import BTWire

/// Links that show what today's controllers report and do to an LE link's radio time, each one idle so its
/// radio time can be counted by hand: Bluetooth Quality Reports (link quality with heavy retransmissions, and the
/// Energy Monitor), connection subrating, a Shorter Connection Interval, and Channel Sounding. Written on demand
/// (`btlens-scenario write NAME`); not among the samples.
public enum RadioFeatureLinks {
    public static let handle: UInt16 = 0x0040
    public static let peer = SampleDevices.enviroSensor
    static let scanInterval = HCIUnits.slots(microseconds: Micros.ms(60))
    static let timeout = HCIUnits.supervisionTimeout(microseconds: Micros.seconds(5))

    /// Opens the link at `intervalMicroseconds` (a multiple of 1.25 ms).
    static func open(_ s: HCIScript, intervalMicroseconds: Int64) -> LEConnection {
        s.setUpController()
        let parameters = ConnectionParameters.interval(minMicroseconds: intervalMicroseconds, maxMicroseconds: intervalMicroseconds,
                                                       timeoutMicroseconds: Micros.seconds(5))
        return s.connect(to: peer, handle: handle, parameters: parameters, scanInterval: scanInterval, scanWindow: scanInterval)
    }

    // MARK: quality-report-link

    public static let qualityName = "quality-report-link"
    /// 30 ms, idle for `qualityReports` × `qualityPeriodSeconds`.
    public static let qualityIntervalMicroseconds: Int64 = 30_000
    public static let qualityReports = 6
    public static let qualityPeriodSeconds: Int64 = 10
    /// The report (1-based) that shows heavy retransmissions: 150 of the ~333 packets sent (45 %).
    public static let heavyReport = 3
    public static let heavyRetransmissions: UInt32 = 150
    /// Every second link-quality report is followed by an Energy Monitor over the 20 s before it, whose LE
    /// times are the idle link's by hand: an empty packet each way per event (80 µs at 1M) and the receiver's
    /// 166 µs guard (ENERGY.md §3.3).
    public static let energyPeriodMilliseconds: UInt32 = 20_000
    public static let emptyPacketMicroseconds = 80.0, listenGuardMicroseconds = 166.0

    public static let qualityScenario = Scenario(
        name: qualityName,
        summary: "an idle 30 ms link with Bluetooth Quality Reports: link quality every 10 s (one with heavy retransmissions), Energy Monitor every 20 s",
        seed: 0x4251_5231, body: runQuality)

    static func runQuality(_ s: HCIScript) {
        let link = open(s, intervalMicroseconds: qualityIntervalMicroseconds)
        let eventsPerReport = Double(qualityPeriodSeconds * 1_000_000) / Double(qualityIntervalMicroseconds)
        for k in 1...qualityReports {
            s.wait(seconds: qualityPeriodSeconds)
            let heavy = k == heavyReport
            s.emit(.qualityReportLink(handle: link.handle, peer: peer.address, rssi: heavy ? -88 : -62,
                                      txPackets: UInt32(eventsPerReport), retransmissions: heavy ? heavyRetransmissions : 2))
            if k % 2 == 0 {
                let events = Double(energyPeriodMilliseconds) / (Double(qualityIntervalMicroseconds) / 1000)
                let tx = events * emptyPacketMicroseconds / 1000
                let rx = events * (emptyPacketMicroseconds + listenGuardMicroseconds) / 1000
                s.emit(.qualityReportEnergy(averageMilliamps: 3, periodMilliseconds: energyPeriodMilliseconds,
                                            leTxMilliseconds: UInt32(tx.rounded()), leRxMilliseconds: UInt32(rx.rounded()),
                                            leTxCount: UInt32(events), leRxCount: UInt32(events)))
            }
        }
        s.disconnect(link)
    }

    // MARK: subrated-link

    public static let subratedName = "subrated-link"
    /// 7.5 ms for 2 s, then subrated ×16 (effective 120 ms) for 60 s: idle-fast-interval must judge 120 ms.
    public static let subratedBaseMicroseconds: Int64 = 7_500
    public static let subratedBeforeSeconds: Int64 = 2
    public static let subrateFactor: UInt16 = 16
    public static let subratedSeconds: Int64 = 60

    public static let subratedScenario = Scenario(
        name: subratedName,
        summary: "a 7.5 ms link subrated ×16 (LE Subrate Request, LE Subrate Change): idle at an effective 120 ms for 60 s",
        seed: 0x5355_4252, body: runSubrated)

    static func runSubrated(_ s: HCIScript) {
        let link = open(s, intervalMicroseconds: subratedBaseMicroseconds)
        s.advance(toElapsed: s.elapsed + Micros.seconds(subratedBeforeSeconds) - Micros.ms(1))
        s.commandStatus(.leSubrateRequest(handle: link.handle, factor: subrateFactor, continuation: 0, supervisionTimeout: timeout))
        let changeAt = s.elapsed
        s.emit(.leSubrateChange(handle: link.handle, factor: subrateFactor, latency: 0, continuation: 0, supervisionTimeout: timeout))
        s.advance(toElapsed: changeAt + Micros.seconds(subratedSeconds))
        s.disconnect(link)
    }

    // MARK: short-interval-link

    public static let shortIntervalName = "short-interval-link"
    /// 30 ms for 1 s, then a Connection Rate Change to 2.5 ms (20 × 125 µs) for 10 s.
    public static let shortIntervalUnits: UInt16 = 20
    public static let shortIntervalSeconds: Int64 = 10

    public static let shortIntervalScenario = Scenario(
        name: shortIntervalName,
        summary: "a link moved to a 2.5 ms Shorter Connection Interval (LE Connection Rate Change) and left idle for 10 s",
        seed: 0x5343_4931, body: runShortInterval)

    static func runShortInterval(_ s: HCIScript) {
        let link = open(s, intervalMicroseconds: 30_000)
        s.wait(seconds: 1)
        let changeAt = s.elapsed
        s.emit(.leConnectionRateChange(handle: link.handle, interval125: shortIntervalUnits, factor: 1, latency: 0,
                                       continuation: 0, supervisionTimeout: timeout))
        s.advance(toElapsed: changeAt + Micros.seconds(shortIntervalSeconds))
        s.disconnect(link)
    }

    // MARK: channel-sounding-link

    public static let channelSoundingName = "channel-sounding-link"
    /// 50 Channel Sounding subevents of 5 ms, one every 200 ms, on a 30 ms link.
    public static let channelSoundingSubevents = 50
    public static let channelSoundingSubeventMicroseconds: UInt32 = 5_000

    public static let channelSoundingScenario = Scenario(
        name: channelSoundingName,
        summary: "a 30 ms link ranging with Channel Sounding: 50 subevents of 5 ms, one every 200 ms",
        seed: 0x4353_3630, body: runChannelSounding)

    static func runChannelSounding(_ s: HCIScript) {
        let link = open(s, intervalMicroseconds: 30_000)
        s.wait(seconds: 1)
        s.emit(.leChannelSoundingEnabled(handle: link.handle, subeventMicroseconds: channelSoundingSubeventMicroseconds,
                                         procedures: UInt16(channelSoundingSubevents)))
        for k in 0..<channelSoundingSubevents {
            s.wait(ms: 200)
            s.emit(.leChannelSoundingSubeventResult(handle: link.handle, procedure: UInt16(k)))
        }
        s.wait(seconds: 1)
        s.disconnect(link)
    }

    public static let all = [qualityScenario, subratedScenario, shortIntervalScenario, channelSoundingScenario]
}
