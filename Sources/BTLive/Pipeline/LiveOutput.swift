/// Where the live pipeline prints. The command line writes lines to a buffered standard output and notes to
/// standard error; tests collect both. The pipeline calls `flush` whenever the input catches up, so output
/// is prompt when live and still buffered while history is replayed.
public protocol LiveOutput: AnyObject {
    /// One line of the live view (standard output).
    func line(_ text: String)
    /// Push buffered lines out.
    func flush()
    /// A one-line note about the capture itself (standard error): controller added or removed, file truncated
    /// or rotated, the written file failing.
    func note(_ text: String)
}
