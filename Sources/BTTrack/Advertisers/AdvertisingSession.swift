import BTWire
import BTCapture
import BTDecode

/// Why an own-advertising session ended.
public enum AdvertisingEndReason: Sendable, Equatable {
    /// LE Set (Extended) Advertising Enable(0) accepted.
    case disabled
    /// A central connected: legacy connectable advertising stops by itself on the Connection Complete; an
    /// extended set reports it with LE Advertising Set Terminated, status 0.
    case connected
    /// LE Advertising Set Terminated with a non-zero status: 0x3C Advertising Timeout (the enable's duration
    /// ran out), 0x43 Limit Reached (its maximum number of events), or another error.
    case terminated(HCIStatus)
    /// HCI Reset or the controller was removed.
    case reset

    /// "disabled", "connected", "timeout", "limit_reached", "terminated", "reset".
    public var name: String {
        switch self {
        case .disabled: "disabled"
        case .connected: "connected"
        case .terminated(let status):
            switch status.rawValue {
            case 0x3C: "timeout"
            case 0x43: "limit_reached"
            default: "terminated"
            }
        case .reset: "reset"
        }
    }
}

/// Our own advertising (peripheral role): legacy or extended set, from accepted enable to disable/termination.
///
/// Legacy advertising stops when a central connects to it, so a host that keeps advertising while connected
/// must enable it again: that re-enable is a new session with `resumedAfterConnection` set, which is what the
/// "advertising left on after a central connected" rule looks for.
public struct AdvertisingSession: Sendable {
    public var controller: UInt16
    /// 0 for legacy advertising.
    public var setHandle: UInt8
    public var start: RecordRef
    public var end: RecordRef?
    public var isExtended: Bool
    /// Connections (as peripheral) that came up while advertising was on.
    public var connectionsWhileAdvertising: [RecordRef]

    /// Why it ended; nil while still on at the end of the capture.
    public var endReason: AdvertisingEndReason?
    /// The Connection Complete of the central whose connection ended this session (for an extended set whose
    /// Advertising Set Terminated names a connection btlens did not see come up: that event's record).
    public var endedByConnection: RecordRef?
    /// The previous session of this set ended because a central connected, and the host enabled the set
    /// again: the Connection Complete of that connection.
    public var resumedAfterConnection: RecordRef?
    /// Advertising interval range requested (legacy ×0.625 ms u16, extended ×0.625 ms u24), in ms.
    public var intervalMinimumMilliseconds: Double?
    public var intervalMaximumMilliseconds: Double?
    /// Legacy Advertising_Type: 0 ADV_IND, 1 ADV_DIRECT_IND (high duty), 2 ADV_SCAN_IND, 3 ADV_NONCONN_IND,
    /// 4 ADV_DIRECT_IND (low duty); nil for extended sets or when no parameters were set (default ADV_IND).
    public var advertisingType: UInt8?
    /// Extended Advertising_Event_Properties (bit 0 connectable, 1 scannable, 2 directed, 3 high duty,
    /// 4 legacy PDUs, 5 anonymous, 6 include TX power); nil for legacy advertising.
    public var properties: UInt16?
    /// Whether the parameters seen allow a central to connect.
    public var isConnectable: Bool
    public var isScannable: Bool
    /// Whether an accepted Set (Extended) Advertising Parameters preceded the enable.
    public var parametersKnown: Bool
    /// The advertising and scan-response data in effect (the latest set while on).
    public var advertisingData: [UInt8]
    public var scanResponseData: [UInt8]
    /// Parsed from the data: Complete (else Shortened) Local Name and service UUIDs of both.
    public var localName: String?
    public var serviceUUIDs: [BluetoothUUID]
    /// Extended enable: duration (nil = until disabled) and maximum events (nil = no limit).
    public var durationMilliseconds: Double?
    public var maximumEvents: UInt8?
    /// Num_Completed_Extended_Advertising_Events from LE Advertising Set Terminated.
    public var completedEvents: UInt8?

    public var duration: Duration? { end.map { $0.timestamp - start.timestamp } }

    /// "ADV_IND" … for legacy types and extended sets using legacy PDUs; "ext-connectable",
    /// "ext-scannable,tx-power" … for other extended sets; "unknown" for an extended set whose parameters
    /// the capture does not show.
    public var typeName: String {
        if let properties {
            if properties & 0x10 != 0 {
                switch properties & 0x0F {
                case 0x03: return "ADV_IND"
                case 0x05, 0x0D: return "ADV_DIRECT_IND"
                case 0x02: return "ADV_SCAN_IND"
                case 0x00: return "ADV_NONCONN_IND"
                default: break
                }
            }
            var parts: [String] = []
            if properties & 0x01 != 0 { parts.append("connectable") }
            if properties & 0x02 != 0 { parts.append("scannable") }
            if properties & 0x04 != 0 { parts.append(properties & 0x08 != 0 ? "directed-high-duty" : "directed") }
            if properties & 0x10 != 0 { parts.append("legacy") }
            if properties & 0x20 != 0 { parts.append("anonymous") }
            if properties & 0x40 != 0 { parts.append("tx-power") }
            return "ext-" + (parts.isEmpty ? "nonconnectable" : parts.joined(separator: ","))
        }
        if isExtended { return "unknown" }
        switch advertisingType ?? 0 {
        case 0: return "ADV_IND"
        case 1: return "ADV_DIRECT_IND"
        case 2: return "ADV_SCAN_IND"
        case 3: return "ADV_NONCONN_IND"
        case 4: return "ADV_DIRECT_IND_LOW_DUTY"
        case let t: return Hex.u8(t)
        }
    }
}
