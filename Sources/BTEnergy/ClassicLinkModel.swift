import BTWire
import BTTrack

/// BR/EDR radio time (docs/ENERGY-COUNTERS.md, "BR/EDR"): ACL links by mode and traffic, SCO/eSCO slots, paging
/// and inquiry, from what HCI shows of them and the Core specification's slot figures (`BREDRAirTime`).
extension EnergyModel {
    /// The figures BR/EDR time is priced with, each from the Core specification (Vol 2 Part B).
    public enum ClassicFigures {
        /// T_poll: an active link's central polls its peripheral at least this often; 40 slots (25 ms) is the
        /// default (§8.6.1, LMP's default T_poll), which phones keep.
        public static let pollIntervalSlots = 40.0
        /// The receiver opens this early and late around each expected packet (±10 µs uncertainty window, §2.4.4).
        public static let receiveUncertaintySeconds = 20e-6
        /// A peripheral in sniff listens for the access code in each further master-to-slave slot of its attempt;
        /// with no packet it closes after the access code's time and the uncertainty window. (In active mode the
        /// peripheral is priced listening at each poll only: §8.6.1 lets it listen in every master-to-slave slot,
        /// 7 % of the time, but the counters of the captures with a phone as peripheral show none of it.)
        public static let accessCodeSearchSeconds = 72e-6 + receiveUncertaintySeconds
        /// The sniff attempt when the capture does not show the Sniff Mode command: one slot, the least.
        public static let defaultSniffAttemptSlots: UInt16 = 1
        /// Paging and inquiry (§8.3.2, §8.4.2): every transmit slot carries 2 ID packets on two frequencies, and the
        /// receive slot after it listens on the two matching response frequencies for half a slot each: 2 ID
        /// packets per two slots, listening half the time.
        public static let trainIDPacketsPerTwoSlots = 2.0
        public static let trainListenShare = 0.5
    }

    /// The phone's radio time on a BR/EDR phase of `seconds` in `mode` with `sent` and `received` baseband packets
    /// (`LinkLayerTraffic` counted at `BREDRAirTime.aclPacket`'s size). Active: an exchange per poll, data packets
    /// replacing POLL and NULL; sniff: an exchange per (subrated) anchor; hold: data only; park: a beacon per
    /// interval. Synchronous links: a packet each way every T_eSCO (retransmissions in W_eSCO are not shown).
    public func classicLinkTime(seconds: Double, mode: ClassicLinkMode?, sent: LinkLayerTraffic, received: LinkLayerTraffic,
                                phoneIsCentral: Bool) -> RadioTime {
        let m = mode ?? ClassicLinkMode()
        let slot = BREDRAirTime.slotSeconds, uncertainty = ClassicFigures.receiveUncertaintySeconds
        let span = max(0, seconds)
        if let s = m.synchronous {
            let slots = max(1, Double(s.intervalSlots))
            let n = span / (slots * slot)
            return RadioTime(txSeconds: n * BREDRAirTime.synchronousSeconds(bytes: Int(s.txPacketBytes), extended: s.isExtended),
                             rxSeconds: n * (BREDRAirTime.synchronousSeconds(bytes: Int(s.rxPacketBytes), extended: s.isExtended)
                                 + uncertainty))
        }
        // Anchors (polls, sniff anchors, beacons) in the phase.
        var anchors: Double
        var listening = 0.0
        switch m.mode {
        case .active:
            anchors = span / (ClassicFigures.pollIntervalSlots * slot)
        case .sniff:
            let interval = Double(max(1, m.intervalSlots)) * Double(max(1, m.subrate))
            anchors = span / (interval * slot)
            if !phoneIsCentral {
                let attempt = Double(max(1, m.attemptSlots ?? ClassicFigures.defaultSniffAttemptSlots))
                listening = anchors * (attempt - 1) * ClassicFigures.accessCodeSearchSeconds
            }
        case .park:
            anchors = span / (Double(max(1, m.intervalSlots)) * slot)
        case .hold:
            anchors = 0
        }
        let ownPackets = Double(sent.pdus), peerPackets = Double(received.pdus)
        // Every exchange: one packet each way, POLL or NULL where no data went.
        let exchanges = max(anchors, ownPackets, peerPackets)
        let poll = BREDRAirTime.headerSeconds
        return RadioTime(txSeconds: BREDRAirTime.aclSeconds(packets: sent.pdus, bytes: sent.bytes) + (exchanges - ownPackets) * poll,
                         rxSeconds: BREDRAirTime.aclSeconds(packets: received.pdus, bytes: received.bytes)
                             + (exchanges - peerPackets) * poll + exchanges * uncertainty + listening)
    }

    /// Paging (Create Connection until Connection Complete) or inquiry for `seconds`: the ID-packet train, and
    /// listening for a response half the time.
    public func classicTrainTime(seconds: Double) -> RadioTime {
        let s = max(0, seconds)
        let frames = s / (2 * BREDRAirTime.slotSeconds)
        return RadioTime(txSeconds: frames * ClassicFigures.trainIDPacketsPerTwoSlots * BREDRAirTime.idPacketSeconds,
                         rxSeconds: s * ClassicFigures.trainListenShare)
    }

    /// The phone's charge for BR/EDR radio time at the profile's currents; the low end lets coexistence (Wi-Fi on
    /// the same antenna) take its share of the listening, as for a scan.
    public func classicCost(_ t: RadioTime) -> RadioCost {
        let charge = phoneCharge(t)
        return RadioCost(radioSeconds: t.total, chargeMC: charge,
                         lowMC: profile.phone.txMilliamps * t.txSeconds
                             + profile.phone.rxMilliamps * t.rxSeconds * (1 - profile.phone.coexistenceShare),
                         highMC: charge)
    }
}
