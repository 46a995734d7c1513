import BTWire

/// What a host sends when it brings a controller up, so a capture starts with the local address and the
/// LE buffer size the host fragments to (BlueZ and Android both run this sequence on power-on).
extension HCIScript {
    /// BlueZ's default event mask: everything a host needs, LE Meta included.
    public static let eventMask: UInt64 = 0x3DBF_F807_FFFB_FFFF
    /// LE Meta subevents 0x01–0x14 enabled (bit n−1 enables subevent n).
    public static let leEventMask: UInt64 = 0x0000_0000_000F_FFFF
    /// Core 5.3.
    public static let hciVersion: UInt8 = 0x0C
    public static let hciRevision: UInt16 = 0x0100
    public static let lmpSubversion: UInt16 = 0x2209
    /// LE ACL buffers the controller reports.
    public static let leBufferCount: UInt8 = 8

    /// Reset, event masks, version, address and LE buffer size.
    public func setUpController() {
        commandComplete(.reset)
        commandComplete(.setEventMask(Self.eventMask))
        commandComplete(.readLocalVersion, returning: ByteWriter.build { w in
            w.u8(HCIStatus.success.rawValue)
            w.u8(Self.hciVersion)
            w.u16(Self.hciRevision)
            w.u8(Self.hciVersion)
            w.u16(controller.manufacturer.rawValue)
            w.u16(Self.lmpSubversion)
        })
        commandComplete(.readBDAddr, returning: ByteWriter.build { w in
            w.u8(HCIStatus.success.rawValue)
            w.address(controller.address)
        })
        commandComplete(.leSetEventMask(Self.leEventMask))
        commandComplete(.leReadBufferSize, returning: ByteWriter.build { w in
            w.u8(HCIStatus.success.rawValue)
            w.u16(UInt16(clamping: hostACLDataLength))
            w.u8(Self.leBufferCount)
        })
    }
}
