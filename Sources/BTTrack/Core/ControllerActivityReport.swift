import BTWire
import BTCapture
import BTDecode

/// One answer to Android's "LE Get Controller Activity Energy Info" (vendor command `0xFD59`, AOSP
/// `btm_ble_cont_energy.cc`; ENERGY.md §2.1): the controller's own tx, rx and idle time and energy counters,
/// which the stack reads now and then for BatteryStats. Each answer counts since the previous read: what the radio
/// really did in that interval, the energy model's measured truth.
public struct ControllerActivityReport: Sendable, Equatable {
    public static let opcode = HCIOpcode(rawValue: 0xFD59)
    /// Reports kept per capture: the stack reads the counters every few minutes, so only a corrupt capture
    /// has more.
    public static let maximumKept = 10_000

    public var at: RecordRef
    /// Since the stack's previous read (AOSP's controllers reset the counters when read), in milliseconds.
    public var txMilliseconds: UInt32
    public var rxMilliseconds: UInt32
    public var idleMilliseconds: UInt32
    /// Energy used, in the controller's unit (AOSP: mA × V × ms).
    public var energy: UInt32

    /// Consecutive reads of one controller, each with the read before it: the second counts the interval between
    /// them (AOSP resets the counters on read); the first read's interval began before the capture.
    public static func intervals(_ reports: [ControllerActivityReport]) -> [(previous: ControllerActivityReport, report: ControllerActivityReport)] {
        zip(reports, reports.dropFirst()).filter { a, b in b.at.controller == a.at.controller && b.at.timestamp > a.at.timestamp }
            .map { (previous: $0, report: $1) }
    }

    /// Return parameters: status, then total tx time, rx time, idle time and energy, u32 little-endian each.
    public init?(returnParameters p: UnsafeRawBufferPointer, at: RecordRef) {
        var r = ByteReader(p)
        guard let status = r.readU8(), status == HCIStatus.success.rawValue,
              let tx = r.readU32(), let rx = r.readU32(), let idle = r.readU32(), let energy = r.readU32()
        else { return nil }
        self.at = at
        txMilliseconds = tx
        rxMilliseconds = rx
        idleMilliseconds = idle
        self.energy = energy
    }
}
