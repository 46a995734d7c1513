import BTWire

/// What a (Enhanced) Connection Complete reports about a new link.
public struct ConnectionCompleteInfo: Sendable {
    public var status: HCIStatus = .success
    public var handle: UInt16
    /// `LEParameter.centralRole` or `.peripheralRole`.
    public var role: UInt8
    public var peer: PeerAddress
    /// Units of 1.25 ms.
    public var interval: UInt16
    public var latency: UInt16
    /// Units of 10 ms.
    public var supervisionTimeout: UInt16
    public var localRPA = BDAddr(rawValue: 0)
    public var peerRPA = BDAddr(rawValue: 0)

    public init(handle: UInt16, role: UInt8, peer: PeerAddress, interval: UInt16, latency: UInt16,
                supervisionTimeout: UInt16) {
        self.handle = handle
        self.role = role
        self.peer = peer
        self.interval = interval
        self.latency = latency
        self.supervisionTimeout = supervisionTimeout
    }
}

/// LE Meta subevents (Core Vol 4 Part E §7.7.65).
extension HCIEvent {
    /// LE Connection Complete (0x01), 18 bytes of parameters.
    public static func leConnectionComplete(_ c: ConnectionCompleteInfo) -> HCIEvent {
        HCIEvent(le: .connectionComplete) { w in
            w.u8(c.status.rawValue)
            w.u16(c.handle)
            w.u8(c.role)
            w.u8(c.peer.type)
            w.address(c.peer.address)
            w.u16(c.interval)
            w.u16(c.latency)
            w.u16(c.supervisionTimeout)
            w.u8(LEParameter.clockAccuracy500ppm)
        }
    }

    /// LE Enhanced Connection Complete (0x0A), 30 bytes: adds the local and peer resolvable addresses.
    public static func leEnhancedConnectionComplete(_ c: ConnectionCompleteInfo) -> HCIEvent {
        HCIEvent(le: .enhancedConnectionComplete) { w in
            w.u8(c.status.rawValue)
            w.u16(c.handle)
            w.u8(c.role)
            w.u8(c.peer.type)
            w.address(c.peer.address)
            w.address(c.localRPA)
            w.address(c.peerRPA)
            w.u16(c.interval)
            w.u16(c.latency)
            w.u16(c.supervisionTimeout)
            w.u8(LEParameter.clockAccuracy500ppm)
        }
    }

    /// LE Advertising Report (0x02) with one or more legacy reports, fields in the order bluez reads them.
    public static func leAdvertisingReport(_ reports: [LegacyAdvertisingReport]) -> HCIEvent {
        HCIEvent(le: .advertisingReport) { w in
            w.u8(UInt8(truncatingIfNeeded: reports.count))
            for r in reports { r.write(to: &w) }
        }
    }

    /// LE Extended Advertising Report (0x0D).
    public static func leExtendedAdvertisingReport(_ reports: [ExtendedAdvertisingReport]) -> HCIEvent {
        HCIEvent(le: .extendedAdvertisingReport) { w in
            w.u8(UInt8(truncatingIfNeeded: reports.count))
            for r in reports { r.write(to: &w) }
        }
    }

    /// LE Connection Update Complete (0x03).
    public static func leConnectionUpdateComplete(handle: UInt16, interval: UInt16, latency: UInt16,
                                                  supervisionTimeout: UInt16,
                                                  status: HCIStatus = .success) -> HCIEvent {
        HCIEvent(le: .connectionUpdateComplete) { w in
            w.u8(status.rawValue)
            w.u16(handle)
            w.u16(interval)
            w.u16(latency)
            w.u16(supervisionTimeout)
        }
    }

    /// LE Read Remote Features Complete (0x04).
    public static func leRemoteFeaturesComplete(handle: UInt16, features: UInt64) -> HCIEvent {
        HCIEvent(le: .readRemoteFeaturesComplete) { w in
            w.u8(HCIStatus.success.rawValue)
            w.u16(handle)
            w.u64(features)
        }
    }

    /// LE Long Term Key Request (0x05), sent to a peripheral's host when the central starts encryption.
    public static func leLongTermKeyRequest(handle: UInt16, random: UInt64, ediv: UInt16) -> HCIEvent {
        HCIEvent(le: .longTermKeyRequest) { w in
            w.u16(handle)
            w.u64(random)
            w.u16(ediv)
        }
    }

    /// LE Data Length Change (0x07).
    public static func leDataLengthChange(handle: UInt16, maxTxOctets: UInt16, maxTxTime: UInt16,
                                          maxRxOctets: UInt16, maxRxTime: UInt16) -> HCIEvent {
        HCIEvent(le: .dataLengthChange) { w in
            w.u16(handle)
            w.u16(maxTxOctets)
            w.u16(maxTxTime)
            w.u16(maxRxOctets)
            w.u16(maxRxTime)
        }
    }

    /// LE PHY Update Complete (0x0C).
    public static func lePHYUpdateComplete(handle: UInt16, txPHY: UInt8, rxPHY: UInt8,
                                           status: HCIStatus = .success) -> HCIEvent {
        HCIEvent(le: .phyUpdateComplete) { w in
            w.u8(status.rawValue)
            w.u16(handle)
            w.u8(txPHY)
            w.u8(rxPHY)
        }
    }

    /// LE Advertising Set Terminated (0x12): the set stopped because a central connected to it.
    public static func leAdvertisingSetTerminated(advertisingHandle: UInt8, connectionHandle: UInt16,
                                                  completedEvents: UInt8) -> HCIEvent {
        HCIEvent(le: .advertisingSetTerminated) { w in
            w.u8(HCIStatus.success.rawValue)
            w.u8(advertisingHandle)
            w.u16(connectionHandle)
            w.u8(completedEvents)
        }
    }
}
