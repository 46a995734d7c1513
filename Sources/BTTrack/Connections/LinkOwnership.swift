import BTWire
import BTCapture

/// Who drove a link, as far as the capture shows: the app's rules judge only the app's links. Decided once, when
/// the model is finished, from what the link carried.
public enum LinkOwnership: Sendable, Equatable {
    /// The app's, or nothing shows otherwise.
    case app
    /// The OS's: `reason` says what shows it.
    case os(reason: OSReason)

    /// What shows a link is the OS's, as the audit's notes say it. A plain value, not a string, so a link's
    /// summary (`LinkSummary`) is plain bytes that can be set aside and read back (`btlens energy`).
    public enum OSReason: UInt8, Sendable, CustomStringConvertible {
        case brEdr
        case humanInterfaceDevice
        case bondedAccessory
        case vendorAccessory
        /// Another app's, by the bug report (`AppFocus`): not the app audited.
        case anotherApp
        /// Nobody the bug report names (`AppFocus`): not judged as the app audited.
        case unattributed

        public var description: String {
            switch self {
            case .brEdr: "a BR/EDR link (classic profiles)"
            case .humanInterfaceDevice: "an HID-over-GATT link, whose parameters the OS's HID host sets"
            case .bondedAccessory:
                "encrypted before any ATT and never carried a request of the phone's GATT client (a bonded accessory the OS connected)"
            case .vendorAccessory:
                "encrypted before any ATT and carrying the phone maker's own L2CAP channel (an accessory the OS connected, as iOS does to Apple and Find My accessories)"
            case .anotherApp: "another app's link, by the bug report"
            case .unattributed: "a link the bug report does not name the audited app's"
            }
        }
    }

    public var isApp: Bool { self == .app }

    /// Human Interface Device service (HID over GATT): the OS's HID host owns such links and their parameters.
    static let humanInterfaceDevice = BluetoothUUID(uuid16: 0x1812)

    /// Client operations: what the phone's own GATT client (the app) sends.
    static let clientKinds: Set<ActivityKind> = [.read, .readBlob, .readMultiple, .readByType, .write, .writeCommand,
                                                 .signedWrite, .preparedWrite]

    /// Whether the phone's own GATT client used the link: discovered, read, wrote or subscribed.
    static func hostClientDrove(_ c: Connection) -> Bool {
        c.discoveries.contains { $0.byHost } || c.series.contains { $0.sent && clientKinds.contains($0.kind) }
            || c.events.contains { if case .subscription(_, _, _, true) = $0.kind { return true } else { return false } }
    }

    static func classify(_ c: Connection) -> LinkOwnership {
        switch c.transport {
        case .brEdr, .sco: return .os(reason: .brEdr)
        case .le, .unknown: break
        }
        if c.gatt.services.contains(where: { $0.uuid == humanInterfaceDevice }) {
            return .os(reason: .humanInterfaceDevice)
        }
        let encryptedFirst = c.air == nil && c.events.first(where: {
            if case .encryptionChanged(true, .success) = $0.kind { return true } else { return false }
        }).map { encrypted in c.firstATT.map { encrypted.at.number <= $0.number } ?? true } ?? false
        // An accessory the OS itself connects (iOS to Apple and Find My accessories, every few minutes): encrypted
        // at once and speaking the vendor's private L2CAP channel, whatever GATT the OS then does.
        if encryptedFirst, c.vendorFixedChannelPDUs > 0 { return .os(reason: .vendorAccessory) }
        // A bonded accessory the OS reconnects: encryption before any ATT, and no request of the phone's client.
        if !hostClientDrove(c), c.air == nil, let encrypted = c.events.first(where: {
            if case .encryptionChanged(true, .success) = $0.kind { return true } else { return false }
        }), c.firstATT.map({ encrypted.at.number <= $0.number }) ?? true {
            return .os(reason: .bondedAccessory)
        }
        return .app
    }
}

extension Connection {
    /// Decides whose link it is (`LinkOwnership`) and whether the phone's client drove it, once, when it is judged
    /// or the model is finished.
    func classifyOwnership() {
        ownership = LinkOwnership.classify(self)
        clientDriven = LinkOwnership.hostClientDrove(self)
    }
}
