import Foundation
import Testing
import BTCapture
import BTTrack
import BTReport

/// Real Android bug reports in ../shared/captures/real (any capture that comes with a bug report's text): the
/// attribution btlens prints must agree with the report's own per-app figures within the snoop log's span —
/// every scan the report kept there matched or said why not, and matched durations within the report's
/// second-resolution times. Without ../shared, or without a bug report in it, the suite says so on stderr.
@Suite("Real bug reports: apps")
struct RealBugReportTests {
    static let inputs: [CaptureInput] = {
        guard RealCaptures.available else {
            FileHandle.standardError.write(Data("NOTE: \(RealCaptures.directory.path) is absent: real bug reports were NOT checked.\n".utf8))
            return []
        }
        let files = (try? FileManager.default.contentsOfDirectory(atPath: RealCaptures.directory.path)) ?? []
        let found = files.sorted().flatMap { name in
            (try? CaptureInputs.resolve(RealCaptures.directory.appendingPathComponent(name).path))?.filter(\.hasBugReportText) ?? []
        }
        if found.isEmpty {
            FileHandle.standardError.write(Data("NOTE: no bug report in \(RealCaptures.directory.path): real per-app sections were NOT checked.\n".utf8))
        }
        return found
    }()

    @Test("the attribution agrees with each app's own figures in the capture's span")
    func figures() throws {
        for input in Self.inputs {
            guard let report = try input.bugReportApps() else { continue }
            var collector = TrackingCollector()
            let model = try input.open().accept(&collector)
            let a = BugReportClock.attribute(model, report: report)
            for f in a.apps {
                #expect(f.matched + a.unmatched.filter { a.report.scanners[$0.ref.app].name == f.name }.count >= f.keptInSpan,
                        "\(input.path): \(f.name): \(f.keptInSpan) kept in span, \(f.matched) matched")
                if f.matched == f.keptInSpan, f.matched > 0 {
                    #expect(abs(f.matchedMs - f.keptInSpanMs) <= Int64(f.matched) * 1_500, "\(input.path): \(f.name) \(f.matchedMs) vs \(f.keptInSpanMs) ms")
                }
            }
        }
    }
}
