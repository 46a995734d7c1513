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
    static let actionDelete: UInt8 = 0x01
    static let actionClear: UInt8 = 0x02
    /// Feature selection (filter setting): adds, deletes or clears a filter index, one per scan client.
    static let featureSelectionSubcommand: UInt8 = 0x01

    /// APCF turned on by its enable sub-command.
    public var enabled = false
    /// Filter conditions added and not cleared.
    public var conditions = 0

    /// Whether filters sit in the controller now.
    public var isActive: Bool { enabled && conditions > 0 }
    /// Filter indexes installed now (feature selection added, not deleted): one per scan client.
    var installed: [ScanClient] = []
    /// A feature selection was seen: scan clients can be told apart on this controller.
    public var tracksClients = false

    public init() {}

    /// An accepted APCF command. Returns the scan clients it removed (their `removed` set to `at`).
    mutating func command(_ p: UnsafeRawBufferPointer, controller: UInt16, at: RecordRef) -> [ScanClient] {
        guard p.count >= 2 else { return [] }
        let sub = p[0], action = p[1]
        if sub == Self.enableSubcommand {
            enabled = action != 0
        } else if sub == Self.featureSelectionSubcommand {
            return featureSelection(p, action: action, controller: controller, at: at)
        } else if Self.filterSubcommands.contains(sub) {
            if action == Self.actionAdd { conditions += 1 } else if action == Self.actionClear { conditions = 0 }
        }
        return []
    }

    /// Every installed client removed at `at` (a clear, or HCI Reset emptying the controller's table).
    mutating func removeAll(at: RecordRef) -> [ScanClient] {
        let removed = installed.map { client -> ScanClient in
            var done = client
            done.removed = at
            return done
        }
        installed.removeAll()
        return removed
    }

    /// Feature selection: [0x01, action, filter index, feature selection (2 bytes, little-endian), …]; a
    /// delete carries the index only, a clear nothing more.
    mutating func featureSelection(_ p: UnsafeRawBufferPointer, action: UInt8, controller: UInt16, at: RecordRef) -> [ScanClient] {
        tracksClients = true
        var removed: [ScanClient] = []
        func remove(where match: (ScanClient) -> Bool) {
            installed.removeAll { client in
                guard match(client) else { return false }
                var done = client
                done.removed = at
                removed.append(done)
                return true
            }
        }
        switch action {
        case Self.actionAdd where p.count >= 5:
            let index = p[2], features = UInt16(p[3]) | UInt16(p[4]) << 8
            // Adding an index again replaces its setting: the same client, unless what it filters changed.
            if let i = installed.firstIndex(where: { $0.filterIndex == index }) {
                if installed[i].features == features { return [] }
                remove { $0.filterIndex == index }
            }
            installed.append(ScanClient(controller: controller, filterIndex: index, features: features, added: at))
        case Self.actionDelete where p.count >= 3:
            let index = p[2]
            remove { $0.filterIndex == index }
        case Self.actionClear:
            removed = removeAll(at: at)
        default:
            break
        }
        return removed
    }
}
