import BTWire

// Typed views of the commands btlens reasons about (scan, connect, advertise, update, disconnect).
// Each `init?` takes the command parameters and returns nil when they are shorter than the layout.

/// Units on the wire (Core Vol 4 Part E §7.8).
public enum HCIUnits {
    /// Scan interval/window, advertising interval: 0.625 ms.
    public static func slotsToMilliseconds(_ v: UInt16) -> Double { Double(v) * 0.625 }
    public static func slotsToMilliseconds(_ v: UInt32) -> Double { Double(v) * 0.625 }
    /// Connection interval: 1.25 ms.
    public static func intervalToMilliseconds(_ v: UInt16) -> Double { Double(v) * 1.25 }
    /// Supervision timeout: 10 ms.
    public static func timeoutToMilliseconds(_ v: UInt16) -> Double { Double(v) * 10 }
    /// Extended scan duration: 10 ms; period: 1.28 s.
    public static func durationToMilliseconds(_ v: UInt16) -> Double { Double(v) * 10 }
}

/// LE Set Scan Parameters (0x200B).
public struct LESetScanParameters {
    /// 0 passive, 1 active.
    public var scanType: UInt8
    public var interval: UInt16
    public var window: UInt16
    public var ownAddressType: UInt8
    public var filterPolicy: UInt8

    public init?(_ p: UnsafeRawBufferPointer) {
        var r = ByteReader(p)
        guard let t = r.readU8(), let i = r.readU16(), let w = r.readU16(), let o = r.readU8(), let f = r.readU8()
        else { return nil }
        scanType = t; interval = i; window = w; ownAddressType = o; filterPolicy = f
    }
}

/// LE Set Scan Enable (0x200C).
public struct LESetScanEnable {
    public var enable: Bool
    public var filterDuplicates: Bool

    public init?(_ p: UnsafeRawBufferPointer) {
        guard p.count >= 2 else { return nil }
        enable = p[0] != 0
        filterDuplicates = p[1] != 0
    }
}

/// LE Set Extended Scan Parameters (0x2041): per PHY bit a `{type, interval, window}`.
public struct LESetExtendedScanParameters {
    public var ownAddressType: UInt8
    public var filterPolicy: UInt8
    public var phys: UInt8
    public var perPHY: [(phy: UInt8, scanType: UInt8, interval: UInt16, window: UInt16)]

    public init?(_ p: UnsafeRawBufferPointer) {
        var r = ByteReader(p)
        guard let o = r.readU8(), let f = r.readU8(), let phys = r.readU8() else { return nil }
        ownAddressType = o; filterPolicy = f; self.phys = phys
        perPHY = []
        for bit in 0..<8 where phys & (1 << bit) != 0 {
            guard let t = r.readU8(), let i = r.readU16(), let w = r.readU16() else { return nil }
            perPHY.append((UInt8(1 << bit), t, i, w))
        }
    }
}

/// LE Set Extended Scan Enable (0x2042): filter_dup 0 off, 1 on, 2 on and reset each period.
public struct LESetExtendedScanEnable {
    public var enable: Bool
    public var filterDuplicates: UInt8
    /// ×10 ms, 0 = until disabled.
    public var duration: UInt16
    /// ×1.28 s, 0 = none.
    public var period: UInt16

    public init?(_ p: UnsafeRawBufferPointer) {
        var r = ByteReader(p)
        guard let e = r.readU8(), let f = r.readU8(), let d = r.readU16(), let per = r.readU16() else { return nil }
        enable = e != 0; filterDuplicates = f; duration = d; period = per
    }
}

/// Connection parameters requested by a create-connection or update command.
public struct ConnectionParameterRange: Equatable, Sendable {
    public var intervalMin: UInt16
    public var intervalMax: UInt16
    public var latency: UInt16
    public var supervisionTimeout: UInt16

    public init(intervalMin: UInt16, intervalMax: UInt16, latency: UInt16, supervisionTimeout: UInt16) {
        self.intervalMin = intervalMin
        self.intervalMax = intervalMax
        self.latency = latency
        self.supervisionTimeout = supervisionTimeout
    }

    public var description: String {
        let lo = HCIUnits.intervalToMilliseconds(intervalMin), hi = HCIUnits.intervalToMilliseconds(intervalMax)
        return "interval \(Format.ms(lo))–\(Format.ms(hi)) ms latency \(latency) timeout \(Format.ms(HCIUnits.timeoutToMilliseconds(supervisionTimeout))) ms"
    }
}

/// LE Create Connection (0x200D).
public struct LECreateConnection {
    public var scanInterval: UInt16
    public var scanWindow: UInt16
    /// 1 = use the filter accept list (background / autoConnect), 0 = the peer below.
    public var initiatorFilterPolicy: UInt8
    public var peerAddressType: AddressType
    public var peerAddress: BDAddr
    public var ownAddressType: UInt8
    public var parameters: ConnectionParameterRange

