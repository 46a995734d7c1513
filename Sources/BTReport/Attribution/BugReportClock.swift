import Foundation
import BTCapture
import BTTrack

/// The offset from UTC of a bug report's local times: its `persist.sys.timezone` at its date, from the system's
/// time zone database. nil when the report names no zone or the system does not know it (matching then goes by
/// pattern, `ClockBasis`).
public enum BugReportClock {
    public static func zoneOffsetSeconds(_ report: BugReportApps, near capture: Timestamp?) -> Int64? {
        guard let name = report.timeZone, let zone = TimeZone(identifier: name) else { return nil }
        let seconds: Double
        if let dump = report.dumpTime, dump.year != nil {
            seconds = Double(dump.naiveSeconds(defaultYear: 1970))
        } else if let capture {
            seconds = capture.seconds
        } else {
            return nil
        }
        return Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: seconds)))
    }

    /// The model's attribution from `report`.
    public static func attribute(_ model: CaptureModel, report: BugReportApps) -> AppAttribution {
        AppAttribution.attribute(model, report: report, zoneOffsetSeconds: zoneOffsetSeconds(report, near: model.firstTimestamp))
    }
}
