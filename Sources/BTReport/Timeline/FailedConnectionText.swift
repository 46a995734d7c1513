import BTWire
import BTTrack

/// How a connection attempt that did not come up reads, in the timeline and the live view.
public enum FailedConnectionText {
    /// `to 60:C0:BF:1A:19:75 failed: Connection Failed to be Established (0x3e)`, or
    /// `to the accept list cancelled by the host (Unknown Connection Identifier 0x02)`.
    public static func describe(_ f: FailedConnection) -> String {
        let target = f.peerAddress.map { "to \($0) " } ?? (f.toAcceptList ? "to the accept list " : "")
        let code = Hex.u8(f.status.rawValue)
        return f.cancelledByHost
            ? target + "cancelled by the host (\(f.status) \(code))"
            : target + "failed: \(f.status) (\(code))"
    }
}