    public init?(_ p: UnsafeRawBufferPointer) {
        var r = ByteReader(p)
        guard let si = r.readU16(), let sw = r.readU16(), let f = r.readU8(), let pt = r.readU8(),
              let peer = r.readAddress(), let own = r.readU8(), let imin = r.readU16(), let imax = r.readU16(),
              let lat = r.readU16(), let to = r.readU16()
        else { return nil }
        scanInterval = si; scanWindow = sw; initiatorFilterPolicy = f
        peerAddressType = AddressType(rawValue: pt); peerAddress = peer; ownAddressType = own
        parameters = ConnectionParameterRange(intervalMin: imin, intervalMax: imax, latency: lat, supervisionTimeout: to)
    }
}

/// LE Extended Create Connection (0x2043): per PHY bit 8×u16.
public struct LEExtendedCreateConnection {
    public var initiatorFilterPolicy: UInt8
    public var ownAddressType: UInt8
    public var peerAddressType: AddressType
    public var peerAddress: BDAddr
    public var phys: UInt8
    public var parameters: [ConnectionParameterRange]

    public init?(_ p: UnsafeRawBufferPointer) {
        var r = ByteReader(p)
        guard let f = r.readU8(), let own = r.readU8(), let pt = r.readU8(), let peer = r.readAddress(),
              let phys = r.readU8()
        else { return nil }
        initiatorFilterPolicy = f; ownAddressType = own; peerAddressType = AddressType(rawValue: pt)
        peerAddress = peer; self.phys = phys
        parameters = []
        for bit in 0..<8 where phys & (1 << bit) != 0 {
            guard r.skip(4), let imin = r.readU16(), let imax = r.readU16(), let lat = r.readU16(),
                  let to = r.readU16(), r.skip(4)
            else { return nil }
            parameters.append(ConnectionParameterRange(intervalMin: imin, intervalMax: imax, latency: lat,
                                                       supervisionTimeout: to))
        }
    }
}

/// LE Connection Update (0x2013).
public struct LEConnectionUpdate {
    public var handle: UInt16
    public var parameters: ConnectionParameterRange

    public init?(_ p: UnsafeRawBufferPointer) {
        var r = ByteReader(p)
        guard let h = r.readU16(), let imin = r.readU16(), let imax = r.readU16(), let lat = r.readU16(),
              let to = r.readU16()
        else { return nil }
        handle = h & 0x0FFF
        parameters = ConnectionParameterRange(intervalMin: imin, intervalMax: imax, latency: lat, supervisionTimeout: to)
    }
}

/// Disconnect (0x0406).
public struct Disconnect {
    public var handle: UInt16
    public var reason: HCIStatus

    public init?(_ p: UnsafeRawBufferPointer) {
        var r = ByteReader(p)
        guard let h = r.readU16(), let reason = r.readU8() else { return nil }
        handle = h & 0x0FFF
        self.reason = HCIStatus(rawValue: reason)
    }
}

/// LE Set Advertising Parameters (0x2006).
public struct LESetAdvertisingParameters {
    public var intervalMin: UInt16
    public var intervalMax: UInt16
    /// 0 ADV_IND, 1 ADV_DIRECT_IND (high duty), 2 ADV_SCAN_IND, 3 ADV_NONCONN_IND, 4 ADV_DIRECT_IND (low duty).
    public var advertisingType: UInt8

    public init?(_ p: UnsafeRawBufferPointer) {
        var r = ByteReader(p)
        guard let a = r.readU16(), let b = r.readU16(), let t = r.readU8() else { return nil }
        intervalMin = a; intervalMax = b; advertisingType = t
    }
}

/// LE Set Advertising Data / Scan Response Data (0x2008 / 0x2009): `len u8, data[31]`.
public struct LESetAdvertisingData {
    public var data: UnsafeRawBufferPointer

    public init?(_ p: UnsafeRawBufferPointer) {
        guard let n = p.first, p.count >= 1 + Int(n) else { return nil }
        data = UnsafeRawBufferPointer(rebasing: p[1..<1 + Int(n)])
    }
}

/// LE Set Extended Advertising Data (0x2037): `handle, operation, fragment_pref, len, data`.
public struct LESetExtendedAdvertisingData {
    public var advertisingHandle: UInt8
    public var operation: UInt8
    public var data: UnsafeRawBufferPointer

    public init?(_ p: UnsafeRawBufferPointer) {
        var r = ByteReader(p)
        guard let h = r.readU8(), let op = r.readU8(), r.skip(1), let n = r.readU8(), let d = r.readBytes(Int(n))
        else { return nil }
        advertisingHandle = h; operation = op; data = d
    }
}

/// LE Set Extended Advertising Enable (0x2039): `enable, n`, n × `{handle, duration, max_events}`.
public struct LESetExtendedAdvertisingEnable {
    public var enable: Bool
    public var sets: [(handle: UInt8, duration: UInt16, maxEvents: UInt8)]

    public init?(_ p: UnsafeRawBufferPointer) {
        var r = ByteReader(p)
        guard let e = r.readU8(), let n = r.readU8() else { return nil }
        enable = e != 0
        sets = []
        for _ in 0..<n {
            guard let h = r.readU8(), let d = r.readU16(), let m = r.readU8() else { return nil }
            sets.append((h, d, m))
        }
    }
}

/// Number formatting shared by descriptions: "7.5", "30", "1.25".
public enum Format {
    public static func ms(_ v: Double) -> String { DecimalText.format(v, maximumFractionDigits: 2) }
}
