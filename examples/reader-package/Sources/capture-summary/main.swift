import Foundation
import BTCapture
import BTTrack
import BTRules

// capture-summary CAPTURE: the capture's links and what the audit found, through btlens' library.
guard CommandLine.arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: capture-summary CAPTURE\n".utf8))
    exit(2)
}
let path = CommandLine.arguments[1]
do {
    var collector = TrackingCollector()
    let model = try OpenedCapture.open(path: path).accept(&collector)
    print("\(model.records) records, \(model.linkCount) links, \(model.scans.count) scans")
    for c in model.connections {
        print("link #\(c.id) handle \(String(format: "0x%04x", c.handle)) peer \(c.peerAddress.map { "\($0)" } ?? "?"): \(c.attOpcodeCounts.total) ATT PDUs")
    }
    for f in Auditor().audit(model, file: path) {
        print("\(f.severity.rawValue) \(f.id) \(f.rule): \(f.message)")
    }
} catch {
    FileHandle.standardError.write(Data("capture-summary: \(path): \(error)\n".utf8))
    exit(3)
}
