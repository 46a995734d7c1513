import Foundation
import Testing
import BTCapture
import BTTrack
import BTRules
import TestSupport

/// The truth independent readers wrote from the bytes of the real captures, beside them in
/// ../shared/captures/real/truth (its README: the format and the policies). These are the assertions
/// `../shared/tools/check_real_truth.py` checks on `btlens audit --format json`; here the audit runs through the
/// library, as the command does, and every assertion must hold. Without ../shared this suite says so and checks
/// nothing.
struct IndependentTruth: Decodable {
    let file: String
    let assertions: [Assertion]

    struct Assertion: Decodable {
        let rule: String?
        let expect: String?
        let check: String?
        let handle: String?
        let start: Double?
        let end: Double?
        let minDurationSeconds: Double?
        let equals: Int?
        let atMost: String?
        let evidence: String?

        enum CodingKeys: String, CodingKey {
            case rule, expect, check, handle, start, end, equals, evidence
            case minDurationSeconds = "min_duration_s"
            case atMost = "at_most"
        }

        var label: String {
            "\(rule ?? check ?? "?") \(expect ?? atMost.map { "at most \($0)" } ?? "") \(handle ?? "") [\(start.map { "\($0)" } ?? "-"), \(end.map { "\($0)" } ?? "-")]"
        }

        /// The findings this assertion is about: its rule, on its handle when it names one, overlapping its time
        /// (10 ms slack, as the checker allows).
        func overlapping(_ findings: [Finding]) -> [Finding] {
            findings.filter { f in
                guard f.rule == rule || f.id == rule else { return false }
                if let handle, let h = UInt16(handle.dropFirst(2), radix: 16) {
                    guard let c = f.connection, c.accessAddress == nil, c.handle == h else { return false }
                }
                guard let start, let end else { return true }
                let fs = f.start.seconds, fe = f.end.seconds
                return !(fe < start - 0.01 || fs > end + 0.01)
            }
        }
    }

    static let directory = RealCaptures.directory.appendingPathComponent("truth")

    static let names: [String] = {
        guard RealCaptures.available else {
            FileHandle.standardError.write(Data("""
                NOTE: \(RealCaptures.directory.path) is absent: the independent readers' truth (truth/) was NOT checked.\n
                """.utf8))
            return []
        }
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return files.filter { $0.hasSuffix(".json") }.map { String($0.dropLast(5)) }.sorted()
    }()

    static func load(_ name: String) throws -> IndependentTruth {
        try JSONDecoder().decode(IndependentTruth.self, from: Data(contentsOf: directory.appendingPathComponent("\(name).json")))
    }
}

@Suite("Real captures: the independent readers' truth")
struct IndependentTruthTests {
    @Test("the independent truth covers the captures it names", .enabled(if: RealCaptures.available))
    func present() {
        #expect(IndependentTruth.names.count >= 12)
    }

    @Test("every assertion holds", arguments: IndependentTruth.names)
    func assertions(name: String) throws {
        let truth = try IndependentTruth.load(name)
        let path = RealCaptures.directory.appendingPathComponent(truth.file).path
        var collector = TrackingCollector()
        let model = try OpenedCapture.open(path: path).accept(&collector)
        let findings = Auditor().audit(model, file: truth.file)
        for a in truth.assertions {
            let why = a.evidence.map { String($0.prefix(240)) } ?? ""
            if a.rule != nil, let expect = a.expect {
                let hits = a.overlapping(findings)
                if expect == "fire" {
                    let need = a.minDurationSeconds ?? 0
                    #expect(hits.contains { $0.end.seconds - $0.start.seconds >= need - 0.01 },
                            "\(name): \(a.label) must fire\(need > 0 ? " for at least \(need) s" : ""), found \(hits.map(\.message)) — \(why)")
                } else {
                    #expect(hits.isEmpty, "\(name): \(a.label) must stay silent, but: \(hits.map(\.message)) — \(why)")
                }
            } else if a.check == "connections", let n = a.equals {
                #expect(model.linkCount == n, "\(name): \(model.linkCount) connections, the truth \(n) — \(why)")
            } else if a.check == "max_severity_of", let atMost = a.atMost, let limit = Severity(rawValue: atMost == "note" ? "info" : atMost) {
                let worst = a.overlapping(findings).map(\.severity).max()
                #expect(worst.map { $0 <= limit } ?? true, "\(name): \(a.label): \(worst?.rawValue ?? "-") — \(why)")
            } else {
                Issue.record("\(name): an assertion of a kind this test does not know: \(a.label)")
            }
        }
    }
}
