/// How long BR/EDR baseband packets last on air [Core Vol 2 Part B §2.2, §6.4–6.7]: every packet begins with the
/// 72-bit access code and the 54-bit header at 1 Mbit/s (126 µs: a POLL or NULL is nothing more); an EDR packet
/// adds a guard time, a synchronisation sequence and a trailer around a payload at 2 or 3 Mbit/s. The table the
/// BR/EDR cost model prices packets, polls, sniff anchors, paging and inquiry with.
public enum BREDRAirTime {
    /// One baseband slot (Core Vol 2 Part B §2.2.1).
    public static let slotSeconds = 625e-6
    /// An ID packet: the 68-bit access code alone, what paging and inquiry transmit (§6.5.1.1).
    public static let idPacketSeconds = 68e-6
    /// Access code 72 bits + packet header 54 bits at 1 Mbit/s: a POLL or NULL packet whole (§6.5.1.2–3).
    public static let headerSeconds = 126e-6
    /// EDR: guard 5 µs, synchronisation sequence 11 µs and trailer 2 µs around the 2/3 Mbit/s payload (§6.7).
    public static let edrOverheadSeconds = 18e-6
    /// ACL payload header (1 byte on 1-slot basic-rate packets, 2 on the others: taken as 2) and CRC (2 bytes).
    public static let aclPayloadOverheadBytes = 4
    /// eSCO payload CRC (eSCO packets have no payload header; SCO HV packets have neither).
    public static let escoCRCBytes = 2

    /// A baseband packet type: its maximum user payload, bit rate of the payload and slots (Core Vol 2 Part B
    /// §6.5, tables 6.9–6.10).
    public struct PacketType: Sendable, Equatable {
        public var name: String
        public var maximumPayload: Int
        /// Payload bits per µs: 1 (basic rate, GFSK), 2 (π/4-DQPSK), 3 (8DPSK).
        public var megabitsPerSecond: Int
        public var slots: Int

        /// Seconds on air carrying `payload` bytes (up to `maximumPayload`).
        public func seconds(payload: Int) -> Double {
            BREDRAirTime.aclSeconds(payload: payload, megabitsPerSecond: megabitsPerSecond)
        }
    }

    /// The ACL packet types without FEC (DM packets carry 2/3 as much in the same time) [Core Vol 2 Part B table 6.10].
    public static let aclTypes: [PacketType] = [
        PacketType(name: "DH1", maximumPayload: 27, megabitsPerSecond: 1, slots: 1),
        PacketType(name: "DH3", maximumPayload: 183, megabitsPerSecond: 1, slots: 3),
        PacketType(name: "DH5", maximumPayload: 339, megabitsPerSecond: 1, slots: 5),
        PacketType(name: "2-DH1", maximumPayload: 54, megabitsPerSecond: 2, slots: 1),
        PacketType(name: "2-DH3", maximumPayload: 367, megabitsPerSecond: 2, slots: 3),
        PacketType(name: "2-DH5", maximumPayload: 679, megabitsPerSecond: 2, slots: 5),
        PacketType(name: "3-DH1", maximumPayload: 83, megabitsPerSecond: 3, slots: 1),
        PacketType(name: "3-DH3", maximumPayload: 552, megabitsPerSecond: 3, slots: 3),
        PacketType(name: "3-DH5", maximumPayload: 1021, megabitsPerSecond: 3, slots: 5),
    ]

    /// The packets an ACL link is priced with: π/4-DQPSK (2-DHx), which every EDR controller supports and phones
    /// use with any EDR peer; 8DPSK needs a clean channel, and basic rate only a pre-EDR peer. An L2CAP PDU goes as
    /// ⌈bytes / 679⌉ packets, each as long as its payload (a short one in a 2-DH1, whose time is as per byte).
    public static let aclPacket = aclTypes[5]
    public static var aclPacketPayload: Int { aclPacket.maximumPayload }

    /// Seconds on air of an ACL packet with `payload` user bytes at `megabitsPerSecond`.
    public static func aclSeconds(payload: Int, megabitsPerSecond: Int) -> Double {
        let bits = Double(8 * (payload + aclPayloadOverheadBytes))
        return megabitsPerSecond == 1 ? headerSeconds + bits * 1e-6
            : headerSeconds + edrOverheadSeconds + bits / Double(megabitsPerSecond) * 1e-6
    }

    /// `packets` ACL packets carrying `bytes` user bytes in all, at the priced packet type's rate.
    public static func aclSeconds(packets: Int, bytes: Int) -> Double {
        guard packets > 0 else { return 0 }
        let rate = Double(aclPacket.megabitsPerSecond)
        return Double(packets) * (headerSeconds + edrOverheadSeconds + Double(8 * aclPayloadOverheadBytes) / rate * 1e-6)
            + Double(8 * bytes) / rate * 1e-6
    }

    /// One synchronous packet of `bytes`: SCO HV packets (30 bytes at most, no CRC) at 1 Mbit/s, eSCO EV3 (30) at
    /// 1 Mbit/s with a CRC, and longer eSCO packets as 2-EV3/2-EV5 at 2 Mbit/s (mSBC's 60 bytes).
    public static func synchronousSeconds(bytes: Int, extended: Bool) -> Double {
        if !extended { return headerSeconds + Double(8 * bytes) * 1e-6 }
        if bytes <= scoBasicRatePayload { return headerSeconds + Double(8 * (bytes + escoCRCBytes)) * 1e-6 }
        return headerSeconds + edrOverheadSeconds + Double(8 * (bytes + escoCRCBytes)) / 2 * 1e-6
    }

    /// HV3/EV3's payload: the longest synchronous packet sent at basic rate.
    public static let scoBasicRatePayload = 30
}
