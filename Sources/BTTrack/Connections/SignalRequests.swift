/// Signalling requests waiting for their responses, matched as L2CAP matches them (Core Vol 3 Part A §4): same
/// identifier, response travelling the other way. Few wait at once; past `maximum` the oldest is forgotten
/// (never answered), so a peer that never answers cannot grow it.
struct SignalRequests<Request: Sendable & Equatable>: Sendable, Equatable {
    struct Entry: Sendable, Equatable {
        var identifier: UInt8
        /// Our host sent the request.
        var sent: Bool
        var request: Request
    }

    private(set) var entries: [Entry] = []
    static var maximum: Int { 8 }

    var count: Int { entries.count }
    var isEmpty: Bool { entries.isEmpty }

    /// A request sent (by our host when `sent`) with `identifier`; a repeat of the identifier replaces it.
    mutating func add(_ request: Request, identifier: UInt8, sent: Bool) {
        entries.removeAll { $0.identifier == identifier && $0.sent == sent }
        if entries.count >= Self.maximum { entries.removeFirst() }
        entries.append(Entry(identifier: identifier, sent: sent, request: request))
    }

    /// The request a response with `identifier`, sent the way `responseSent` says, answers; it no longer waits.
    mutating func answer(_ identifier: UInt8, responseSent: Bool) -> Entry? {
        guard let i = entries.firstIndex(where: { $0.identifier == identifier && $0.sent != responseSent }) else { return nil }
        return entries.remove(at: i)
    }
}
