import BTWire
import BTCapture
import BTDecode

/// Pairs HCI commands with their Command Complete / Command Status, keeping the command's parameters so that
/// a tracker acts on what the controller accepted, not on what the host asked. Only opcodes trackers care about
/// are kept (a copy of a few bytes per command, never per ACL or advertising packet).
public struct CommandCorrelator {
    /// A command waiting for its Command Complete or Command Status: its opcode, parameters and record.
    public struct Pending: Sendable {
        public var opcode: HCIOpcode
        public var at: RecordRef
        public var parameters: [UInt8]

        public init(opcode: HCIOpcode, at: RecordRef, parameters: [UInt8]) {
            self.opcode = opcode
            self.at = at
            self.parameters = parameters
        }
    }

    /// Commands whose outcome changes tracked state.
    public static let tracked: Set<UInt16> = [
        HCIOpcode.leSetScanParameters.rawValue, HCIOpcode.leSetScanEnable.rawValue,
        HCIOpcode.leSetExtendedScanParameters.rawValue, HCIOpcode.leSetExtendedScanEnable.rawValue,
        HCIOpcode.leSetAdvertisingParameters.rawValue, HCIOpcode.leSetAdvertisingData.rawValue,
        HCIOpcode.leSetScanResponseData.rawValue, HCIOpcode.leSetAdvertisingEnable.rawValue,
        HCIOpcode.leSetExtendedAdvertisingParameters.rawValue, HCIOpcode.leSetExtendedAdvertisingData.rawValue,
        HCIOpcode.leSetExtendedScanResponseData.rawValue, HCIOpcode.leSetExtendedAdvertisingEnable.rawValue,
        HCIOpcode.leCreateConnection.rawValue, HCIOpcode.leExtendedCreateConnection.rawValue,
        HCIOpcode.leCreateConnectionCancel.rawValue, HCIOpcode.createConnection.rawValue,
        HCIOpcode.leConnectionUpdate.rawValue, HCIOpcode.disconnect.rawValue, HCIOpcode.leSetPHY.rawValue,
        HCIOpcode.leSetDataLength.rawValue, HCIOpcode.leEnableEncryption.rawValue,
        ScanFilterOffload.opcode.rawValue,
        HCIOpcode.writeScanEnable.rawValue, HCIOpcode.writePageScanActivity.rawValue,
        HCIOpcode.writeInquiryScanActivity.rawValue, HCIOpcode.writePageScanType.rawValue,
        HCIOpcode.writeInquiryScanType.rawValue, HCIOpcode.writeLocalName.rawValue,
        HCIOpcode.inquiry.rawValue, HCIOpcode.inquiryCancel.rawValue,
    ]

    var pending: [UInt32: Pending] = [:]

    public init() {}

    static func key(_ controller: UInt16, _ opcode: UInt16) -> UInt32 { UInt32(controller) << 16 | UInt32(opcode) }

    /// Remembers a tracked command.
    public mutating func command(_ c: HCICommandPacket, at: RecordRef) {
        guard Self.tracked.contains(c.opcode.rawValue) else { return }
        pending[Self.key(at.controller, c.opcode.rawValue)] = Pending(opcode: c.opcode, at: at, parameters: Array(c.parameters))
    }

    /// The command a Command Complete or Command Status answers, removed from the pending set.
    public mutating func answer(controller: UInt16, opcode: HCIOpcode) -> Pending? {
        pending.removeValue(forKey: Self.key(controller, opcode.rawValue))
    }
}
