import BTWire
import BTDecode

/// `decode`'s words for a Bluetooth Quality Report (HCI Vendor Specific event, sub-code 0x58).
enum QualityReportDescription {
    /// One line, then the field tree.
    static func describe(_ r: BluetoothQualityReport) -> (String, [DecodedField]) {
        var fields = [DecodedField("BQR report", "\(r.id) (\(Hex.u8(r.id.rawValue)))")]
        var detail = "BQR \(r.id)"
        switch r.body {
        case .linkQuality(let q, let specific):
            detail += " handle \(Hex.u16(q.handle)) rssi \(q.rssi) dBm retransmissions \(q.retransmissions)"
            if let share = q.retransmissionShare { detail += " of \(q.txPackets ?? 0) sent (\(DevicesText.percent(share)))" }
            fields += [DecodedField("handle", Hex.u16(q.handle)), DecodedField("role", q.role == 0 ? "central" : "peripheral"),
                       DecodedField("packet type", Hex.u8(q.packetType)), DecodedField("tx power", "\(q.txPowerLevel) dBm"),
                       DecodedField("rssi", "\(q.rssi) dBm"), DecodedField("snr", "\(q.snr) dB"),
                       DecodedField("unused AFH channels", "\(q.unusedAFHChannels)"),
                       DecodedField("unideal AFH channels", "\(q.unidealAFHChannels)"),
                       DecodedField("supervision timeout", Format.ms(Double(q.supervisionTimeout) * bluetoothClockMilliseconds) + " ms"),
                       DecodedField("retransmissions", "\(q.retransmissions)"), DecodedField("no rx", "\(q.noRx)"),
                       DecodedField("NAKs", "\(q.naks)"), DecodedField("flow offs", "\(q.flowOffs)"),
                       DecodedField("buffer overflow", "\(q.overflowBytes) bytes"),
                       DecodedField("buffer underflow", "\(q.underflowBytes) bytes")]
            if let peer = q.peer { fields.append(DecodedField("peer address", "\(peer)")) }
            let counters: [(String, UInt32?)] = [("tx packets", q.txPackets), ("tx unacknowledged", q.txUnacked),
                                                 ("tx flushed", q.txFlushed), ("tx last subevent", q.txLastSubevent),
                                                 ("rx CRC errors", q.crcErrors), ("rx duplicates", q.rxDuplicates),
                                                 ("rx unreceived", q.rxUnreceived)]
            fields += counters.compactMap { name, value in value.map { DecodedField(name, "\($0)") } }
            fields += specific.map { DecodedField($0.name, "\($0.value)") }
        case .energyMonitor(let e):
            detail += ": \(e.averageCurrentMilliamps) mA over \(e.periodMilliseconds) ms, LE tx \(e.leTxMilliseconds) ms rx \(e.leRxMilliseconds) ms"
            fields += [DecodedField("average current", "\(e.averageCurrentMilliamps) mA"),
                       DecodedField("period", "\(e.periodMilliseconds) ms"),
                       DecodedField("idle", "\(e.idleMilliseconds) ms (\(e.idleEntries) times)"),
                       DecodedField("active", "\(e.activeMilliseconds) ms (\(e.activeEntries) times)"),
                       DecodedField("BR/EDR tx", "\(e.brEdrTxMilliseconds) ms (\(e.brEdrTxEntries) times, average \(e.brEdrTxPower) dBm)"),
                       DecodedField("BR/EDR rx", "\(e.brEdrRxMilliseconds) ms (\(e.brEdrRxEntries) times)"),
                       DecodedField("LE tx", "\(e.leTxMilliseconds) ms (\(e.leTxEntries) times, average \(e.leTxPower) dBm)"),
                       DecodedField("LE rx", "\(e.leRxMilliseconds) ms (\(e.leRxEntries) times)")]
        case .rfStats(let s):
            let received = s.rssiPackets.reduce(0) { $0 + UInt64($1) }
            detail += " over \(s.periodMilliseconds) ms: \(received) packets received"
            fields.append(DecodedField("period", "\(s.periodMilliseconds) ms"))
            fields += zip(BluetoothQualityReport.RFStats.rssiBands, s.rssiPackets).map { DecodedField("rssi \($0) dBm", "\($1)") }
            fields += zip(BluetoothQualityReport.RFStats.deltaBands, s.rssiDeltaPackets).map { DecodedField("rssi delta \($0) dB", "\($1)") }
        case .rootInflammation(let error, let vendor):
            detail += ": error \(Hex.u8(error)) vendor error \(Hex.u8(vendor))"
            fields += [DecodedField("error code", Hex.u8(error)), DecodedField("vendor error code", Hex.u8(vendor))]
        case .logDump(let handle, let bytes):
            detail += " handle \(Hex.u16(handle)), \(Plural.of(bytes, "vendor byte"))"
            fields.append(DecodedField("handle", Hex.u16(handle)))
        case .undecoded(let bytes):
            detail += " (\(Plural.of(bytes, "byte")), not decoded)"
        }
        return (detail, fields)
    }

    /// A Bluetooth clock tick (BQR's unit for times and the supervision timeout): 312.5 µs.
    static let bluetoothClockMilliseconds = 0.3125
}
