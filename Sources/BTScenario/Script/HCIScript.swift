import BTCapture
import BTWire

/// The packet-level builder: it emits HCI packets with timestamps into a `PacketSink`. Everything is
/// deterministic: time starts at a fixed instant and moves only when the script says so, and all variation
/// comes from a seeded `SplitMix64`. Writing errors are kept (the first one wins) and thrown by `finish()`,
/// so scenario code reads as a story rather than a wall of `try`.
public final class HCIScript {
    /// 2026-01-15T10:00:00Z, where every scenario starts.
    public static let defaultStart = Timestamp(seconds: 1_768_471_200, nanoseconds: 0)

    public let start: Timestamp
    /// Microseconds since `start`.
    public private(set) var elapsed: Int64 = 0
    public var rng: SplitMix64
    public var timing = ScriptTiming()
    public let controller: ControllerIdentity
    /// Largest ACL payload the host sends (the controller's LE ACL buffer size).
    public var hostACLDataLength = HCIFraming.leMaximumACLDataLength
    /// Largest ACL payload the controller delivers to the host.
    public var controllerACLDataLength = HCIFraming.leMaximumACLDataLength
    /// Host packets sent but not yet reported by Number Of Completed Packets, in order of first use.
    var pendingCompletions: [(handle: UInt16, count: UInt16)] = []
    var nextSignalingIdentifier: UInt8 = 1
    public private(set) var packetCount = 0
    /// Packets that happen on their own while the script does other things (reports while scanning).
    public var background: (any BackgroundActivity)?

    let sink: any PacketSink
    var failure: (any Error)?
    var finished = false

    public init(sink: any PacketSink, controller: ControllerIdentity, seed: UInt64, title: String,
                start: Timestamp = HCIScript.defaultStart) {
        self.sink = sink
        self.controller = controller
        self.rng = SplitMix64(seed: seed)
        self.start = start
        record { try sink.begin(controller: controller, title: title, timestamp: start) }
    }

    /// The current capture time.
    public var now: Timestamp { Timestamp(unixMicroseconds: start.microseconds + elapsed) }

    // MARK: Time

    /// Moves the clock forward by `microseconds` (negative values are ignored: time never runs backwards).
    /// Background activity due in that span (advertising reports while scanning) is emitted on the way,
    /// each packet at its own time, so the capture stays in time order.
    public func advance(_ microseconds: Int64) {
        let target = elapsed + max(0, microseconds)
        while let activity = background, let due = activity.nextDue, due <= target {
            elapsed = max(elapsed, due)
            activity.fire(self)
        }
        elapsed = target
    }

    public func wait(ms: Int64) { advance(Micros.ms(ms)) }
    public func wait(seconds: Int64) { advance(Micros.seconds(seconds)) }

    /// Moves the clock to `elapsed` microseconds after the start, if that is later than now.
    public func advance(toElapsed target: Int64) { advance(target - elapsed) }

    /// A delay drawn from `range`.
    public func delay(_ range: ClosedRange<Int64>) -> Int64 { rng.int64(in: range) }

    /// Waits for `range` (a random delay within it).
    public func pause(_ range: ClosedRange<Int64>) { advance(delay(range)) }

    /// Time until something sent now crosses the link and its answer comes back: 1–2 connection events.
    public func airDelay(_ connection: LEConnection, events: ClosedRange<Int64> = 1...2) -> Int64 {
        connection.intervalMicroseconds * rng.int64(in: events) + delay(timing.airJitter)
    }

    // MARK: Emitting

    public func emit(_ command: HCICommand) { emitPacket(command.packet, kind: .command, direction: .sent) }
    public func emit(_ event: HCIEvent) { emitPacket(event.packet, kind: .event, direction: .received) }

    /// An ACL packet (header included) from `side`.
    public func emitACL(_ packet: [UInt8], from side: Side) {
        emitPacket(packet, kind: .acl, direction: side == .local ? .sent : .received)
    }

    public func emitPacket(_ bytes: [UInt8], kind: RecordKind, direction: Direction) {
        packetCount += 1
        let timestamp = now
        record {
            try bytes.withUnsafeBytes { try sink.packet(kind: kind, direction: direction, timestamp: timestamp, payload: $0) }
        }
    }

    /// A note where the format has notes (monitor, PacketLogger).
    public func note(_ text: String) {
        let timestamp = now
        record { try sink.note(text, timestamp: timestamp) }
    }

    /// Flushes the sink and throws the first error any write met.
    public func finish() throws {
        if !finished {
            finished = true
            record { try sink.finish() }
        }
        if let failure { throw failure }
    }

    func record(_ body: () throws -> Void) {
        guard failure == nil else { return }
        do { try body() } catch { failure = error }
    }

    // MARK: Command round trips

    /// A command answered by Command Complete with `returnParameters` (status success alone by default).
    public func commandComplete(_ command: HCICommand, returning returnParameters: [UInt8] = [HCIStatus.success.rawValue]) {
        emit(command)
        pause(timing.commandLatency)
        emit(.commandComplete(command.opcode, returnParameters: returnParameters))
        pause(timing.hostReaction)
    }

    /// A command answered by Command Status; the caller emits whatever completes the procedure.
    public func commandStatus(_ command: HCICommand, status: HCIStatus = .success) {
        emit(command)
        pause(timing.commandLatency)
        emit(.commandStatus(command.opcode, status: status))
    }

    /// A fresh L2CAP signaling identifier (never 0, which is invalid).
    func signalingIdentifier() -> UInt8 {
        let id = nextSignalingIdentifier
        nextSignalingIdentifier = nextSignalingIdentifier == UInt8.max ? 1 : nextSignalingIdentifier + 1
        return id
    }
}
