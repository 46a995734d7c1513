import BTWire
import BTCapture
import BTDecode

/// The filters of `btlens decode`: kinds, connection handles, L2CAP CIDs and opcodes. Empty sets match all;
/// given sets must all match (AND), values within a set are alternatives (OR).
public struct FrameFilter {
    /// Kinds beyond record kinds: protocol layers a record may complete.
    public enum Layer: String, CaseIterable {
        case att, smp, signaling, advertising
    }

    public var kinds: Set<RecordKind> = []
    public var layers: Set<Layer> = []
    public var handles: Set<UInt16> = []
    public var channelIDs: Set<UInt16> = []
    public var opcodes: Set<UInt32> = []
    /// Air captures: access addresses (a CONNECT_IND matches the address it assigns, so a link's start shows).
    public var accessAddresses: Set<UInt32> = []
    /// Air captures: PDU names as `decode` prints them (`ADV_IND`, `AUX_CONNECT_REQ`, `LL_TERMINATE_IND`), or
    /// `empty` (empty data PDUs) and `data` (data PDUs carrying L2CAP), upper-cased.
    public var pduTypes: Set<String> = []
    /// Air captures: data PDUs sent this way.
    public var directions: Set<LLDirection> = []

    public init() {}

    public var isEmpty: Bool {
        kinds.isEmpty && layers.isEmpty && handles.isEmpty && channelIDs.isEmpty && opcodes.isEmpty && accessAddresses.isEmpty
            && pduTypes.isEmpty && directions.isEmpty
    }

    /// Names `--pdu-type` takes besides the advertising PDU and LL control opcode names.
    public static let dataPDUNames = ["EMPTY", "DATA"]

    /// Parses a `--pdu-type` value: a known PDU name (any case) or `empty`/`data`.
    public mutating func addPDUType(_ name: String) -> Bool {
        let upper = name.uppercased()
        let known = Self.dataPDUNames.contains(upper) || LLAdvertisingPDUType.allNames.contains(upper)
            || (0...0xFF).contains { LLControlOpcode(rawValue: UInt8($0)).name == upper }
        if known { pduTypes.insert(upper) }
        return known
    }

    /// Parses a `--direction` value: `c2p` (central to peripheral) or `p2c`.
    public mutating func addDirection(_ name: String) -> Bool {
        switch name.lowercased() {
        case "c2p", "central": directions.insert(.centralToPeripheral)
        case "p2c", "peripheral": directions.insert(.peripheralToCentral)
        default: return false
        }
        return true
    }

    /// Parses a kind name: a record kind (`command`, `event`, `acl`, `note`, …) or a layer (`att`, …).
    public mutating func addKind(_ name: String) -> Bool {
        if let k = RecordKind(name: name) { kinds.insert(k); return true }
        if let l = Layer(rawValue: name) { layers.insert(l); return true }
        return false
    }

    public static var kindNames: [String] { RecordKind.allCases.map(\.description) + Layer.allCases.map(\.rawValue) }

    public func matches(_ frame: DecodedFrame) -> Bool {
        if !kinds.isEmpty || !layers.isEmpty {
            let kindMatch = kinds.contains(frame.record.kind)
            let layerMatch = layers.contains { Self.hasLayer(frame, $0) }
            if !kindMatch && !layerMatch { return false }
        }
        if !handles.isEmpty {
            guard let h = Self.handle(of: frame), handles.contains(h) else { return false }
        }
        if !channelIDs.isEmpty {
            guard let cid = frame.l2cap?.channelID, channelIDs.contains(cid) else { return false }
        }
        if !opcodes.isEmpty {
            guard Self.opcodes(of: frame).contains(where: { opcodes.contains($0) }) else { return false }
        }
        if !accessAddresses.isEmpty || !pduTypes.isEmpty || !directions.isEmpty {
            guard let ll = frame.linkLayer, matchesLinkLayer(ll) else { return false }
        }
        return true
    }

    func matchesLinkLayer(_ ll: LLFrame) -> Bool {
        if !accessAddresses.isEmpty {
            var assigned: UInt32?
            if let adv = ll.advertising, case .connectRequest(_, _, let data) = adv.body { assigned = data.accessAddress }
            guard accessAddresses.contains(ll.packet.accessAddress) || assigned.map(accessAddresses.contains) == true
            else { return false }
        }
        if !directions.isEmpty {
            guard !ll.isAdvertising, directions.contains(ll.direction) else { return false }
        }
        if !pduTypes.isEmpty {
            guard let name = Self.pduName(ll), pduTypes.contains(name) else { return false }
        }
        return true
    }

