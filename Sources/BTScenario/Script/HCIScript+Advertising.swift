import BTWire

/// Advertising as a peripheral, legacy (§7.8.5–9) and extended (§7.8.53–56).
extension HCIScript {
    /// Parameters, data, scan response, enable.
    public func startLegacyAdvertising(intervalMin: UInt16, intervalMax: UInt16, data: AdvertisingData,
                                       scanResponse: AdvertisingData, type: UInt8 = LEParameter.advInd) {
        commandComplete(.leSetAdvertisingParameters(intervalMin: intervalMin, intervalMax: intervalMax, type: type))
        commandComplete(.leSetAdvertisingData(data))
        commandComplete(.leSetScanResponseData(scanResponse))
        setAdvertising(enabled: true)
    }

    public func setAdvertising(enabled: Bool) {
        commandComplete(.leSetAdvertisingEnable(enabled))
    }

    /// TX power the controller picked for an extended set.
    public static let selectedTxPower: Int8 = 9

    /// Parameters (answered with the selected TX power), data, optional scan response, enable.
    public func startExtendedAdvertising(handle: UInt8, properties: UInt16, intervalMin: UInt32, intervalMax: UInt32,
                                         data: AdvertisingData, scanResponse: AdvertisingData?,
                                         ownAddressType: UInt8 = LEParameter.publicAddress, sid: UInt8 = 0) {
        commandComplete(.leSetExtendedAdvertisingParameters(handle: handle, properties: properties,
                                                            intervalMin: intervalMin, intervalMax: intervalMax,
                                                            ownAddressType: ownAddressType, sid: sid),
                        returning: [HCIStatus.success.rawValue, UInt8(bitPattern: Self.selectedTxPower)])
        commandComplete(.leSetExtendedAdvertisingData(handle: handle, data))
        if let scanResponse { commandComplete(.leSetExtendedScanResponseData(handle: handle, scanResponse)) }
        setExtendedAdvertising(enabled: true, handles: [handle])
    }

    public func setExtendedAdvertising(enabled: Bool, handles: [UInt8]) {
        commandComplete(.leSetExtendedAdvertisingEnable(enabled, sets: handles.map { .init(handle: $0) }))
    }
}
