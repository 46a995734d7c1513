import BTWire

/// Reports per device during one scan session: a bounded open-addressing table of the first
/// `ScanSession.deviceLimit` devices, and an estimate of how many more there were. A report costs one lookup
/// and no allocation once the table has grown; the table is reused by every session of a controller.
///
/// The scan tracker keeps one per controller, or, when links are tracked on a second thread, that thread does
/// (`LinkFeed`): this is the per-report work that does not decide anything else about the session.
struct DeviceTally {
    var devices = KeyTable<DeviceKey>(limit: ScanSession.deviceLimit)
    var uncounted = DistinctEstimator()
    /// Reports from devices past the table's limit.
    var uncountedReports = 0

    /// The session's device fields, as `ScanSession` holds them.
    struct Summary {
        var reportsPerDevice: [DeviceReportCount]
        /// The distinct devices of its app scan so far, when the list was trimmed (`ScanDeviceKeeping`).
        var scanDevices: Int? = nil
        var uniqueDevices: Int
        var uniqueDevicesIsEstimate: Bool
        var reportsFromUncountedDevices: Int
    }

    @inline(__always)
    mutating func count(_ key: DeviceKey) {
        if !devices.increment(key) {
            uncountedReports &+= 1
            uncounted.insert(key)
        }
    }

    /// Senders packed one after another (`LinkFeed`'s `deviceSightings`).
    @inline(__always)
    mutating func count(packed keys: UnsafeRawBufferPointer) {
        var position = 0
        while true {
            position = devices.increment(packed: keys, from: position)
            guard position &+ 8 <= keys.count else { return }
            // A device past the table's limit.
            uncountedReports &+= 1
            uncounted.insert(DeviceKey(rawValue: keys.loadUnaligned(fromByteOffset: position, as: UInt64.self)))
            position &+= 8
        }
    }

    /// Per-device counts, most reports first (ties by address and type, so the order is the same every run).
    /// `sorted: false` leaves them in table order for a list that will be trimmed (`ScanDeviceKeeping.ended`
    /// orders what it keeps): the audit keeps none of most sessions' devices, and sorting them all was a tenth of
    /// its processor time on a capture of thousands of scans.
    func summary(sorted: Bool = true) -> Summary {
        var list: [DeviceReportCount] = []
        list.reserveCapacity(devices.count)
        devices.forEach { key, reports in
            list.append(DeviceReportCount(address: key.address, addressType: key.addressType, reports: Int(max(0, reports))))
        }
        if sorted { Self.order(&list) }
        return Summary(reportsPerDevice: list, uniqueDevices: list.count + uncounted.estimate,
                       uniqueDevicesIsEstimate: uncounted.insertions > 0, reportsFromUncountedDevices: uncountedReports)
    }

    /// Per-device counts of the devices `keep` keeps, in table order; the summary's other fields count them all.
    func summary(keeping keep: (DeviceKey) -> Bool) -> Summary {
        var list: [DeviceReportCount] = []
        devices.forEach { key, reports in
            guard keep(key) else { return }
            list.append(DeviceReportCount(address: key.address, addressType: key.addressType, reports: Int(max(0, reports))))
        }
        return Summary(reportsPerDevice: list, uniqueDevices: devices.count + uncounted.estimate,
                       uniqueDevicesIsEstimate: uncounted.insertions > 0, reportsFromUncountedDevices: uncountedReports)
    }

    /// Most reports first, ties by address and type, compared as two integers (reports counted down from the top,
    /// then address and type packed): comparing the fields one by one cost twice as much.
    static func order(_ list: inout [DeviceReportCount]) {
        @inline(__always) func key(_ d: DeviceReportCount) -> (UInt64, UInt64) {
            (UInt64.max &- UInt64(max(0, d.reports)), d.address.rawValue << 8 | UInt64(d.addressType.rawValue))
        }
        list.sort { key($0) < key($1) }
    }

    /// Empties the tally for the next session, sized for about `expected` devices (`KeyTable.removeAll(expecting:)`).
    mutating func removeAll(expecting expected: Int) {
        devices.removeAll(expecting: expected)
        uncounted.removeAll()
        uncountedReports = 0
    }
}

extension ScanSession {
    mutating func apply(_ tally: DeviceTally.Summary) {
        reportsPerDevice = tally.reportsPerDevice
        scanDevices = tally.scanDevices
        uniqueDevices = tally.uniqueDevices
        uniqueDevicesIsEstimate = tally.uniqueDevicesIsEstimate
        reportsFromUncountedDevices = tally.reportsFromUncountedDevices
    }
}
