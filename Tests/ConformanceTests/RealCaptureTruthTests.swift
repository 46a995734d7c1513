import Foundation
import Testing
import BTCapture
import BTTrack
import BTEnergy
import BTRules
import TestSupport

/// One truth file, `RealCaptureTruth/NAME.json`: what a reviewer read in the capture's bytes with tshark, rule by
/// rule — where it must fire and where it must stay silent. Matching is documented in `RealCaptureTruth/README.md`.
struct CaptureTruth: Decodable {
    let capture: String
    /// tshark's frame count, which is btlens' record count (frame N = record N).
    let frames: Int
    /// An empty or HCI-less capture: nothing to judge, so `audit` must say so and not exit 0 (unless `--allow-empty`).
    let nothingToJudge: Bool
    let episodes: [Episode]

    enum CodingKeys: String, CodingKey {
        case capture, frames, episodes
        case nothingToJudge = "nothing_to_judge"
    }

    init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        capture = try c.decode(String.self, forKey: .capture)
        frames = try c.decode(Int.self, forKey: .frames)
        nothingToJudge = try c.decodeIfPresent(Bool.self, forKey: .nothingToJudge) ?? false
        episodes = try c.decodeIfPresent([Episode].self, forKey: .episodes) ?? []
    }
}

struct Episode: Decodable {
    enum Expect: String, Decodable { case fire, silent }
    /// `time` (default): a finding matches when a cited record lies in [first, last] or its [start, end] overlaps
    /// the frames' times. `records`: only cited records count (for an episode inside a longer finding's span).
    enum Match: String, Decodable { case time, records }

    let rule: String
    let expect: Expect
    /// `0x0040` (HCI handle), `AA 0x50654d3a` (air access address), `scan` or `capture` (any finding of the rule).
    let scope: String
    let first: Int
    let last: Int
    let match: Match
    let filter: String
    let fields: [String]
    let why: String
    /// For `fire`: a regular expression no matching finding's message may contain (a number the bytes contradict).
    let messageMustNotMatch: String?
    /// A regular expression: only findings whose message matches it are about this episode (one service of several
    /// a finding could name, e.g. `Device Information|180a`).
    let about: String?

    enum CodingKeys: String, CodingKey {
        case rule, expect, scope, first, last, match, filter, fields, why
        case about
        case messageMustNotMatch = "message_must_not_match"
    }

    init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        rule = try c.decode(String.self, forKey: .rule)
        expect = try c.decode(Expect.self, forKey: .expect)
        scope = try c.decode(String.self, forKey: .scope)
        first = try c.decode(Int.self, forKey: .first)
        last = try c.decode(Int.self, forKey: .last)
        match = try c.decodeIfPresent(Match.self, forKey: .match) ?? .time
        filter = try c.decode(String.self, forKey: .filter)
        fields = try c.decode([String].self, forKey: .fields)
        why = try c.decode(String.self, forKey: .why)
        messageMustNotMatch = try c.decodeIfPresent(String.self, forKey: .messageMustNotMatch)
        about = try c.decodeIfPresent(String.self, forKey: .about)
    }

    /// The link the scope names, or nil for `scan` and `capture`.
    var link: (handle: UInt16?, accessAddress: UInt32?)? {
        if scope.hasPrefix("AA 0x"), let aa = UInt32(scope.dropFirst(5), radix: 16) { return (nil, aa) }
        if scope.hasPrefix("0x"), let handle = UInt16(scope.dropFirst(2), radix: 16) { return (handle, nil) }
        return nil
    }

    /// Whether `finding` is one this episode is about: same rule, same link when one is named, and a cited record
    /// in [first, last] or (match `time`) a time span overlapping the frames'.
    func matches(_ finding: Finding, times: [Timestamp]) -> Bool {
        guard finding.id == rule else { return false }
        if let about, finding.message.range(of: about, options: [.regularExpression, .caseInsensitive]) == nil { return false }
        if let link {
            guard let c = finding.connection else { return false }
            if let aa = link.accessAddress, c.accessAddress != aa { return false }
            if let handle = link.handle, c.accessAddress != nil || c.handle != handle { return false }
        }
        if finding.records.contains(where: { (first...last).contains($0.number) }) { return true }
        guard match == .time, first >= 1, last <= times.count, first <= last else { return false }
        return finding.start <= times[last - 1] && finding.end >= times[first - 1]
    }

    var label: String { "\(rule) \(expect.rawValue) \(scope) frames \(first)–\(last)" }
}

