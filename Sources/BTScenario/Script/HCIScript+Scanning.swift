import BTWire

/// Scanning, legacy (§7.8.10–11) and extended (§7.8.64–65), and the reports a scanner receives.
extension HCIScript {
    public func startScan(active: Bool, interval: UInt16, window: UInt16, filterDuplicates: Bool,
                          ownAddressType: UInt8 = LEParameter.publicAddress) {
        commandComplete(.leSetScanParameters(active: active, interval: interval, window: window,
                                             ownAddressType: ownAddressType))
        commandComplete(.leSetScanEnable(true, filterDuplicates: filterDuplicates))
    }

    /// Stops scanning; the report stream (if any) stops with it.
    public func stopScan() {
        background = nil
        commandComplete(.leSetScanEnable(false, filterDuplicates: false))
    }

    public func startExtendedScan(phys: [HCICommand.ExtendedScanPHY], filterDuplicates: UInt8,
                                  ownAddressType: UInt8 = LEParameter.publicAddress) {
        commandComplete(.leSetExtendedScanParameters(ownAddressType: ownAddressType, phys: phys))
        commandComplete(.leSetExtendedScanEnable(true, filterDuplicates: filterDuplicates))
    }

    public func stopExtendedScan() {
        background = nil
        commandComplete(.leSetExtendedScanEnable(false, filterDuplicates: LEParameter.disabled))
    }

    public func report(_ reports: [LegacyAdvertisingReport]) { emit(.leAdvertisingReport(reports)) }
    public func report(extended reports: [ExtendedAdvertisingReport]) { emit(.leExtendedAdvertisingReport(reports)) }
}
