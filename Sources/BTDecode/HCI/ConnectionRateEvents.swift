import BTWire

/// LE events that change how often an LE link's radio wakes (Core 5.3–6.2, Vol 4 Part E §7.7.65): connection
/// subrating, Shorter Connection Intervals' connection rate, frame space, and Channel Sounding procedures.
extension LESubevent {
    @inlinable public static var subrateChange: LESubevent { LESubevent(rawValue: 0x23) }
    @inlinable public static var channelSoundingProcedureEnableComplete: LESubevent { LESubevent(rawValue: 0x30) }
    @inlinable public static var channelSoundingSubeventResult: LESubevent { LESubevent(rawValue: 0x31) }
    @inlinable public static var channelSoundingSubeventResultContinue: LESubevent { LESubevent(rawValue: 0x32) }
    @inlinable public static var frameSpaceUpdateComplete: LESubevent { LESubevent(rawValue: 0x35) }
    @inlinable public static var connectionRateChange: LESubevent { LESubevent(rawValue: 0x37) }
}

extension HCIOpcode {
    /// LE Set Default Subrate and LE Subrate Request (Core 5.3 §7.8.123–124).
    public static let leSetDefaultSubrate = HCIOpcode(rawValue: 0x207D)
    public static let leSubrateRequest = HCIOpcode(rawValue: 0x207E)
}

/// LE Subrate Change (0x23): `status, handle, subrate_factor, peripheral_latency, continuation_number,
/// supervision_timeout`; and LE Connection Rate Change (0x37, Core 6.2), which adds the interval in 125 µs units
/// after the handle: `status, handle, interval, subrate_factor, peripheral_latency, continuation_number,
/// supervision_timeout`.
public struct LESubrateChange: Sendable, Equatable {
    public var status: HCIStatus
    public var handle: UInt16
    /// Only in a Connection Rate Change: 125 µs units.
    public var fineInterval: UInt16?
    public var subrateFactor: UInt16
    public var peripheralLatency: UInt16
    public var continuationNumber: UInt16
    public var supervisionTimeout: UInt16

    public init?(subevent: LESubevent, _ p: UnsafeRawBufferPointer) {
        var r = ByteReader(p)
        guard let s = r.readU8(), let h = r.readU16() else { return nil }
        if subevent == .connectionRateChange {
            guard let i = r.readU16() else { return nil }
            fineInterval = i
        }
        guard let f = r.readU16(), let l = r.readU16(), let c = r.readU16(), let t = r.readU16() else { return nil }
        status = HCIStatus(rawValue: s)
        handle = h & 0x0FFF
        subrateFactor = f
        peripheralLatency = l
        continuationNumber = c
        supervisionTimeout = t
    }
}

/// LE Frame Space Update Complete (0x35, Core 6.0): `status, handle, initiator, frame_space (µs), phys,
/// spacing_types`.
public struct LEFrameSpaceUpdateComplete: Sendable, Equatable {
    public var status: HCIStatus
    public var handle: UInt16
    public var initiator: UInt8
    public var frameSpaceMicroseconds: UInt16
    public var phys: UInt8
    public var spacingTypes: UInt16

    public init?(_ p: UnsafeRawBufferPointer) {
        var r = ByteReader(p)
        guard let s = r.readU8(), let h = r.readU16(), let i = r.readU8(), let f = r.readU16(), let phys = r.readU8(),
              let types = r.readU16()
        else { return nil }
        status = HCIStatus(rawValue: s)
        handle = h & 0x0FFF
        initiator = i
        frameSpaceMicroseconds = f
        self.phys = phys
        spacingTypes = types
    }
}

/// LE CS Procedure Enable Complete (0x30, Core 6.0): `status, handle, config_id, state, tone_antenna_config,
/// selected_tx_power, subevent_len (3 bytes, µs), subevents_per_event, subevent_interval, event_interval,
/// procedure_interval, procedure_count, max_procedure_len`.
public struct LEChannelSoundingProcedureEnable: Sendable, Equatable {
    public var status: HCIStatus
    public var handle: UInt16
    public var configID: UInt8
    /// 1 enabled, 0 disabled.
    public var state: UInt8
    public var selectedTxPower: Int8
    public var subeventMicroseconds: UInt32
    public var subeventsPerEvent: UInt8
    /// 0.625 ms units.
    public var subeventInterval: UInt16
    /// In ACL connection events.
    public var eventInterval: UInt16
    public var procedureInterval: UInt16
    public var procedureCount: UInt16
    /// 0.625 ms units.
    public var maximumProcedureLength: UInt16

    public init?(_ p: UnsafeRawBufferPointer) {
        var r = ByteReader(p)
        guard let s = r.readU8(), let h = r.readU16(), let config = r.readU8(), let state = r.readU8(),
              r.skip(1), let power = r.readI8(), let length = r.readU24(), let perEvent = r.readU8(),
              let subInterval = r.readU16(), let eventInterval = r.readU16(), let procedureInterval = r.readU16(),
              let count = r.readU16(), let maximum = r.readU16()
        else { return nil }
        status = HCIStatus(rawValue: s)
        handle = h & 0x0FFF
        configID = config
        self.state = state
        selectedTxPower = power
        subeventMicroseconds = length
        subeventsPerEvent = perEvent
        subeventInterval = subInterval
        self.eventInterval = eventInterval
        self.procedureInterval = procedureInterval
        procedureCount = count
        maximumProcedureLength = maximum
    }
}

/// LE CS Subevent Result (0x31): `handle, config_id, start_acl_conn_event_counter, procedure_counter, …`; a
/// Continue (0x32) carries more steps of the same subevent and starts with the handle too.
public enum LEChannelSoundingSubeventResult {
    public static func handle(_ p: UnsafeRawBufferPointer) -> UInt16? {
        ByteReader(p).get(UInt16.self, at: 0).map { $0 & 0x0FFF }
    }
}
