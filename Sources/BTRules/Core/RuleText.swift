import BTWire
import BTCapture
import BTTrack

/// Wording shared by rule messages.
enum RuleText {
    static func seconds(_ nanoseconds: Int64) -> String {
        if nanoseconds < 1_000_000_000 { return "\(nanoseconds / 1_000_000) ms" }
        let s = Double(nanoseconds) / 1e9
        if s < 10 { return DecimalText.fixed(s, fractionDigits: 1) + " s" }
        return "\(Int(s.rounded())) s"
    }

    static func seconds(_ d: Duration) -> String { seconds(Int64(saturating: d.seconds * 1e9)) }

    static func connection(_ c: Connection) -> String { connection(LinkSummary(c)) }

    /// `connection #3 (handle 0x0040 to AA:BB:CC:DD:EE:FF)`. Appended in place: a rule of a long capture writes
    /// it in tens of thousands of messages, and interpolation cost about three times as much.
    static func connection(_ c: LinkSummary) -> String {
        var s = "connection #"
        s.reserveCapacity(Self.connectionCapacity)
        s += String(c.id)
        s += " ("
        s += c.linkName
        if let peer = c.peerAddress {
            s += " to "
            s += peer.description
        }
        s += ")"
        return s
    }

    /// Bytes `connection(_:)` reserves: the longest it writes (a 20-digit id, an access address, a peer).
    static let connectionCapacity = 72

    static func attribute(_ handle: UInt16, in c: Connection) -> String {
        if let name = c.gatt.name(of: handle) { return "\(name) [\(Hex.u16(handle))]" }
        return "handle \(Hex.u16(handle))"
    }

    /// Where the link's GATT database came from, when not from its own discovery: ` (database from connection #2,
    /// discovered later)`.
    static func databaseOrigin(_ c: Connection) -> String {
        guard let from = c.gatt.inheritedFrom else { return "" }
        switch c.gatt.origin {
        case .discovered: return ""
        case .inherited: return " (database cached from connection #\(from))"
        case .learnedLater: return " (database learned from connection #\(from), which discovered it later)"
        }
    }

    static func ms(_ v: Double) -> String {
        (v == v.rounded() ? DecimalText.format(v, maximumFractionDigits: 0) : DecimalText.fixed(v, fractionDigits: 1)) + " ms"
    }
}

extension CaptureModel {
    /// The end of the capture, for things still open.
    var endTime: Timestamp { lastTimestamp ?? Timestamp(nanoseconds: 0) }
}