/// Every record's time by record number, to place an episode's frames in time.
struct RecordTimes: RecordSourceVisitor {
    mutating func visit<S: RecordSource>(_ source: S) throws -> [Timestamp] {
        var times: [Timestamp] = []
        while let record = source.next() { times.append(record.timestamp) }
        return times
    }
}

enum RealCaptureTruth {
    static let directory: URL = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("RealCaptureTruth")

    /// Truth file names (without `.json`), when ../shared is there; a NOTE otherwise.
    static let names: [String] = {
        guard RealCaptures.available else {
            FileHandle.standardError.write(Data("""
                NOTE: \(RealCaptures.directory.path) is absent: the real-capture truth episodes \
                (Tests/ConformanceTests/RealCaptureTruth) were NOT checked.\n
                """.utf8))
            return []
        }
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return files.filter { $0.hasSuffix(".json") }.map { String($0.dropLast(5)) }.sorted()
    }()

    static func load(_ name: String) throws -> CaptureTruth {
        let data = try Data(contentsOf: directory.appendingPathComponent("\(name).json"))
        return try JSONDecoder().decode(CaptureTruth.self, from: data)
    }
}

@Suite("Real captures: truth from the bytes")
struct RealCaptureTruthTests {
    @Test("every real capture in the manifest has a truth file")
    func everyCaptureHasTruth() throws {
        guard RealCaptures.available else { return }
        let manifest = try String(contentsOf: RealCaptures.directory.appendingPathComponent("MANIFEST.tsv"), encoding: .utf8)
        let captures = manifest.split(separator: "\n").dropFirst().compactMap { $0.split(separator: "\t").first.map(String.init) }
        let missing = captures.filter { !RealCaptureTruth.names.contains($0) }
        #expect(missing.isEmpty, "captures without a truth file: \(missing)")
    }

