import BTWire
import BTDecode

/// What the host configured for one advertising set (legacy advertising is set 0), kept between sessions
/// because parameters and data are set once and enabled many times.
struct AdvertisingSetState {
    let controller: UInt16
    let handle: UInt8
    let isExtended: Bool
    var intervalMinimum: UInt32?
    var intervalMaximum: UInt32?
    var advertisingType: UInt8?
    var properties: UInt16?
    var data: [UInt8] = []
    var scanResponse: [UInt8] = []
    /// Extended data arriving in fragments (operations 0 intermediate, 1 first, 2 last).
    /// Fragments of data being set, from a `first` operation on; nil when no fragmented set is in progress.
    var pendingData: [UInt8]?
    var pendingScanResponse: [UInt8]?
    /// Index in the tracker's sessions of the set's open session.
    var current: Int?
    /// The connection that ended the set's last session, until the set is enabled again.
    var endedByConnection: RecordRef?

    init(controller: UInt16, handle: UInt8, isExtended: Bool) {
        self.controller = controller
        self.handle = handle
        self.isExtended = isExtended
    }

    var parametersKnown: Bool { intervalMinimum != nil }

    /// Legacy: ADV_IND (the default) and both ADV_DIRECT_IND types accept connections. Extended: bit 0.
    var isConnectable: Bool {
        if let properties { return properties & 0x01 != 0 }
        let t = advertisingType ?? 0
        return t == 0 || t == 1 || t == 4
    }

    var isScannable: Bool {
        if let properties { return properties & 0x02 != 0 }
        let t = advertisingType ?? 0
        return t == 0 || t == 2
    }

    /// LE Set Extended Advertising Data / Scan Response Data operations (Core Vol 4 Part E §7.8.54).
    enum DataOperation: UInt8 {
        case intermediate = 0, first = 1, last = 2, complete = 3, unchanged = 4
    }

    /// Applies one extended data command; true when the data in effect changed. Fragments without a `first`
    /// before them are ignored, and a chain stops growing at the largest extended data (1650 bytes), so a
    /// corrupt capture can neither grow memory nor copy a long buffer per command.
    mutating func apply(operation: UInt8, fragment: UnsafeRawBufferPointer, scanResponse: Bool) -> Bool {
        guard let op = DataOperation(rawValue: operation) else { return false }
        var committed: [UInt8]?
        if scanResponse {
            committed = Self.apply(op, fragment, pending: &pendingScanResponse)
        } else {
            committed = Self.apply(op, fragment, pending: &pendingData)
        }
        guard let committed else { return false }
        if scanResponse { self.scanResponse = committed } else { data = committed }
        return true
    }

    /// Updates the pending chain in place; returns the data committed, if any.
    static func apply(_ op: DataOperation, _ fragment: UnsafeRawBufferPointer, pending: inout [UInt8]?) -> [UInt8]? {
        switch op {
        case .first:
            pending = Array(fragment.prefix(ExtendedReportAssembler.maximumDataLength))
        case .intermediate, .last:
            guard pending != nil else { return nil }
            let room = ExtendedReportAssembler.maximumDataLength - pending!.count
            pending!.append(contentsOf: fragment.prefix(max(0, room)))
            if op == .last {
                let done = pending
                pending = nil
                return done
            }
        case .complete:
            pending = nil
            return Array(fragment)
        case .unchanged:
            break
        }
        return nil
    }
}

/// LE Set Extended Advertising Parameters (0x2036, Core Vol 4 Part E §7.8.53): the fields btlens keeps.
/// `handle u8, properties u16, primary_interval_min u24, primary_interval_max u24, channel_map u8, …`.
struct ExtendedAdvertisingParameters {
    var handle: UInt8
    var properties: UInt16
    var intervalMinimum: UInt32
    var intervalMaximum: UInt32

    init?(_ p: UnsafeRawBufferPointer) {
        var r = ByteReader(p)
        guard let h = r.readU8(), let props = r.readU16(), let lo = r.readU24(), let hi = r.readU24() else { return nil }
        handle = h
        properties = props
        intervalMinimum = lo
        intervalMaximum = hi
    }
}

/// LE Advertising Set Terminated (subevent 0x12): `status, handle, connection_handle u16, num_events u8`.
struct AdvertisingSetTerminated {
    var status: HCIStatus
    var handle: UInt8
    var connectionHandle: UInt16
    var completedEvents: UInt8

    init?(_ p: UnsafeRawBufferPointer) {
        var r = ByteReader(p)
        guard let s = r.readU8(), let h = r.readU8(), let c = r.readU16(), let n = r.readU8() else { return nil }
        status = HCIStatus(rawValue: s)
        handle = h
        connectionHandle = c & 0x0FFF
        completedEvents = n
    }
}
