import BTDecode

extension PackedSighting {
    /// The sender as the scan tracker's tables key it (the same bits: address, type, the always-set bit).
    @inline(__always) var key: DeviceKey { DeviceKey(rawValue: senderBits) }
}

/// The reports of one advertising event as the scan tracker walks them: from the event itself
/// (`AdvertisingReportIterator`) or as the reading thread packed them (`PackedSightings`).
protocol SightingSequence {
    mutating func nextPacked() -> PackedSighting?
    /// Steps over the next report; false at the end.
    mutating func skip() -> Bool
}

extension AdvertisingReportIterator: SightingSequence {
    @inline(__always) mutating func nextPacked() -> PackedSighting? { nextSighting().map(PackedSighting.init) }
}

/// Sightings packed one after another in a message to the link thread (`LinkFeed`).
struct PackedSightings: SightingSequence {
    let bytes: UnsafeRawBufferPointer
    var position = 0

    @inline(__always) init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    @inline(__always) mutating func nextPacked() -> PackedSighting? {
        guard position + 8 <= bytes.count else { return nil }
        defer { position += 8 }
        return PackedSighting(rawValue: bytes.loadUnaligned(fromByteOffset: position, as: UInt64.self))
    }

    @inline(__always) mutating func skip() -> Bool { nextPacked() != nil }
}
