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
        var reader = ByteReader(payload)
        while let code = reader.readU8(), let identifier = reader.readU8(), let length = reader.readU16(),
              let data = reader.readBytes(Int(length))
        {
            observe(code: L2CAPSignalCode(rawValue: code), identifier: identifier,
                    key: RequestKey(controller: controller, handle: handle, identifier: identifier), data: data)
        }
    }

    mutating func observe(code: L2CAPSignalCode, identifier: UInt8, key: RequestKey, data: UnsafeRawBufferPointer) {
        var r = ByteReader(data)
        switch code {
        case .connectionRequest:  // psm, scid
            guard let psm = r.readU16(), let scid = r.readU16() else { return }
            remember(key, psm: psm, sources: [scid])
        case .leCreditBasedConnectionRequest:  // spsm, scid, mtu, mps, credits
            guard let psm = r.readU16(), let scid = r.readU16() else { return }
            remember(key, psm: psm, sources: [scid])
        case .creditBasedConnectionRequest:  // spsm, mtu, mps, credits, scid…
            guard let psm = r.readU16(), r.skip(6) else { return }
            var sources: [UInt16] = []
            while let cid = r.readU16() { sources.append(cid) }
            remember(key, psm: psm, sources: sources)
        case .connectionResponse:  // dcid, scid, result, status
            guard let dcid = r.readU16(), let scid = r.readU16(), let result = r.readU16(),
                  let request = pending.removeValue(forKey: key), result == 0
            else { return }
            register(key, psm: request.psm, cids: [dcid, scid])
        case .leCreditBasedConnectionResponse:  // dcid, mtu, mps, credits, result
            guard let dcid = r.readU16(), r.skip(6), let result = r.readU16(),
                  let request = pending.removeValue(forKey: key), result == 0
            else { return }
            register(key, psm: request.psm, cids: [dcid] + request.sourceCIDs)
        case .creditBasedConnectionResponse:  // mtu, mps, credits, result, dcid…
            guard r.skip(6), let result = r.readU16(), let request = pending.removeValue(forKey: key) else { return }
            var cids = request.sourceCIDs
            while let cid = r.readU16() { if cid != 0 { cids.append(cid) } }
            // Result 0 is success; some results (e.g. 0x0004 some refused) still open the non-zero dcids.
            if result == 0 || cids.count > request.sourceCIDs.count { register(key, psm: request.psm, cids: cids) }
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

    /// Forgets a handle's channels on disconnection.
    public mutating func clear(controller: UInt16, handle: UInt16) {
        guard !channels.isEmpty || !pending.isEmpty else { return }
        channels = channels.filter { !($0.key.controller == controller && $0.key.handle == handle) }
        pending = pending.filter { !($0.key.controller == controller && $0.key.handle == handle) }
    }
}
