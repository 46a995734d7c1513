import BTWire

/// Android's vendor Advertising Packet Content Filter command (`0xFD57`, AOSP `HCI_BLE_ADV_FILTER`,
/// FORMATS.md §9), as the Bluetooth stack sends it to offload each scan client's `ScanFilter`s: one filter index
/// per client, its conditions (manufacturer data, service UUID, …) added under that index, then a feature
/// selection that turns the index on. An unfiltered scan is a feature selection with no features (all-pass).
/// Byte layouts follow real captures (yeelock and Pokémon GO Plus btsnoop logs in ../shared).
public enum APCF {
    public static let opcode = HCIOpcode(rawValue: 0xFD57)

    /// The first parameter byte.
    public enum Subcommand: UInt8, Sendable {
        case enable = 0x00
        case featureSelection = 0x01
        case address = 0x02
        case serviceUUID = 0x03
        case localName = 0x05
        case manufacturerData = 0x06
    }

    /// The second parameter byte of every sub-command but enable.
    public enum Action: UInt8, Sendable {
        case add = 0x00
        case delete = 0x01
        case clear = 0x02
    }

    /// Feature selection bits: which conditions of the index must match (Android's `APCF_FEATURE_*`).
    public enum Feature {
        public static let none: UInt16 = 0x0000
        public static let serviceUUID: UInt16 = 0x0004
        public static let manufacturerData: UInt16 = 0x0020
    }

    /// List logic (OR within each feature type, one nibble per type) and filter logic (AND across types), as
    /// AOSP always programs them.
    static let listLogicOr: UInt16 = 0x1111
    static let filterLogicAnd: UInt8 = 0x01
    /// RSSI high threshold −128 dBm: every signal passes.
    static let rssiAnyHigh: UInt8 = 0x80
    /// Delivery mode 0: report immediately (no on-found / on-lost tracking).
    static let deliveryImmediate: UInt8 = 0x00
    /// Filter slots a controller of the kind in the real captures has free after a fresh enable.
    public static let controllerSlots: UInt8 = 0x1A
}

extension HCICommand {
    /// APCF enable (sub-command 0x00): `00 01` on, `00 00` off.
    public static func apcfEnable(_ on: Bool) -> HCICommand {
        HCICommand(APCF.opcode, parameters: [APCF.Subcommand.enable.rawValue, on ? 1 : 0])
    }

    /// APCF feature selection add (sub-command 0x01, 18 bytes): the filter index, the features that must match
    /// (`APCF.Feature.none` for an all-pass filter), OR list logic, AND filter logic, RSSI −128, immediate
    /// delivery, no tracking.
    public static func apcfAddFeatureSelection(index: UInt8, features: UInt16) -> HCICommand {
        HCICommand(APCF.opcode) { w in
            w.u8(APCF.Subcommand.featureSelection.rawValue)
            w.u8(APCF.Action.add.rawValue)
            w.u8(index)
            w.u16(features)
            w.u16(APCF.listLogicOr)
            w.u8(APCF.filterLogicAnd)
            w.u8(APCF.rssiAnyHigh)
            w.u8(APCF.deliveryImmediate)
            w.u16(0)  // on-found timeout
            w.u8(0)  // on-found timeout count
            w.u8(0)  // RSSI low threshold
            w.u16(0)  // on-lost timeout
            w.u16(0)  // tracking entries
        }
    }

    /// APCF feature selection delete (`01 01 index`): the client's filter index is gone, with its conditions.
    public static func apcfDeleteFeatureSelection(index: UInt8) -> HCICommand {
        HCICommand(APCF.opcode, parameters: [APCF.Subcommand.featureSelection.rawValue, APCF.Action.delete.rawValue, index])
    }

    /// APCF feature selection clear (`01 02 00`): every filter index is gone.
    public static let apcfClearFeatureSelections = HCICommand(
        APCF.opcode, parameters: [APCF.Subcommand.featureSelection.rawValue, APCF.Action.clear.rawValue, 0])

    /// APCF manufacturer data condition add (sub-command 0x06): company id and data, then a mask as long.
    public static func apcfAddManufacturerData(index: UInt8, company: UInt16, data: [UInt8], mask: [UInt8]) -> HCICommand {
        HCICommand(APCF.opcode) { w in
            w.u8(APCF.Subcommand.manufacturerData.rawValue)
            w.u8(APCF.Action.add.rawValue)
            w.u8(index)
            w.u16(company)
            w.append(data)
            w.append([0xFF, 0xFF] + mask)
        }
    }

    /// APCF 16-bit service UUID condition add (sub-command 0x03): the UUID and an all-ones mask.
    public static func apcfAddServiceUUID(index: UInt8, uuid16: UInt16) -> HCICommand {
        HCICommand(APCF.opcode) { w in
            w.u8(APCF.Subcommand.serviceUUID.rawValue)
            w.u8(APCF.Action.add.rawValue)
            w.u8(index)
            w.u16(uuid16)
            w.u16(0xFFFF)
        }
    }
}

extension HCIScript {
    /// An APCF command and its Command Complete: status, then the sub-command; the enable answers with its
    /// state, the others with their action and the filter slots left (`available`).
    public func apcf(_ command: HCICommand, available: UInt8 = APCF.controllerSlots) {
        let sub = command.parameters.first ?? 0
        if sub == APCF.Subcommand.enable.rawValue {
            commandComplete(command, returning: [HCIStatus.success.rawValue, sub, command.parameters.last ?? 0])
        } else {
            let action = command.parameters.count > 1 ? command.parameters[1] : 0
            commandComplete(command, returning: [HCIStatus.success.rawValue, sub, action, available])
        }
    }
}
