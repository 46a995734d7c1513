import BTWire
import BTCapture
import BTDecode

/// What HCI shows of a BR/EDR link's schedule over a stretch of it: the ACL link's mode (Mode Change, Core Vol 4
/// Part E §7.7.20) with its interval and sniff subrating (§7.7.37), or a synchronous link's reserved slots
/// (Synchronous Connection Complete, §7.7.35). What the radio-time model prices a BR/EDR phase by.
public struct ClassicLinkMode: Sendable, Equatable {
    /// Current Mode of Mode Change (Core Vol 4 Part E §7.7.20).
    public enum Mode: UInt8, Sendable {
        case active = 0, hold = 1, sniff = 2, park = 3
    }

    public var mode = Mode.active
    /// Sniff interval, hold interval or beacon interval (park), in baseband slots; 0 in active mode.
    public var intervalSlots: UInt16 = 0
    /// Sniff attempt: master-to-slave slots the peripheral listens in at each sniff anchor (HCI Sniff Mode);
    /// nil: the capture did not show the command.
    public var attemptSlots: UInt16?
    /// Sniff subrating (Sniff Subrating event): the anchors the phone wakes at are this many sniff intervals apart
    /// once the link has been idle for the subrating timeout. 1: not subrated.
    public var subrate: UInt16 = 1
    /// A synchronous (SCO/eSCO) link's reserved slots; nil on an ACL link.
    public var synchronous: SynchronousSlots?
    /// The phone is the link's central (master): it paged, and no Role Change said otherwise. Kept here, not in
    /// `Connection.role`, which the rules read as an LE link's role.
    public var isCentral = true

    public init(mode: Mode = .active, intervalSlots: UInt16 = 0) {
        self.mode = mode
        self.intervalSlots = intervalSlots
    }

    /// "active", "sniff 498.75 ms", "eSCO every 7.5 ms": what a report names a phase by.
    public var name: String {
        if let s = synchronous {
            return "\(s.isExtended ? "eSCO" : "SCO") every \(Format.ms(Double(s.intervalSlots) * Self.slotMilliseconds)) ms"
        }
        let interval = Format.ms(Double(intervalSlots) * Self.slotMilliseconds)
        return switch mode {
        case .active: "active"
        case .hold: "hold \(interval) ms"
        case .sniff: "sniff \(interval) ms" + (subrate > 1 ? ", subrated ×\(subrate)" : "")
        case .park: "park, beacon every \(interval) ms"
        }
    }

    /// One baseband slot (Core Vol 2 Part B §2.2.1).
    public static let slotMilliseconds = 0.625

    /// What names the mode, in 8 bytes: kind (the mode, or 4 SCO, 5 eSCO), interval (T_eSCO for synchronous
    /// links) and subrate. A priced phase keeps this, not the whole mode (`EnergyReport.LinkTable.PhaseRow`).
    public var packed: UInt64 {
        let kind: UInt64 = synchronous.map { $0.isExtended ? Self.escoKind : Self.scoKind } ?? UInt64(mode.rawValue)
        let interval = UInt64(synchronous.map { UInt16($0.intervalSlots) } ?? intervalSlots)
        return kind | interval << 8 | UInt64(subrate) << 24
    }

    /// The mode as `packed` holds it (for its name: attempt and packet lengths are not kept).
    public init(packed: UInt64) {
        let kind = packed & 0xFF, interval = UInt16(truncatingIfNeeded: packed >> 8)
        subrate = max(1, UInt16(truncatingIfNeeded: packed >> 24))
        if kind == Self.scoKind || kind == Self.escoKind {
            synchronous = SynchronousSlots(isExtended: kind == Self.escoKind, intervalSlots: UInt8(truncatingIfNeeded: interval),
                                           windowSlots: 0, rxPacketBytes: 0, txPacketBytes: 0, airMode: 0)
        } else {
            mode = Mode(rawValue: UInt8(kind)) ?? .active
            intervalSlots = interval
        }
    }

    static let scoKind: UInt64 = 4, escoKind: UInt64 = 5
}

/// An SCO or eSCO link's schedule (Synchronous Connection Complete, Core Vol 4 Part E §7.7.35): a packet each
/// way every `intervalSlots` (T_eSCO), retransmissions allowed in `windowSlots` (W_eSCO).
public struct SynchronousSlots: Sendable, Equatable {
    /// Link type 0x02 (eSCO); 0x00 is SCO.
    public var isExtended: Bool
    /// T_eSCO (slots); legacy SCO: T_SCO.
    public var intervalSlots: UInt8
    /// W_eSCO (slots): retransmissions, which HCI does not show.
    public var windowSlots: UInt8
    /// Bytes of each packet each way (the event's RX/TX packet length).
    public var rxPacketBytes: UInt16
    public var txPacketBytes: UInt16
    /// The air coding (µ-law, A-law, CVSD, transparent).
    public var airMode: UInt8

    public init(isExtended: Bool, intervalSlots: UInt8, windowSlots: UInt8, rxPacketBytes: UInt16, txPacketBytes: UInt16,
                airMode: UInt8) {
        self.isExtended = isExtended
        self.intervalSlots = intervalSlots
        self.windowSlots = windowSlots
        self.rxPacketBytes = rxPacketBytes
        self.txPacketBytes = txPacketBytes
        self.airMode = airMode
    }

    /// A link reported by Connection Complete with link type SCO (no schedule in the event): HV3, a 30-byte
    /// packet every 6 slots, the only packet type every controller supports for SCO (Core Vol 2 Part B §6.5.2).
    public static let legacySCO = SynchronousSlots(isExtended: false, intervalSlots: 6, windowSlots: 0, rxPacketBytes: 30,
                                                   txPacketBytes: 30, airMode: 2)

    /// The event's parameters after status, handle and address: link type, T_eSCO, W_eSCO, RX and TX packet
    /// lengths, air mode.
    public init?(event p: UnsafeRawBufferPointer) {
        var r = ByteReader(p)
        guard r.readU8() != nil, r.readU16() != nil, r.readAddress() != nil, let type = r.readU8(), let interval = r.readU8(),
              let window = r.readU8(), let rx = r.readU16(), let tx = r.readU16(), let air = r.readU8()
        else { return nil }
        self.init(isExtended: type == 0x02, intervalSlots: interval, windowSlots: window, rxPacketBytes: rx, txPacketBytes: tx,
                  airMode: air)
    }
}
