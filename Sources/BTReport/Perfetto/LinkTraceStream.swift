import Foundation
import BTWire
import BTCapture
import BTTrack
import BTEnergy
import BTRules

/// A capture's connections written to the Perfetto trace as they are judged (`LinkRetirement`), not once the
/// capture has been read, so the export's memory is bounded as `audit`'s is: when a finished link is judged, its
/// track (descriptor, phases, ATT transactions and flows) and its per-link findings are written while it is still
/// whole, just before it is slimmed, and its charge is kept for the counters. The rest — scans, advertising,
/// attempts, the counters, capture-wide findings, and links still open or within the window at the end — is
/// written by `CaptureTrace` at the capture's end, which takes the links drawn here from this stream.
///
/// The judge runs where links are tracked, on the link thread when there is one: the stream owns the writer
/// until the capture has been read (nothing else writes meanwhile), and its state is read only after.
public final class LinkTraceStream: @unchecked Sendable {
    let writer: PerfettoTraceWriter
    let file: String
    /// The file's number among those exported (its processes' ids).
    let index: Int
    let judgement: LinkJudgement
    let energy: EnergyModel
    /// Where the charge counters set their changes aside (`StepCounter`); nil keeps them in memory.
    let spillDirectory: String?
    /// The capture's first record's time, for the trace's clock if this capture writes first: set on the reading
    /// thread, read on the link thread.
    private var start: Int64?
    private let startLock = NSLock()
    /// Processes declared, by controller.
    private(set) var processes: [UInt16: UInt64] = [:]
    /// The drawn links' tracks, by link id (where capture-wide findings on them go); `notDrawn` for the others.
    /// Four bytes a link: ids and tracks both come in about the order links close.
    private var connectionTracks = PackedIntegers<Int64, Int32>()
    private static let notDrawn: Int64 = -1
    /// Links drawn before the capture's end.
    public private(set) var drawn = 0
    /// The drawn links' charge, by controller.
    private(set) var charge: [UInt16: RadioCharge] = [:]
    /// The drawn links' peers (`packed`): the trace's RSSI tracks are those of the advertisers the app connected
    /// to, and a drawn link is let go (`LinkRetirement.Keeping.summary`), so the end reads its peer here. In sorted
    /// runs set aside, not a set: only the few that were sampled are kept at the end (`sampledPeers`).
    private var drawnPeers: SortedRuns<UInt64>
    private var sampled: Set<AdvertisingSampler.Key>?
    static let peerRunLength = 1 << 16
    /// The first write that failed; nothing more is written after it (`rethrowFailure`).
    private var failure: (any Error)?

    public init(writer: PerfettoTraceWriter, file: String, index: Int, judgement: LinkJudgement, energy: EnergyModel,
                spillDirectory: String? = nil) {
        self.writer = writer
        self.file = file
        self.index = index
        self.judgement = judgement
        self.energy = energy
        self.spillDirectory = spillDirectory
        drawnPeers = SortedRuns(directory: spillDirectory, runLength: Self.peerRunLength)
    }

    /// The track drawn for link `id`, if it was drawn here.
    func track(ofLink id: Int) -> UInt64? {
        guard id >= 0, id < connectionTracks.count else { return nil }
        let track = connectionTracks[id]
        return track == Self.notDrawn ? nil : UInt64(track)
    }

    /// A peer as one sortable number.
    static func packed(_ key: AdvertisingSampler.Key) -> UInt64 { UInt64(key.controller) << 48 | key.address.rawValue }

    /// The drawn links' peers that `sampler` sampled (once the capture has been read; the same set on every call).
    func sampledPeers(_ sampler: AdvertisingSampler) throws -> Set<AdvertisingSampler.Key> {
        if let sampled { return sampled }
        var wanted: [UInt64: AdvertisingSampler.Key] = [:]
        for (key, _) in sampler.advertisers { wanted[Self.packed(key)] = key }
        var found = Set<AdvertisingSampler.Key>()
        drawnPeers.drain(by: <) { if let key = wanted[$0] { found.insert(key) } }
        if let failure = drawnPeers.failure { throw SpillError(path: spillDirectory ?? "", cause: failure) }
        sampled = found
        return found
    }

    /// The tracker's side (`TrackerOptions.retirement`): judges each link with `judgement`, then draws it and lets
    /// it go, keeping what the capture-wide rules read (as `audit` does).
    public func retirement(window: Int = LinkRetirement.defaultWindow) -> LinkRetirement {
        LinkRetirement(window: window, keeping: .summary, interest: judgement.interest) { [self] c, kept in judged(c, kept: kept) }
    }

    /// The time of the capture's first record (the reading thread calls this once, with it).
    public func captureStarted(at ns: Int64) {
        startLock.lock()
        if start == nil { start = ns }
        startLock.unlock()
    }

    /// The error that stopped the drawing, if any (once the capture has been read).
    public func rethrowFailure() throws {
        if let failure { throw failure }
    }

    /// The drawn links' charge on `controller`, handed over to the counters (once the capture has been read).
    func takeCharge(of controller: UInt16) -> RadioCharge? {
        charge.removeValue(forKey: controller)
    }

    /// Whether `f` was drawn with its link: a per-link rule's finding on a link drawn here.
    func drew(_ f: Finding) -> Bool {
        guard let c = f.connection, track(ofLink: c.id) != nil else { return false }
        return judgement.judgesPerLink(f.id)
    }

    func judged(_ c: Connection, kept: Bool) {
        let findings = judgement.judge(c, kept: kept)
        // A link beyond the model's cap is in no report: only its findings are (at the end, with the others').
        guard kept else { return }
        if let peer = c.peerAddress {
            drawnPeers.append(Self.packed(AdvertisingSampler.Key(controller: c.controller, address: peer))) { (<) }
        }
        guard failure == nil else { return }
        do { try draw(c, findings: findings) } catch { failure = error }
    }

    func draw(_ c: Connection, findings: [Finding]) throws {
        if !writer.clockDeclared {
            startLock.lock()
            let at = start ?? c.start.timestamp.nanoseconds
            startLock.unlock()
            try writer.clockSnapshot(at: at)
        }
        let process: UInt64
        if let known = processes[c.controller] {
            process = known
        } else {
            // Links judged early are HCI links (air links are judged at the end).
            process = try ControllerTrace.process(index: index, file: file, controller: c.controller, air: false, writer: writer)
            processes[c.controller] = process
        }
        // Judged links are closed (those still open at the end are judged there): they end where they end.
        let end = c.end?.timestamp ?? c.start.timestamp
        let track = try ConnectionTrack(writer: writer, captureEnd: end.nanoseconds).draw(c, process: process)
        while connectionTracks.count <= c.id { connectionTracks.append(Self.notDrawn) }
        connectionTracks[c.id] = Int64(track)
        drawn += 1
        for f in findings where f.connection?.id == c.id { try writer.finding(f, on: track) }
        charge[c.controller, default: RadioCharge(spillDirectory: spillDirectory)].add(EnergyReport.link(c, captureEnd: end, energy: energy))
    }
}
