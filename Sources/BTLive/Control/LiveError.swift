#if canImport(Glibc)
import Glibc
#endif

/// Why live capture cannot start. Each code is a distinct exit status of `btlens live` (README, man page), and
/// each message is one line that names Bluetooth and ends with what to do about it.
public struct LiveError: Error, Sendable, CustomStringConvertible, Equatable {
    public enum Code: String, Sendable {
        /// socket(AF_BLUETOOTH) failed with EAFNOSUPPORT (or the kernel lacks the monitor channel).
        case noBluetooth = "no-bluetooth"
        /// EPERM/EACCES: the monitor channel needs CAP_NET_RAW.
        case permission = "permission"
        /// No NEW_INDEX within the start-up wait, or not the one `--index` asked for.
        case noController = "no-controller"
        /// Reading the socket failed after it was open.
        case readFailed = "read-failed"
    }

    public var code: Code
    /// What happened, without the hint.
    public var message: String
    /// What to do about it.
    public var hint: String

    public init(_ code: Code, _ message: String, hint: String) {
        self.code = code
        self.message = message
        self.hint = hint
    }

    /// The one-line form: "cause; hint: …".
    public var description: String { hint.isEmpty ? message : "\(message); hint: \(hint)" }

    /// Equality compares the code only, so tests need not match wording.
    public static func == (a: LiveError, b: LiveError) -> Bool { a.code == b.code }

    /// Maps a socket(2)/bind(2) errno of the monitor channel to the error users can act on.
    static func opening(_ call: String, errno e: Int32) -> LiveError {
        let cause = "\(call): \(String(cString: strerror(e)))"
        switch e {
        case EPERM, EACCES:
            return LiveError(.permission, "no permission to open the Bluetooth HCI monitor channel (\(cause))",
                             hint: "run as root, or grant the capability once: sudo setcap cap_net_raw+ep $(command -v btlens)")
        case EAFNOSUPPORT, EPROTONOSUPPORT, ESOCKTNOSUPPORT:
            return LiveError(.noBluetooth, "this kernel has no Bluetooth support (\(cause))",
                             hint: "load it with 'sudo modprobe bluetooth' on a machine with a Bluetooth controller, or capture elsewhere and use 'btlens live --follow FILE' or 'btlens live -'")
        case EINVAL:
            return LiveError(.noBluetooth, "this kernel has no Bluetooth HCI monitor channel (\(cause))",
                             hint: "the monitor channel needs Linux 3.4 or later; capture with hcidump or btmon elsewhere and use 'btlens live --follow FILE'")
        default:
            return LiveError(.noBluetooth, "cannot open the Bluetooth HCI monitor channel (\(cause))",
                             hint: "check that Bluetooth works with 'btmon' or 'btmgmt info'")
        }
    }

    /// No controller announced itself (or not the one asked for) within the start-up wait.
    static func noController(wanted: UInt16?, present: [UInt16], waited: Duration) -> LiveError {
        let seconds = waited.components.seconds
        let within = seconds >= 1 ? "\(seconds) s" : "\(waited.components.attoseconds / 1_000_000_000_000_000) ms"
        if let wanted {
            let list = present.isEmpty ? "none" : present.map { "hci\($0)" }.joined(separator: ", ")
            return LiveError(.noController, "Bluetooth controller hci\(wanted) not found (present: \(list))",
                             hint: present.isEmpty ? "check 'btmgmt info' or 'hciconfig -a'; plug in or unblock the adapter ('rfkill unblock bluetooth')"
                                 : "pick one of the present controllers with --index, or leave out --index to capture them all")
        }
        return LiveError(.noController, "no Bluetooth controller found (the kernel announced none within \(within))",
                         hint: "check 'btmgmt info' or 'hciconfig -a'; plug in or unblock the adapter ('rfkill unblock bluetooth')")
    }
}
