import BTWire

/// An HCI command: opcode and parameters (Core Vol 4 Part E §5.4.1). `packet` is the bytes after the H4
/// indicator. Factories below build the parameters in spec order, so a scenario never spells bytes by hand.
public struct HCICommand: Sendable {
    public var opcode: HCIOpcode
    public var parameters: [UInt8]

    public init(_ opcode: HCIOpcode, parameters: [UInt8] = []) {
        self.opcode = opcode
        self.parameters = parameters
    }

    public init(_ opcode: HCIOpcode, _ body: (inout ByteWriter) -> Void) {
        self.init(opcode, parameters: ByteWriter.build(body))
    }

    /// `opcode u16, plen u8, parameters`.
    public var packet: [UInt8] {
        ByteWriter.build(capacity: HCIFraming.commandHeaderLength + parameters.count) { w in
            w.u16(opcode.rawValue)
            w.u8(UInt8(truncatingIfNeeded: parameters.count))
            w.append(parameters)
        }
    }
}

/// Connection parameters as LE Create Connection, Connection Update and the L2CAP request carry them.
public struct ConnectionParameters: Sendable, Equatable {
    /// Units of 1.25 ms.
    public var intervalMin: UInt16
    public var intervalMax: UInt16
    /// Connection events the peripheral may skip.
    public var latency: UInt16
    /// Units of 10 ms.
    public var supervisionTimeout: UInt16
    /// Units of 0.625 ms.
    public var minCELength: UInt16
    public var maxCELength: UInt16

    public init(intervalMin: UInt16, intervalMax: UInt16, latency: UInt16 = 0, supervisionTimeout: UInt16,
                minCELength: UInt16 = 0, maxCELength: UInt16 = 0) {
        self.intervalMin = intervalMin
        self.intervalMax = intervalMax
        self.latency = latency
        self.supervisionTimeout = supervisionTimeout
        self.minCELength = minCELength
        self.maxCELength = maxCELength
    }

    /// Parameters from times in microseconds.
    public static func interval(minMicroseconds: Int64, maxMicroseconds: Int64, latency: UInt16 = 0,
                                timeoutMicroseconds: Int64) -> ConnectionParameters {
        ConnectionParameters(intervalMin: HCIUnits.connectionInterval(microseconds: minMicroseconds),
                             intervalMax: HCIUnits.connectionInterval(microseconds: maxMicroseconds),
                             latency: latency,
                             supervisionTimeout: HCIUnits.supervisionTimeout(microseconds: timeoutMicroseconds))
    }

    func write(to w: inout ByteWriter, includeCELength: Bool = true) {
        w.u16(intervalMin)
        w.u16(intervalMax)
        w.u16(latency)
        w.u16(supervisionTimeout)
        if includeCELength {
            w.u16(minCELength)
            w.u16(maxCELength)
        }
    }
}

/// A peer to connect to.
public struct PeerAddress: Sendable, Hashable {
    public var address: BDAddr
    /// `LEParameter.publicAddress` or `.randomAddress`.
    public var type: UInt8

    public init(_ address: BDAddr, type: UInt8) {
        self.address = address
        self.type = type
    }
}

extension HCICommand {
    // MARK: Controller setup

    public static let reset = HCICommand(ScenarioCodes.reset)
    public static let readBDAddr = HCICommand(ScenarioCodes.readBDAddr)
    public static let readLocalVersion = HCICommand(ScenarioCodes.readLocalVersion)
    public static let leReadBufferSize = HCICommand(ScenarioCodes.leReadBufferSize)

    public static func setEventMask(_ mask: UInt64) -> HCICommand {
        HCICommand(ScenarioCodes.setEventMask) { $0.u64(mask) }
    }

    public static func leSetEventMask(_ mask: UInt64) -> HCICommand {
        HCICommand(ScenarioCodes.leSetEventMask) { $0.u64(mask) }
    }

    public static func leSetRandomAddress(_ address: BDAddr) -> HCICommand {
        HCICommand(ScenarioCodes.leSetRandomAddress) { $0.address(address) }
    }

    // MARK: Scanning

    /// LE Set Scan Parameters (0x200B): intervals in 0.625 ms slots.
    public static func leSetScanParameters(active: Bool, interval: UInt16, window: UInt16,
                                           ownAddressType: UInt8 = LEParameter.publicAddress,
                                           filterPolicy: UInt8 = LEParameter.acceptAll) -> HCICommand {
        HCICommand(.leSetScanParameters) { w in
            w.u8(active ? LEParameter.activeScan : LEParameter.passiveScan)
            w.u16(interval)
            w.u16(window)
            w.u8(ownAddressType)
            w.u8(filterPolicy)
        }
    }

    /// LE Set Scan Enable (0x200C).
    public static func leSetScanEnable(_ enable: Bool, filterDuplicates: Bool) -> HCICommand {
        HCICommand(.leSetScanEnable) { w in
            w.u8(enable ? LEParameter.enabled : LEParameter.disabled)
            w.u8(filterDuplicates ? LEParameter.enabled : LEParameter.disabled)
        }
    }

    /// One PHY's settings in LE Set Extended Scan Parameters.
    public struct ExtendedScanPHY: Sendable {
        /// `LEParameter.phy1MBit` or `.phyCodedBit`.
        public var phyBit: UInt8
        public var active: Bool
        public var interval: UInt16
        public var window: UInt16
        public init(phyBit: UInt8, active: Bool, interval: UInt16, window: UInt16) {
            self.phyBit = phyBit
            self.active = active
            self.interval = interval
            self.window = window
        }
    }

