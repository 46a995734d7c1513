import BTWire
import BTCapture
import BTDecode
import BTTrack

/// What the air shows of a link, for timelines and JSON: its head (both sides, access address), a line per
/// phase (`events 1,240 (97 % empty), 31 retransmissions, 2 CRC errors`) and the `air` object.
enum AirLinkDescription {
    /// `air  AA 0x50654d3a  central 40:63:DE:11:1C:3D → peripheral D1:5C:F0:EE:02:8F (random)`.
    static func head(_ c: Connection, _ air: AirLink) -> String {
        var head = "Connection #\(c.id)  air  AA \(air.accessAddressText)  \(c.transport.rawValue)"
        head += "  central " + (air.centralAddress.map { "\($0)" + (air.centralAddressIsRandom ? " (random)" : " (public)") } ?? "?")
        head += " → peripheral " + (c.peerAddress.map { "\($0)" + (c.peerAddressType.map { " (\($0))" } ?? "") } ?? "?")
        return head
    }

    /// One line per phase with air statistics, at the phase's start.
    static func phaseLines(_ c: Connection) -> [(at: RecordRef, text: String)] {
        guard let air = c.air else { return [] }
        return zip(c.phases, air.phases).compactMap { p, s in
            s.events == 0 && s.crcErrors == 0 ? nil : (p.start, "air: " + statistics(s, phase: p, in: c))
        }
    }

    /// `interval 30 ms, 2M: events 1,240 (97 % empty), 31 retransmissions, 2 CRC errors, RSSI -61 dBm (-70…-52)`.
    static func statistics(_ s: AirLinkStatistics, phase: LinkPhase?, in c: Connection) -> String {
        var text = ""
        if let phase {
            if let p = phase.parameters {
                text += "interval \(Format.ms(p.intervalMilliseconds)) ms"
                // An estimated interval comes without a supervision timeout (0: no real link has one under 100 ms).
                if c.air?.intervalEstimated == true && p.supervisionTimeout == 0 { text += " (estimated)" }
                if p.latency > 0 { text += " latency \(p.latency)" }
            }
            let phys: [UInt8: String] = [1: "1M", 2: "2M", 3: "Coded"]
            if phase.txPHY != LinkPhase.phy1M || phase.rxPHY != LinkPhase.phy1M {
                text += ", " + (phase.txPHY == phase.rxPHY ? phys[phase.txPHY] ?? "?" : "\(phys[phase.txPHY] ?? "?")/\(phys[phase.rxPHY] ?? "?")")
            }
            if !text.isEmpty { text += ": " }
        }
        text += "events \(grouped(s.events))"
        if let share = s.emptyEventShare { text += " (\(Int((share * 100).rounded())) % empty)" }
        text += ", \(grouped(s.retransmissions)) retransmission\(s.retransmissions == 1 ? "" : "s"), \(grouped(s.crcErrors)) CRC error\(s.crcErrors == 1 ? "" : "s")"
        if s.encryptedPDUs > 0 { text += ", \(Plural.of(s.encryptedPDUs, "encrypted PDU")) not decoded (no key)" }
        if s.channelMapChanges > 0 { text += ", \(Plural.of(s.channelMapChanges, "channel map change"))" }
        if let mean = s.meanRSSI, let lo = s.rssiMinimum, let hi = s.rssiMaximum {
            text += ", RSSI \(Int(mean.rounded())) dBm (\(lo)…\(hi))"
        }
        return text
    }

    /// `1,240`.
    static func grouped(_ n: Int) -> String {
        let digits = String(n.magnitude)
        var out = ""
        for (i, ch) in digits.enumerated() {
            if i > 0 && (digits.count - i) % 3 == 0 { out.append(",") }
            out.append(ch)
        }
        return (n < 0 ? "-" : "") + out
    }

    static func statisticsJSON(_ s: AirLinkStatistics) -> JSONValue {
        .object([
            ("events", .int(s.events)), ("events_with_data", .int(s.eventsWithData)),
            ("empty_event_share", s.emptyEventShare.map { .number(DecimalText.fixed($0, fractionDigits: 3)) } ?? .null),
            ("packets", .int(s.packets)), ("empty_pdus", .int(s.emptyPDUs)),
            ("retransmissions", .int(s.retransmissions)), ("crc_errors", .int(s.crcErrors)),
            ("encrypted_pdus", .int(s.encryptedPDUs)), ("channel_map_changes", .int(s.channelMapChanges)),
            ("rssi_mean_dbm", s.meanRSSI.map { .number(DecimalText.fixed($0, fractionDigits: 1)) } ?? .null),
            ("rssi_min_dbm", s.rssiMinimum.map { .int(Int($0)) } ?? .null),
            ("rssi_max_dbm", s.rssiMaximum.map { .int(Int($0)) } ?? .null),
        ])
    }

    /// The connection's `air` object (null for HCI links).
    static func json(_ c: Connection) -> JSONValue {
        guard let air = c.air, let totals = c.airStatistics else { return .null }
        return .object([
            ("access_address", .string(air.accessAddressText)),
            ("central_address", air.centralAddress.map { .string($0.description) } ?? .null),
            ("central_address_type", air.centralAddress == nil ? .null : .string(air.centralAddressIsRandom ? "random" : "public")),
            ("channels", air.channelMap.map { .int(LLChannelMap.usedChannels($0)) } ?? .null),
            ("interval_estimated", .bool(air.intervalEstimated)),
            ("end_inferred", .bool(air.endInferred)),
            ("late_instants", .int(air.lateInstants)),
            ("statistics", statisticsJSON(totals)),
            ("phases", .array(zip(c.phases, air.phases).map { p, s in
                .object([("start", .number(p.start.timestamp.decimalString())),
                         ("parameters", p.parameters.map(TimelineEventDescription.parametersJSON) ?? .null),
                         ("tx_phy", .int(Int(p.txPHY))), ("rx_phy", .int(Int(p.rxPHY))),
                         ("statistics", statisticsJSON(s))])
            })),
        ])
    }
}
