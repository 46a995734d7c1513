import BTDecode

extension PackedSighting {
    /// The sender as the scan tracker's tables key it (the same bits: address, type, the always-set bit).
    @inline(__always) var key: DeviceKey { DeviceKey(rawValue: senderBits) }
}

extension AdvertisingReportIterator {
    /// The next report's sender and kind, as the scan tracker counts them.
    @inline(__always) mutating func nextPacked() -> PackedSighting? { nextSighting().map(PackedSighting.init) }
}
