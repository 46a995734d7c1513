import BTWire
import BTCapture
import BTTrack

/// Wording shared by rule messages.
enum RuleText {
    static func seconds(_ nanoseconds: Int64) -> String {
        if nanoseconds < 1_000_000_000 { return "\(nanoseconds / 1_000_000) ms" }
        let s = Double(nanoseconds) / 1e9
        if s < 10 { return String(format1: s) + " s" }
        return "\(Int(s.rounded())) s"
    }

    static func seconds(_ d: Duration) -> String { seconds(Int64(saturating: d.seconds * 1e9)) }

    static func connection(_ c: Connection) -> String {
        "connection #\(c.id) (handle \(Hex.u16(c.handle))\(c.peerAddress.map { " to \($0)" } ?? ""))"
    }

    static func attribute(_ handle: UInt16, in c: Connection) -> String {
        if let name = c.gatt.name(of: handle) { return "\(name) [\(Hex.u16(handle))]" }
        return "handle \(Hex.u16(handle))"
    }

    static func ms(_ v: Double) -> String {
        v == v.rounded() ? "\(Int(v)) ms" : String(format1: v) + " ms"
    }
}

extension String {
    /// One decimal without Foundation.
    init(format1 v: Double) {
        let scaled = Int(saturating: (v * 10).rounded())
        self = "\(scaled / 10).\(abs(scaled % 10))"
    }
}

extension CaptureModel {
    /// The end of the capture, for things still open.
    var endTime: Timestamp { lastTimestamp ?? Timestamp(nanoseconds: 0) }
}
