import BTWire

/// The LE events of connection subrating (Core 5.3), Shorter Connection Intervals (6.2) and Channel Sounding
/// (6.0), Core Vol 4 Part E §7.7.65, and the LE Subrate Request command (§7.8.124).
extension HCIEvent {
    /// LE Subrate Change (0x23): `status, handle, subrate_factor, peripheral_latency, continuation_number,
    /// supervision_timeout`.
    public static func leSubrateChange(handle: UInt16, factor: UInt16, latency: UInt16, continuation: UInt16,
                                       supervisionTimeout: UInt16) -> HCIEvent {
        HCIEvent(le: LESubevent(rawValue: 0x23)) { w in
            w.u8(HCIStatus.success.rawValue)
            w.u16(handle)
            w.u16(factor)
            w.u16(latency)
            w.u16(continuation)
            w.u16(supervisionTimeout)
        }
    }

    /// LE Connection Rate Change (0x37): `status, handle, interval (125 µs), subrate_factor, peripheral_latency,
    /// continuation_number, supervision_timeout`.
    public static func leConnectionRateChange(handle: UInt16, interval125: UInt16, factor: UInt16, latency: UInt16,
                                              continuation: UInt16, supervisionTimeout: UInt16) -> HCIEvent {
        HCIEvent(le: LESubevent(rawValue: 0x37)) { w in
            w.u8(HCIStatus.success.rawValue)
            w.u16(handle)
            w.u16(interval125)
            w.u16(factor)
            w.u16(latency)
            w.u16(continuation)
            w.u16(supervisionTimeout)
        }
    }

    /// LE CS Procedure Enable Complete (0x30), procedures enabled: subevents of `subeventMicroseconds`.
    public static func leChannelSoundingEnabled(handle: UInt16, subeventMicroseconds: UInt32, procedures: UInt16) -> HCIEvent {
        HCIEvent(le: LESubevent(rawValue: 0x30)) { w in
            w.u8(HCIStatus.success.rawValue)
            w.u16(handle)
            w.u8(0)  // config id
            w.u8(1)  // enabled
            w.u8(0)  // tone antenna configuration
            w.i8(0)  // selected tx power, dBm
            w.u24(subeventMicroseconds)
            w.u8(1)  // subevents per event
            w.u16(0)  // subevent interval (one subevent)
            w.u16(1)  // event interval, in connection events
            w.u16(8)  // procedure interval, in connection events
            w.u16(procedures)
            w.u16(UInt16(clamping: Int(subeventMicroseconds) / 625 + 1))  // maximum procedure length, 0.625 ms
        }
    }

    /// LE CS Subevent Result (0x31) with no steps: `handle, config_id, start_acl_conn_event, procedure_counter,
    /// frequency_compensation, reference_power, procedure_done, subevent_done, abort_reason, antenna_paths, steps`.
    public static func leChannelSoundingSubeventResult(handle: UInt16, procedure: UInt16) -> HCIEvent {
        HCIEvent(le: LESubevent(rawValue: 0x31)) { w in
            w.u16(handle)
            w.u8(0)
            w.u16(procedure &* 8)
            w.u16(procedure)
            w.u16(0xC000)  // frequency compensation not available
            w.i8(-10)
            w.u8(0)  // procedure complete
            w.u8(0)  // subevent complete
            w.u8(0)
            w.u8(1)
            w.u8(0)
        }
    }
}

extension HCICommand {
    /// LE Subrate Request (0x207E): `handle, subrate_min, subrate_max, max_latency, continuation_number,
    /// supervision_timeout`.
    public static func leSubrateRequest(handle: UInt16, factor: UInt16, continuation: UInt16, supervisionTimeout: UInt16) -> HCICommand {
        HCICommand(HCIOpcode(rawValue: 0x207E)) { w in
            w.u16(handle)
            w.u16(factor)
            w.u16(factor)
            w.u16(0)
            w.u16(continuation)
            w.u16(supervisionTimeout)
        }
    }
}
