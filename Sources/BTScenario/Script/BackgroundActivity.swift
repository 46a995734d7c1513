/// Something that produces packets on its own schedule while the scenario does other things, such as a
/// scan that stays on during a connection. The script asks it for its next due time whenever the clock
/// moves, and lets it emit everything that falls due on the way.
public protocol BackgroundActivity: AnyObject {
    /// When the next packet is due, in microseconds since the script's start; nil when nothing is left.
    var nextDue: Int64? { get }
    /// Emits what is due at the script's current time. Must move `nextDue` forward (or to nil).
    func fire(_ script: HCIScript)
}
