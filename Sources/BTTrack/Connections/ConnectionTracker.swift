import BTWire
import BTCapture
import BTDecode

/// A connection attempt that failed (Connection Complete with a non-zero status, or a rejected create command).
public struct FailedConnection: Sendable {
    public var at: RecordRef
    public var status: HCIStatus
    public var peerAddress: BDAddr?
}

public final class Connection: @unchecked Sendable {
    public let controller: UInt16
    public let handle: UInt16
    public var start: RecordRef
    init(controller: UInt16, handle: UInt16, start: RecordRef) {
        self.controller = controller
        self.handle = handle
        self.start = start
    }
}

/// STUB while the connection tracker is written.
public struct ConnectionTracker {
    let options: TrackerOptions
    init(options: TrackerOptions) { self.options = options }
    mutating func command(_ c: HCICommandPacket, at: RecordRef) {}
    mutating func commandAnswered(_ p: CommandCorrelator.Pending, status: HCIStatus, at: RecordRef) {}
    mutating func event(_ e: HCIEventPacket, at: RecordRef) {}
    mutating func leMeta(_ sub: LESubevent, parameters: UnsafeRawBufferPointer, at: RecordRef) {}
    mutating func acl(_ acl: ACLPacket, pdu: L2CAPPDU?, direction: Direction, at: RecordRef) {}
    mutating func leConnectionComplete(_ c: LEConnectionComplete, at: RecordRef, scanning: Bool, advertising: Bool) -> Connection? { nil }
    mutating func controllerReset(at: RecordRef) {}
    mutating func finish(at: RecordRef?) -> (connections: [Connection], failed: [FailedConnection], dropped: Int) { ([], [], 0) }
}
