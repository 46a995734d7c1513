import BTWire

/// A finished scan session's device counts as the link thread tallied them (`LinkFeed`), for the scan tracker to
/// fill in once the capture is read: set aside in a file with the sessions when they are
/// (`TrackerOptions.scanSessionSpillDirectory`), as a capture of many thousand scans holds one per session.
struct SessionDeviceCounts: SetAsideValue {
    var session: Int
    var summary: DeviceTally.Summary

    /// The plain fields, then `reportsPerDevice`.
    struct Head {
        var session: Int
        var scanDevices: Int?
        var uniqueDevices: Int
        var reportsFromUncountedDevices: Int
        var deviceCount: Int32
        var uniqueDevicesIsEstimate: Bool
    }

    static func append(_ c: SessionDeviceCounts, to spill: Spill) -> Int64 {
        let s = c.summary
        let at = spill.append(plain: Head(session: c.session, scanDevices: s.scanDevices, uniqueDevices: s.uniqueDevices,
                                          reportsFromUncountedDevices: s.reportsFromUncountedDevices,
                                          deviceCount: Int32(s.reportsPerDevice.count), uniqueDevicesIsEstimate: s.uniqueDevicesIsEstimate))
        spill.append(plain: s.reportsPerDevice)
        return at
    }

    static func read(from spill: Spill, at offset: Int64) -> SessionDeviceCounts {
        var cursor = spill.cursor(at: offset)
        let head = cursor.next(Head.self)
        let devices = cursor.next(DeviceReportCount.self, count: Int(head.deviceCount))
        return SessionDeviceCounts(session: head.session, summary: DeviceTally.Summary(
            reportsPerDevice: devices, scanDevices: head.scanDevices, uniqueDevices: head.uniqueDevices,
            uniqueDevicesIsEstimate: head.uniqueDevicesIsEstimate, reportsFromUncountedDevices: head.reportsFromUncountedDevices))
    }
}
