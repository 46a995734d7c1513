import BTWire
import BTCapture

/// Learns which dynamic L2CAP channels carry ATT, from the signalling that opens them: Connection
/// Request/Response for PSM 0x001F (ATT over BR/EDR) and LE/Enhanced Credit Based Connection for SPSM 0x0027
/// (EATT). Responses carry no PSM, so requests are remembered by (controller, handle, identifier).
/// Bounded: entries of a handle are dropped on its Disconnection Complete.
public struct ChannelMap {
    struct ChannelKey: Hashable {
        var controller: UInt16
        var handle: UInt16
        var cid: UInt16
    }
    struct RequestKey: Hashable {
        var controller: UInt16
        var handle: UInt16
        var identifier: UInt8
    }

    var channels: [ChannelKey: L2CAPChannelProtocol] = [:]
    var pending: [RequestKey: (psm: UInt16, sourceCIDs: [UInt16])] = [:]
    public static let maximumEntries = 4096

    public init() {}

    @inline(__always)
    public func lookup(controller: UInt16, handle: UInt16, cid: UInt16) -> L2CAPChannelProtocol {
        if cid < L2CAPChannelID.firstDynamic || channels.isEmpty { return .fixed(cid) }
        return channels[ChannelKey(controller: controller, handle: handle, cid: cid)] ?? .dynamic
    }

    /// Feeds a signalling PDU (CID 1: several commands; CID 5: one).
    public mutating func observeSignaling(controller: UInt16, handle: UInt16, payload: UnsafeRawBufferPointer) {
        for signal in L2CAPSignal.commands(in: payload) {
            observe(signal, key: RequestKey(controller: controller, handle: handle, identifier: signal.identifier))
        }
    }

    mutating func observe(_ signal: L2CAPSignal, key: RequestKey) {
        switch signal.command {
        case .connectionRequest(let psm, let scid), .leCreditBasedConnectionRequest(let psm, let scid, _, _, _):
            remember(key, psm: psm.rawValue, sources: [scid])
        case .creditBasedConnectionRequest(let psm, _, _, _, let scids):
            remember(key, psm: psm.rawValue, sources: Array(scids))
        case .connectionResponse(let dcid, let scid, let result, _):
            guard let request = pending.removeValue(forKey: key), result == 0 else { return }
            register(key, psm: request.psm, cids: [dcid, scid])
        case .leCreditBasedConnectionResponse(let dcid, _, _, _, let result):
            guard let request = pending.removeValue(forKey: key), result == 0 else { return }
            register(key, psm: request.psm, cids: [dcid] + request.sourceCIDs)
        case .creditBasedConnectionResponse(_, _, _, let result, let dcids):
            guard let request = pending.removeValue(forKey: key) else { return }
            let opened = dcids.filter { $0 != 0 }
            // Result 0 is success; some results (e.g. 0x0004, some refused) still open the non-zero dcids.
            if result == 0 || !opened.isEmpty { register(key, psm: request.psm, cids: request.sourceCIDs + opened) }
        default:
            break
        }
    }

    mutating func remember(_ key: RequestKey, psm: UInt16, sources: [UInt16]) {
        guard psm == L2CAPPSM.att.rawValue || psm == L2CAPPSM.eatt.rawValue else { return }
        if pending.count >= Self.maximumEntries { pending.removeAll() }
        pending[key] = (psm, sources)
    }

    mutating func register(_ key: RequestKey, psm: UInt16, cids: [UInt16]) {
        let proto: L2CAPChannelProtocol = psm == L2CAPPSM.eatt.rawValue ? .enhancedATT : .dynamicATT
        if channels.count >= Self.maximumEntries { channels.removeAll() }
        for cid in cids where cid >= L2CAPChannelID.firstDynamic {
            channels[ChannelKey(controller: key.controller, handle: key.handle, cid: cid)] = proto
        }
    }

    /// Forgets a controller's channels (HCI Reset, controller removed).
    public mutating func clear(controller: UInt16) {
        guard !channels.isEmpty || !pending.isEmpty else { return }
        channels = channels.filter { $0.key.controller != controller }
        pending = pending.filter { $0.key.controller != controller }
    }

    /// Forgets a handle's channels on disconnection.
    public mutating func clear(controller: UInt16, handle: UInt16) {
        guard !channels.isEmpty || !pending.isEmpty else { return }
        channels = channels.filter { !($0.key.controller == controller && $0.key.handle == handle) }
        pending = pending.filter { !($0.key.controller == controller && $0.key.handle == handle) }
    }
}