    /// LE Set Extended Scan Parameters (0x2041): the PHY mask, then one block per set bit, lowest bit first.
    public static func leSetExtendedScanParameters(ownAddressType: UInt8 = LEParameter.publicAddress,
                                                   filterPolicy: UInt8 = LEParameter.acceptAll,
                                                   phys: [ExtendedScanPHY]) -> HCICommand {
        let ordered = phys.sorted { $0.phyBit < $1.phyBit }
        return HCICommand(.leSetExtendedScanParameters) { w in
            w.u8(ownAddressType)
            w.u8(filterPolicy)
            w.u8(ordered.reduce(0) { $0 | $1.phyBit })
            for p in ordered {
                w.u8(p.active ? LEParameter.activeScan : LEParameter.passiveScan)
                w.u16(p.interval)
                w.u16(p.window)
            }
        }
    }

    /// LE Set Extended Scan Enable (0x2042). `filterDuplicates`: 0 off, 1 on, 2 on and reset each period.
    public static func leSetExtendedScanEnable(_ enable: Bool, filterDuplicates: UInt8, duration: UInt16 = 0,
                                               period: UInt16 = 0) -> HCICommand {
        HCICommand(.leSetExtendedScanEnable) { w in
            w.u8(enable ? LEParameter.enabled : LEParameter.disabled)
            w.u8(filterDuplicates)
            w.u16(duration)
            w.u16(period)
        }
    }

    // MARK: Connections

    /// LE Create Connection (0x200D).
    public static func leCreateConnection(peer: PeerAddress, scanInterval: UInt16, scanWindow: UInt16,
                                          parameters: ConnectionParameters,
                                          ownAddressType: UInt8 = LEParameter.publicAddress,
                                          useAcceptList: Bool = false) -> HCICommand {
        HCICommand(.leCreateConnection) { w in
            w.u16(scanInterval)
            w.u16(scanWindow)
            w.u8(useAcceptList ? LEParameter.acceptListOnly : LEParameter.acceptAll)
            w.u8(peer.type)
            w.address(peer.address)
            w.u8(ownAddressType)
            parameters.write(to: &w)
        }
    }

    /// LE Extended Create Connection (0x2043) on the PHYs in `phyMask`, the same settings for each.
    public static func leExtendedCreateConnection(peer: PeerAddress, phyMask: UInt8, scanInterval: UInt16,
                                                  scanWindow: UInt16, parameters: ConnectionParameters,
                                                  ownAddressType: UInt8 = LEParameter.publicAddress) -> HCICommand {
        HCICommand(.leExtendedCreateConnection) { w in
            w.u8(LEParameter.acceptAll)
            w.u8(ownAddressType)
            w.u8(peer.type)
            w.address(peer.address)
            w.u8(phyMask)
            for bit in [LEParameter.phy1MBit, LEParameter.phy2MBit, LEParameter.phyCodedBit] where phyMask & bit != 0 {
                w.u16(scanInterval)
                w.u16(scanWindow)
                parameters.write(to: &w)
            }
        }
    }

    public static let leCreateConnectionCancel = HCICommand(.leCreateConnectionCancel)

    /// LE Connection Update (0x2013).
    public static func leConnectionUpdate(handle: UInt16, parameters: ConnectionParameters) -> HCICommand {
        HCICommand(.leConnectionUpdate) { w in
            w.u16(handle)
            parameters.write(to: &w)
        }
    }

    public static func leReadRemoteFeatures(handle: UInt16) -> HCICommand {
        HCICommand(.leReadRemoteFeatures) { $0.u16(handle) }
    }

    /// LE Set Data Length (0x2022).
    public static func leSetDataLength(handle: UInt16, txOctets: UInt16, txTime: UInt16) -> HCICommand {
        HCICommand(.leSetDataLength) { w in
            w.u16(handle)
            w.u16(txOctets)
            w.u16(txTime)
        }
    }

    /// LE Set PHY (0x2032): preferred TX and RX PHY masks, no coding preference.
    public static func leSetPHY(handle: UInt16, txPHYs: UInt8, rxPHYs: UInt8) -> HCICommand {
        HCICommand(.leSetPHY) { w in
            w.u16(handle)
            w.u8(0)  // all_phys: the host states both preferences
            w.u8(txPHYs)
            w.u8(rxPHYs)
            w.u16(0)  // PHY options: no Coded preference
        }
    }

    /// LE Enable Encryption (0x2019) with a stored or freshly generated key.
    public static func leEnableEncryption(handle: UInt16, random: UInt64, ediv: UInt16, ltk: [UInt8]) -> HCICommand {
        HCICommand(.leEnableEncryption) { w in
            w.u16(handle)
            w.u64(random)
            w.u16(ediv)
            w.append(ltk)
        }
    }

    /// LE Long Term Key Request Reply (0x201A), the peripheral's answer to an LTK Request.
    public static func leLongTermKeyRequestReply(handle: UInt16, ltk: [UInt8]) -> HCICommand {
        HCICommand(ScenarioCodes.leLongTermKeyRequestReply) { w in
            w.u16(handle)
            w.append(ltk)
        }
    }

    /// Disconnect (0x0406).
    public static func disconnect(handle: UInt16, reason: HCIStatus) -> HCICommand {
        HCICommand(.disconnect) { w in
            w.u16(handle)
            w.u8(reason.rawValue)
        }
    }

    public static func readRSSI(handle: UInt16) -> HCICommand {
        HCICommand(.readRSSI) { $0.u16(handle) }
    }
}