    /// The name `--pdu-type` matches: the advertising PDU's, the control opcode's, or EMPTY/DATA.
    static func pduName(_ ll: LLFrame) -> String? {
        if ll.isAdvertising {
            guard let adv = ll.advertising else { return nil }
            return adv.type.name(secondary: ll.packet.isSecondaryChannel, auxiliaryType: ll.packet.auxiliaryType)
        }
        if let control = ll.control { return control.opcode.name }
        guard let data = ll.data else { return nil }
        if data.header.isEmpty { return "EMPTY" }
        return data.header.llid == .start || data.header.llid == .continuation ? "DATA" : nil
    }

    static func hasLayer(_ frame: DecodedFrame, _ layer: Layer) -> Bool {
        switch layer {
        case .att: return frame.l2cap?.channel.carriesATT ?? false
        case .smp: return frame.l2cap.map { $0.channel == .smp || $0.channel == .brEdrSMP } ?? false
        case .signaling: return frame.l2cap.map { $0.channel == .leSignaling || $0.channel == .brEdrSignaling } ?? false
        case .advertising: return frame.advertisingReports > 0 || (frame.linkLayer?.isAdvertising ?? false)
        }
    }

    /// The connection handle a frame concerns: ACL/SCO/ISO, or the handle parameter of connection events and
    /// commands.
    public static func handle(of frame: DecodedFrame) -> UInt16? {
        guard let hci = frame.hci else { return nil }
        func le16(_ p: UnsafeRawBufferPointer, _ at: Int) -> UInt16? {
            p.count >= at + 2 ? (UInt16(p[at]) | UInt16(p[at + 1]) << 8) & 0x0FFF : nil
        }
        switch hci {
        case .acl(let a): return a.handle
        case .sco(let s): return s.handle
        case .iso(let i): return i.handle
        case .command(let c):
            switch c.opcode {
            case .disconnect, .readRSSI, .leConnectionUpdate, .leReadRemoteFeatures, .leEnableEncryption,
                 .leSetDataLength, .leSetPHY:
                return le16(c.parameters, 0)
            default: return nil
            }
        case .event(let e):
            switch e.code {
            case .disconnectionComplete, .connectionComplete, .encryptionChange, .encryptionChangeV2,
                 .encryptionKeyRefreshComplete:
                return le16(e.parameters, 1)
            case .numberOfCompletedPackets:
                return le16(e.parameters, 1)
            case .leMeta:
                guard let sub = e.subevent else { return nil }
                let p = e.subeventParameters
                switch sub {
                case .connectionComplete, .enhancedConnectionComplete, .enhancedConnectionCompleteV2,
                     .connectionUpdateComplete, .readRemoteFeaturesComplete, .phyUpdateComplete:
                    return le16(p, 1)
                case .longTermKeyRequest, .remoteConnectionParameterRequest, .dataLengthChange,
                     .channelSelectionAlgorithm:
                    return le16(p, 0)
                default: return nil
                }
            default: return nil
            }
        }
    }

    /// Every opcode-like value of a frame: HCI command opcode (also the one a Command Complete/Status
    /// answers), event code, LE subevent, the first byte of ATT, SMP and signalling PDUs, and on air captures
    /// the LL control opcode and the advertising PDU type.
    public static func opcodes(of frame: DecodedFrame) -> [UInt32] {
        var out: [UInt32] = []
        switch frame.hci {
        case .command(let c)?: out.append(UInt32(c.opcode.rawValue))
        case .event(let e)?:
            out.append(UInt32(e.code.rawValue))
            if let sub = e.subevent { out.append(UInt32(sub.rawValue)) }
            if e.code == .commandComplete, let cc = CommandComplete(e.parameters) { out.append(UInt32(cc.opcode.rawValue)) }
            if e.code == .commandStatus, let cs = CommandStatus(e.parameters) { out.append(UInt32(cs.opcode.rawValue)) }
        default: break
        }
        if let pdu = frame.l2cap {
            let bytes = pdu.attPayload ?? pdu.payload
            if let first = bytes.first { out.append(UInt32(first)) }
        }
        if let ll = frame.linkLayer {
            if let control = ll.control { out.append(UInt32(control.opcode.rawValue)) }
            if let adv = ll.advertising { out.append(UInt32(adv.type.rawValue)) }
        }
        return out
    }
}
