import BTWire
import BTCapture
import BTDecode
import BTTrack
import BTRules
import BTReport

/// The lines of the live view, in text (columns as `btlens decode` prints them: number, seconds since the
/// first record, direction, controller, summary) or as JSON Lines objects with a `type` member.
enum LiveLines {
    static func pad(_ s: String, _ width: Int) -> String {
        s.count >= width ? s : String(repeating: " ", count: width - s.count) + s
    }

    /// The number and time columns; events and findings leave the number blank.
    static func prefix(number: Int?, time: Timestamp, first: Timestamp) -> String {
        pad(number.map(String.init) ?? "", 7) + "  " + pad(TimeFormat.seconds(time - first), 14) + "  "
    }

    static func direction(_ d: Direction) -> String {
        switch d {
        case .sent: "<"
        case .received: ">"
        case .unknown: " "
        }
    }

    static func json(_ members: [(String, JSONValue)]) -> String { JSONValue.object(members).serialized(indent: nil) }

    // MARK: - Records

    static func record(_ frame: DecodedFrame, first: Timestamp, format: LiveFormat) -> String {
        let r = frame.record
        var summary = FrameDescription.summary(frame)
        if frame.isMalformed { summary += " [malformed]" }
        switch format {
        case .text:
            let controller = r.controller == CaptureRecord.noController ? "-" : String(r.controller)
            return prefix(number: r.number, time: r.timestamp, first: first) + direction(r.direction) + " "
                + pad(controller, 2) + "  " + summary
        case .json:
            return json([
                ("type", .string("record")), ("number", .int(r.number)), ("time", .number(r.timestamp.decimalString())),
                ("direction", .string(r.direction.description)),
                ("controller", r.controller == CaptureRecord.noController ? .null : .int(Int(r.controller))),
                ("kind", .string(r.kind.description)), ("summary", .string(summary)),
                ("malformed", .bool(frame.isMalformed)),
            ])
        }
    }

    // MARK: - Connection events

    static func connectionJSON(_ c: Connection) -> JSONValue {
        .object([
            ("id", .int(c.id)), ("controller", .int(Int(c.controller))), ("handle", .string(Hex.u16(c.handle))),
            ("peer_address", c.peerAddress.map { .string($0.description) } ?? .null),
            ("peer_address_type", c.peerAddressType.map { .string($0.description) } ?? .null),
            ("role", .string(c.role.rawValue)), ("transport", .string(c.transport.rawValue)),
        ])
    }

    static func status(_ s: HCIStatus) -> String { "\(s) (\(Hex.u8(s.rawValue)))" }

    static func statusJSON(_ s: HCIStatus) -> JSONValue {
        .object([("code", .string(Hex.u8(s.rawValue))), ("name", .string(s.description))])
    }

    static func peer(_ c: Connection) -> String {
        guard let address = c.peerAddress else { return "" }
        return " \(address)" + (c.peerAddressType.map { " (\($0))" } ?? "")
    }

    static func connectionUp(_ c: Connection, now: Timestamp, first: Timestamp, format: LiveFormat) -> String {
        switch format {
        case .text:
            var text = "connection #\(c.id) "
            if c.implicitStart {
                text += "(handle \(Hex.u16(c.handle))) was already up when the capture started"
            } else {
                text += "up:" + peer(c) + ", handle \(Hex.u16(c.handle))"
                if c.role != .unknown { text += ", \(c.role.rawValue)" }
                if let p = c.parameters { text += ", " + p.description }
                if let requested = c.connectRequested {
                    text += ", connecting took " + TimeFormat.human(c.start.timestamp - requested.timestamp)
                }
            }
            return prefix(number: nil, time: now, first: first) + "== " + text
        case .json:
            var members: [(String, JSONValue)] = [
                ("type", .string("connection")), ("event", .string("up")), ("time", .number(c.start.timestamp.decimalString())),
                ("record", .int(c.start.number)), ("implicit", .bool(c.implicitStart)), ("connection", connectionJSON(c)),
                ("connect_requested", c.connectRequested.map { .number($0.timestamp.decimalString()) } ?? .null),
            ]
            if let p = c.parameters {
                members.append(("interval_ms", .number(Format.ms(p.intervalMilliseconds))))
                members.append(("latency", .int(Int(p.latency))))
                members.append(("supervision_timeout_ms", .number(Format.ms(p.supervisionTimeoutMilliseconds))))
            }
            return json(members)
        }
    }

    static func connectionDown(_ c: Connection, now: Timestamp, first: Timestamp, format: LiveFormat) -> String {
        let end = c.end ?? c.start
        let lasted = end.timestamp - c.start.timestamp
        switch format {
        case .text:
            var text = "connection #\(c.id) "
            if let reason = c.disconnectReason {
                text += "down:" + peer(c) + ", handle \(Hex.u16(c.handle)), reason " + status(reason)
                if c.disconnectRequestedLocally { text += ", disconnected by this host" }
            } else {
                text += "ended:" + peer(c) + ", handle \(Hex.u16(c.handle)), by a controller reset or removal (or its handle was reused)"
            }
            text += ", after " + TimeFormat.human(lasted)
            return prefix(number: nil, time: now, first: first) + "== " + text
        case .json:
            return json([
                ("type", .string("connection")), ("event", .string("down")), ("time", .number(end.timestamp.decimalString())),
                ("record", .int(end.number)), ("connection", connectionJSON(c)),
                ("reason", c.disconnectReason.map(statusJSON) ?? .null),
                ("locally_requested", .bool(c.disconnectRequestedLocally)),
                ("duration_s", .number(Timestamp(nanoseconds: end.timestamp.nanoseconds &- c.start.timestamp.nanoseconds).decimalString())),
            ])
        }
    }

    static func connectionFailed(_ f: FailedConnection, first: Timestamp, format: LiveFormat) -> String {
        switch format {
        case .text:
            return prefix(number: nil, time: f.at.timestamp, first: first) + "== connection attempt " + FailedConnectionText.describe(f)
        case .json:
            return json([
                ("type", .string("connection")), ("event", .string("failed")), ("time", .number(f.at.timestamp.decimalString())),
                ("record", .int(f.at.number)), ("controller", .int(Int(f.at.controller))),
                ("requested", f.requested.map { .number($0.timestamp.decimalString()) } ?? .null),
                ("peer_address", f.peerAddress.map { .string($0.description) } ?? .null), ("status", statusJSON(f.status)),
                ("accept_list", .bool(f.toAcceptList)), ("cancelled", .bool(f.cancelledByHost)),
            ])
        }
    }

    // MARK: - Findings and the end

    static func finding(_ f: Finding, now: Timestamp, first: Timestamp, format: LiveFormat) -> String {
        switch format {
        case .text:
            let records = f.records.prefix(4).map { "#\($0.number)" }.joined(separator: ", ") + (f.records.count > 4 ? ", …" : "")
            return prefix(number: nil, time: now, first: first) + "!! \(f.severity.rawValue) \(f.id) \(f.rule): \(f.message)"
                + (records.isEmpty ? "" : " (records \(records))")
        case .json:
            guard case .object(let members) = AuditJSON.finding(f) else { return json([("type", .string("finding"))]) }
            return json([("type", .string("finding"))] + members)
        }
    }
}
