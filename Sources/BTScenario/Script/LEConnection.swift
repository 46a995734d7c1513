import BTWire

/// One LE link as the script tracks it: the handle and peer the controller reported, and the parameters in
/// force (updated by Connection Update Complete), so later delays follow the real connection interval.
public final class LEConnection {
    public let handle: UInt16
    public let peer: PeerAddress
    /// `LEParameter.centralRole` when the capturing host is central.
    public let role: UInt8
    /// Units of 1.25 ms.
    public internal(set) var interval: UInt16
    public internal(set) var latency: UInt16
    /// Units of 10 ms.
    public internal(set) var supervisionTimeout: UInt16
    public internal(set) var encrypted = false
    public internal(set) var isOpen = true
    /// Largest LL payload in each direction (LE Data Length Change); 27 until changed.
    public internal(set) var maxTxOctets = UInt16(HCIFraming.leMinimumACLDataLength)
    public internal(set) var maxRxOctets = UInt16(HCIFraming.leMinimumACLDataLength)

    init(handle: UInt16, peer: PeerAddress, role: UInt8, interval: UInt16, latency: UInt16,
         supervisionTimeout: UInt16) {
        self.handle = handle
        self.peer = peer
        self.role = role
        self.interval = interval
        self.latency = latency
        self.supervisionTimeout = supervisionTimeout
    }

    public var intervalMicroseconds: Int64 { HCIUnits.microseconds(connectionInterval: interval) }
    public var isCentral: Bool { role == LEParameter.centralRole }
}
