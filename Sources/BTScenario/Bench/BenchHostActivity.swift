import BTWire

/// The host's own radio activity in the `scans` benchmark shape: scan sessions started and stopped (duplicate
/// filtering off in half of them, links made while scanning), the phone's advertising turned on and off, and a
/// small set of peers it keeps reconnecting to — so a capture holds thousands of scans and findings.
struct BenchHostActivity {
    var scanning = false
    var advertising = false
    /// The record count at which the host next starts or stops a scan.
    var nextChange = 0

    /// Records a scan lasts, and the pause between scans.
    static let scanLength: ClosedRange<Int> = 800...2_400
    static let pauseLength: ClosedRange<Int> = 100...600
    /// Peers the phone reconnects to (random static addresses, top bits set).
    static let knownPeers: UInt64 = 96
    static let knownPeerBase: UInt64 = 0xC1_5C_A0_00_00_00
    static let scanInterval: UInt16 = 0x0060
    static let scanWindow: UInt16 = 0x0030
    static let advertisingInterval: UInt16 = 0x00A0
}

extension BenchmarkGenerator {
    /// Starts or stops a scan (and now and then the phone's advertising with it).
    func hostActivity() throws {
        if host.scanning {
            try scanEnable(false, filterDuplicates: false)
            host.nextChange = stats.records + rng.int(in: BenchHostActivity.pauseLength)
            if rng.chance(1, in: 3) {
                host.advertising.toggle()
                try advertisingEnable(host.advertising)
            }
        } else {
            try scanParameters(active: rng.chance(1, in: 2))
            try scanEnable(true, filterDuplicates: rng.chance(1, in: 2))
            host.nextChange = stats.records + rng.int(in: BenchHostActivity.scanLength)
        }
        host.scanning.toggle()
    }

    func scanParameters(active: Bool) throws {
        tick()
        let at = beginCommand(.leSetScanParameters)
        out.u8(active ? 1 : 0)
        out.u16(BenchHostActivity.scanInterval)
        out.u16(BenchHostActivity.scanWindow)
        out.u8(LEParameter.publicAddress)
        out.u8(0)
        try endCommand(at)
        try commandComplete(.leSetScanParameters)
    }

    func scanEnable(_ enable: Bool, filterDuplicates: Bool) throws {
        tick()
        let at = beginCommand(.leSetScanEnable)
        out.u8(enable ? 1 : 0)
        out.u8(filterDuplicates ? 1 : 0)
        try endCommand(at)
        try commandComplete(.leSetScanEnable)
    }

    func advertisingEnable(_ enable: Bool) throws {
        if enable {
            tick()
            let at = beginCommand(.leSetAdvertisingParameters)
            out.u16(BenchHostActivity.advertisingInterval)
            out.u16(BenchHostActivity.advertisingInterval)
            out.u8(LEParameter.advInd)
            out.u8(LEParameter.publicAddress)
            out.u8(LEParameter.publicAddress)
            for _ in 0..<6 { out.u8(0) }
            out.u8(0x07)
            out.u8(0)
            try endCommand(at)
            try commandComplete(.leSetAdvertisingParameters)
        }
        tick()
        let at = beginCommand(.leSetAdvertisingEnable)
        out.u8(enable ? 1 : 0)
        try endCommand(at)
        try commandComplete(.leSetAdvertisingEnable)
    }

    /// A successful Command Complete with no other return parameter.
    func commandComplete(_ opcode: HCIOpcode) throws {
        tick()
        let at = beginEvent(.commandComplete)
        out.u8(HCIEvent.defaultCommandCredits)
        out.u16(opcode.rawValue)
        out.u8(HCIStatus.success.rawValue)
        try endEvent(at)
        stats.hciRecords += 1
    }
}
