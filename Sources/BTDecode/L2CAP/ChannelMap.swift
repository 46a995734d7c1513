import BTWire
import BTCapture

/// Learns which dynamic L2CAP channels carry ATT, from the signalling that opens them: Connection
/// Request/Response for PSM 0x001F (ATT over BR/EDR) and LE/Enhanced Credit Based Connection for SPSM 0x0027
/// (EATT). Responses carry no PSM, so requests are remembered by (controller, handle, identifier, direction).
///
/// Each side numbers its own channels, so a CID means a channel only together with the direction of the PDU:
/// the requester's source CIDs name PDUs travelling toward it, the responder's destination CIDs PDUs travelling
/// toward the responder. Without directions (pcap linktype 187) every CID is registered for unknown direction.
/// Both ends of a channel share one `bearer` number, so a request and its response (which travel on different
/// CIDs) can be paired. Bounded: entries of a handle are dropped on its Disconnection Complete.
public struct ChannelMap {
    /// What a (handle, CID, direction) carries, and the channel it belongs to.
    public struct Channel: Sendable, Equatable {
        public var proto: L2CAPChannelProtocol
        /// The same for both directions of one channel and different for every other channel of the link:
        /// the CID for fixed channels; for a dynamic one, the requester's CID with which side requested above it.
        public var bearer: UInt32
    }

    struct ChannelKey: Hashable {
        var controller: UInt16
        var handle: UInt16
        var cid: UInt16
        /// Of the PDUs on this channel.
        var direction: Direction
    }
    struct RequestKey: Hashable {
        var controller: UInt16
        var handle: UInt16
        var identifier: UInt8
        /// Of the request.
        var direction: Direction
    }

    var channels: [ChannelKey: Channel] = [:]
    var pending: [RequestKey: (psm: UInt16, sourceCIDs: [UInt16])] = [:]
    public static let maximumEntries = 4096

    public init() {}

    @inline(__always)
    public func lookup(controller: UInt16, handle: UInt16, cid: UInt16, direction: Direction) -> Channel {
        if cid < L2CAPChannelID.firstDynamic || channels.isEmpty { return Channel(proto: .fixed(cid), bearer: UInt32(cid)) }
        return channels[ChannelKey(controller: controller, handle: handle, cid: cid, direction: direction)]
            ?? Channel(proto: .dynamic, bearer: Self.unknownBearer(cid: cid, direction: direction))
    }

    /// A dynamic channel whose opening was not seen: its CID and the direction of its PDUs stand for it.
    static func unknownBearer(cid: UInt16, direction: Direction) -> UInt32 {
        UInt32(cid) | UInt32(3 + direction.rawValue) << 16
    }

    /// The bearer of a channel opened by a request travelling in `direction`, whose requester's end is `cid`.
    static func openedBearer(requesterCID cid: UInt16, requestDirection direction: Direction) -> UInt32 {
        UInt32(cid) | UInt32(1 + direction.rawValue) << 24
    }

    /// Feeds a signalling PDU (CID 1: several commands; CID 5: one) travelling in `direction`.
    public mutating func observeSignaling(controller: UInt16, handle: UInt16, direction: Direction,
                                          payload: UnsafeRawBufferPointer) {
        for signal in L2CAPSignal.commands(in: payload) {
            observe(signal, controller: controller, handle: handle, identifier: signal.identifier, direction: direction)
        }
    }

    static func opposite(_ d: Direction) -> Direction {
        switch d {
        case .sent: .received
        case .received: .sent
        case .unknown: .unknown
        }
    }

    mutating func observe(_ signal: L2CAPSignal, controller: UInt16, handle: UInt16, identifier: UInt8,
                          direction: Direction) {
        // A request is keyed by its own direction; a response travels the other way.
        let request = RequestKey(controller: controller, handle: handle, identifier: identifier, direction: direction)
        let answered = RequestKey(controller: controller, handle: handle, identifier: identifier,
                                  direction: Self.opposite(direction))
        switch signal.command {
        case .connectionRequest(let psm, let scid), .leCreditBasedConnectionRequest(let psm, let scid, _, _, _):
            remember(request, psm: psm.rawValue, sources: [scid])
        case .creditBasedConnectionRequest(let psm, _, _, _, let scids):
            remember(request, psm: psm.rawValue, sources: Array(scids))
        case .connectionResponse(let dcid, _, let result, _):
            guard let r = pending.removeValue(forKey: answered), result == 0, let scid = r.sourceCIDs.first else { return }
            register(answered, psm: r.psm, pairs: [(scid, dcid)])
        case .leCreditBasedConnectionResponse(let dcid, _, _, _, let result):
            guard let r = pending.removeValue(forKey: answered), result == 0, let scid = r.sourceCIDs.first else { return }
            register(answered, psm: r.psm, pairs: [(scid, dcid)])
        case .creditBasedConnectionResponse(_, _, _, _, let dcids):
            guard let r = pending.removeValue(forKey: answered) else { return }
            // The n-th destination CID answers the n-th source CID; 0 means that one was refused. Some results
            // (e.g. 0x0004, some refused) still open the non-zero ones, so the CIDs decide, not the result.
            let pairs = zip(r.sourceCIDs, dcids).filter { $0.1 != 0 }
            register(answered, psm: r.psm, pairs: pairs.map { ($0.0, $0.1) })
        default:
            break
        }
    }

    mutating func remember(_ key: RequestKey, psm: UInt16, sources: [UInt16]) {
        guard psm == L2CAPPSM.att.rawValue || psm == L2CAPPSM.eatt.rawValue else { return }
        if pending.count >= Self.maximumEntries { pending.removeAll() }
        pending[key] = (psm, sources)
    }

    /// `request` is the request's key: PDUs toward the requester travel opposite to it, on the requester's
    /// (source) CID of each pair; PDUs toward the responder on its (destination) CID.
    mutating func register(_ request: RequestKey, psm: UInt16, pairs: [(source: UInt16, destination: UInt16)]) {
        let proto: L2CAPChannelProtocol = psm == L2CAPPSM.eatt.rawValue ? .enhancedATT : .dynamicATT
        if channels.count >= Self.maximumEntries { channels.removeAll() }
        for (source, destination) in pairs {
            let channel = Channel(proto: proto, bearer: Self.openedBearer(requesterCID: source,
                                                                          requestDirection: request.direction))
            func add(_ cid: UInt16, _ direction: Direction) {
                guard cid >= L2CAPChannelID.firstDynamic else { return }
                channels[ChannelKey(controller: request.controller, handle: request.handle, cid: cid,
                                    direction: direction)] = channel
            }
            add(source, Self.opposite(request.direction))
            add(destination, request.direction)
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
