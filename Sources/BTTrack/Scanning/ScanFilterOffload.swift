import BTWire
import BTDecode

/// Android's offloaded scan filters: the vendor Advertising Packet Content Filter command (`0xFD57`, AOSP
/// `HCI_BLE_ADV_FILTER`, FORMATS.md §9) that `ScanFilter`s become when the controller supports them. With
/// filters in the controller, a scan with duplicate filtering off (Android's setting for every client) wakes
/// the host only for the advertisers the filters let through.
public struct ScanFilterOffload: Sendable, Equatable {
    /// `0xFD57`.
    public static let opcode = HCIOpcode(rawValue: 0xFD57)
    /// Sub-commands: the first parameter byte.
    static let enableSubcommand: UInt8 = 0x00
    /// Feature selection and list logic (0x01), then one sub-command per filter type (address, service UUID,
    /// solicitation UUID, local name, manufacturer data, service data, …): 0x01–0x09 and 0x0A–0x0F in newer
    /// stacks. Their second byte is the action.
    static let filterSubcommands: ClosedRange<UInt8> = 0x02...0x0F
    static let actionAdd: UInt8 = 0x00
    static let actionClear: UInt8 = 0x02

    /// APCF turned on by its enable sub-command.
    public var enabled = false
    /// Filter conditions added and not cleared.
    public var conditions = 0

    /// Whether filters sit in the controller now.
    public var isActive: Bool { enabled && conditions > 0 }

    public init() {}

    /// An accepted APCF command.
    mutating func command(_ p: UnsafeRawBufferPointer) {
        guard p.count >= 2 else { return }
        let sub = p[0], action = p[1]
        if sub == Self.enableSubcommand {
            enabled = action != 0
        } else if Self.filterSubcommands.contains(sub) {
            if action == Self.actionAdd { conditions += 1 } else if action == Self.actionClear { conditions = 0 }
        }
    }
}
