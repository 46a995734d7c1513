import BTWire

/// Bluetooth Quality Reports as a controller sends them to Android (AOSP btif_bqr.h and
/// BluetoothQualityReport.java): a Vendor Specific event (0xFF) with sub-code 0x58, the report id, its fields.
extension HCIEvent {
    public static let qualityReportSubcode: UInt8 = 0x58

    /// A link-quality report (id 0x01 monitoring) with the BQR v6 common part (85 bytes).
    public static func qualityReportLink(handle: UInt16, peer: BDAddr, rssi: Int8, txPackets: UInt32,
                                         retransmissions: UInt32) -> HCIEvent {
        HCIEvent(.vendorSpecific) { w in
            w.u8(qualityReportSubcode)
            w.u8(0x01)
            w.u8(0x18)  // packet type: 2-DH1-class id for LE; informative only
            w.u16(handle)
            w.u8(0)  // central
            w.i8(8)  // tx power level
            w.i8(rssi)
            w.u8(20)  // SNR
            w.u8(0)  // unused AFH channels
            w.u8(0)  // unideal AFH channels
            w.u16(16_000)  // LSTO, Bluetooth clocks (5 s)
            w.u32(0)  // piconet clock
            w.u32(retransmissions)
            w.u32(0)  // no rx
            w.u32(retransmissions / 2)  // NAKs
            w.u32(0)  // last tx ack
            w.u32(0)  // flow offs
            w.u32(0)  // last flow on
            w.u32(0)  // overflow bytes
            w.u32(0)  // underflow bytes
            w.address(peer)
            w.u8(0)  // calibration failures
            w.u32(txPackets)
            w.u32(retransmissions)  // tx unacknowledged
            w.u32(0)  // tx flushed
            w.u32(0)  // tx last subevent
            w.u32(0)  // CRC errors
            w.u32(0)  // rx duplicates
            w.u32(0)  // rx unreceived
            w.u16(0)  // coexistence info
        }
    }

    /// An Energy Monitor report (id 0x06) counting `periodMilliseconds` of LE radio time.
    public static func qualityReportEnergy(averageMilliamps: UInt16, periodMilliseconds: UInt32, leTxMilliseconds: UInt32,
                                           leRxMilliseconds: UInt32, leTxCount: UInt32, leRxCount: UInt32) -> HCIEvent {
        HCIEvent(.vendorSpecific) { w in
            w.u8(qualityReportSubcode)
            w.u8(0x06)
            w.u16(averageMilliamps)
            let active = leTxMilliseconds + leRxMilliseconds
            w.u32(periodMilliseconds - min(periodMilliseconds, active))  // idle time
            w.u32(leTxCount)  // idle entries: once per event
            w.u32(active)
            w.u32(leTxCount)
            w.u32(0)  // BR/EDR tx time
            w.u32(0)
            w.i8(0)
            w.u32(0)  // BR/EDR rx time
            w.u32(0)
            w.u32(leTxMilliseconds)
            w.u32(leTxCount)
            w.i8(4)  // LE average tx power
            w.u32(leRxMilliseconds)
            w.u32(leRxCount)
            w.u32(periodMilliseconds)
            for _ in 0..<6 { w.u32(0) }  // chain times
        }
    }
}