    @Test("each episode holds", arguments: RealCaptureTruth.names)
    func episodes(name: String) throws {
        let truth = try RealCaptureTruth.load(name)
        #expect(truth.capture == name)
        let path = RealCaptures.directory.appendingPathComponent(truth.capture).path
        var timesVisitor = RecordTimes()
        let times = try OpenedCapture.open(path: path).accept(&timesVisitor)
        var collector = TrackingCollector()
        let model = try OpenedCapture.open(path: path).accept(&collector)
        // tshark's 1-based frame numbers are btlens' record numbers: the counts agree.
        #expect(model.records == truth.frames, "\(name): btlens read \(model.records) records, tshark \(truth.frames) frames")
        let findings = Auditor().audit(model, file: name)
        for episode in truth.episodes {
            #expect(episode.first >= 1 && episode.first <= episode.last && episode.last <= truth.frames,
                    "\(name): \(episode.label) is outside the capture's \(truth.frames) frames")
            let matching = findings.filter { episode.matches($0, times: times) }
            switch episode.expect {
            case .fire:
                #expect(!matching.isEmpty, """
                    \(name): \(episode.label) must fire but no \(episode.rule) finding covers it — \(episode.why) \
                    [tshark -Y '\(episode.filter)']; \(episode.rule) said: \
                    \(findings.filter { $0.id == episode.rule }.map { "\($0.records.map(\.number).prefix(4)) \($0.message)" })
                    """)
                if let pattern = episode.messageMustNotMatch {
                    for f in matching where f.message.range(of: pattern, options: .regularExpression) != nil {
                        #expect(Bool(false), """
                            \(name): \(episode.label): the finding says "\(f.message)", which the bytes contradict \
                            (/\(pattern)/) — \(episode.why)
                            """)
                    }
                }
            case .silent:
                #expect(matching.isEmpty, """
                    \(name): \(episode.label) must stay silent — \(episode.why) [tshark -Y '\(episode.filter)']; \
                    but: \(matching.map { "\($0.connection?.shortLinkName ?? "-") records \($0.records.map(\.number).prefix(6)) \($0.message)" })
                    """)
            }
        }
    }

    /// Costs that add up (issue 25, `android_obex_scan_nanosec_h4phdr.pcap`): what a finding says its fix saves is
    /// part of what `energy` says the capture cost — the host's wake-ups within the host total, the rest within the
    /// phone's radio total — and one rule's findings together do not charge a span twice.
    @Test("no finding saves more than the capture cost", arguments: RealCaptureTruth.names)
    func costsAddUp(name: String) throws {
        let truth = try RealCaptureTruth.load(name)
        guard !truth.nothingToJudge else { return }
        var collector = TrackingCollector()
        let model = try OpenedCapture.open(path: RealCaptures.directory.appendingPathComponent(truth.capture).path)
            .accept(&collector)
        let host = EnergyReport(model: model).host.chargeMC
        let radio = EnergyReport.phoneTotal(model: model).chargeMC
        let slack = 1e-6
        var byRule: [String: (host: Double, radio: Double)] = [:]
        for f in Auditor().audit(model, file: name) {
            guard let cost = f.cost else { continue }
            let findingRadio = cost.phone.chargeMC - cost.hostMC
            let at = "\(f.id) records \(f.records.map(\.number).prefix(4))"
            #expect(cost.hostMC <= host + slack, """
                \(name): \(at) saves \(cost.hostMC) mC of host wake-ups, more than energy's whole host total \
                \(host) mC — \(f.message)
                """)
            #expect(findingRadio <= radio + slack, """
                \(name): \(at) saves \(findingRadio) mC of radio, more than energy's phone radio total \(radio) mC \
                — \(f.message)
                """)
            byRule[f.id, default: (0, 0)].host += cost.hostMC
            byRule[f.id, default: (0, 0)].radio += findingRadio
        }
        for (rule, sum) in byRule.sorted(by: { $0.key < $1.key }) {
            #expect(sum.host <= host + slack,
                    "\(name): \(rule)'s findings together save \(sum.host) mC of host wake-ups, more than energy's host total \(host) mC")
            #expect(sum.radio <= radio + slack,
                    "\(name): \(rule)'s findings together save \(sum.radio) mC of radio, more than energy's radio total \(radio) mC")
        }
    }

    @Test("a capture with nothing to judge does not pass silently", arguments: RealCaptureTruth.names)
    func nothingToJudge(name: String) throws {
        let truth = try RealCaptureTruth.load(name)
        guard truth.nothingToJudge else { return }
        let path = RealCaptures.directory.appendingPathComponent(truth.capture).path
        var collector = TrackingCollector()
        let model = try OpenedCapture.open(path: path).accept(&collector)
        #expect(model.connections.isEmpty, "\(name): \(model.connections.count) connections in a capture with nothing to judge")
        #expect(Auditor().audit(model, file: name).isEmpty)
        // The CLI: nothing to judge is not success unless --allow-empty (issue 25).
        let binary = SchemaValidation.packageRoot.appendingPathComponent(".build/debug/btlens").path
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            FileHandle.standardError.write(Data("NOTE: \(binary) is not built: the exit code of audit on \(name) was NOT checked.\n".utf8))
            return
        }
        func run(_ arguments: [String]) throws -> Int32 {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: binary)
            process.arguments = arguments
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            return process.terminationStatus
        }
        let plain = try run(["audit", path])
        #expect(plain != 0 && plain != 1, "\(name): audit of a capture with nothing to judge exited \(plain); it must say so with its own non-zero code")
        let allowed = try run(["audit", "--allow-empty", path])
        #expect(allowed == 0, "\(name): audit --allow-empty exited \(allowed)")
    }
}
