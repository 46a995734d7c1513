import BTWire
import BTTrack

/// How a connection attempt that did not come up reads, in the timeline and the live view.
public enum FailedConnectionText {
    /// `to 60:C0:BF:1A:19:75 failed after 5.12 s: Page Timeout (0x04)`, or
    /// `to the accept list cancelled by the host after 14m 55s (Unknown Connection Identifier 0x02)`; the time
    /// is from the create command, when the capture shows it.
    /// `repeated`: for a group of alike attempts (`RepeatedEpisodes`), without the one attempt's length.
    public static func describe(_ f: FailedConnection, repeated: Bool = false) -> String {
        let target = f.peerAddress.map { "to \($0) " } ?? (f.toAcceptList ? "to the accept list " : "")
        let after = repeated ? "" : f.attemptDuration.map { " after " + TimeFormat.human($0) } ?? ""
        let code = Hex.u8(f.status.rawValue)
        return f.cancelledByHost
            ? target + "cancelled by the host\(after) (\(f.status) \(code))"
            : target + "failed\(after): \(f.status) (\(code))"
    }
}
