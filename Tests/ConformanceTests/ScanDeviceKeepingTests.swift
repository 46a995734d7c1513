import Foundation
import Testing
import BTCapture
import BTTrack
import BTRules
import BTReport
import TestSupport
import BTScenario

/// Finished scan sessions keep only what reports read of their per-device counts (`TrackerOptions.scanDevicesListed`,
/// `ScanDeviceKeeping`): the audit and `devices --json` must read the same as with every list whole, on one thread
/// and on two, on every sample and real capture.
@Suite("Scan device counts trimmed as scans end")
struct ScanDeviceKeepingTests {
    /// The audit's JSON and the devices JSON of `path`, its scans' lists trimmed to `listed`.
    static func reports(_ path: String, listed: Int, policy: LinkThreadPolicy) throws -> String {
        var out = ""
        for input in try CaptureInputs.resolve(path) {
            let capture = try input.open()
            var options = TrackerOptions()
            options.linkThread = policy
            options.scanDevicesListed = listed
            var collector = TrackingCollector(options: options)
            let model = try capture.accept(&collector)
            let findings = Auditor().audit(model, file: input.path)
            out += AuditJSON.render(AuditRun(captures: [AuditedCapture(file: input.path, findings: findings)],
                                             failOn: .warning, version: "test"))
            out += DevicesJSON.object(DevicesReport(file: input.path, info: capture.info, model: model,
                                                    advertiserOverflow: model.advertiserOverflow)).serialized()
        }
        return out
    }

    static func check(_ path: String) throws {
        let whole = try reports(path, listed: .max, policy: .never)
        for policy in [LinkThreadPolicy.never, .always] {
            #expect(try reports(path, listed: ScanSessionJSON.topDeviceCount, policy: policy) == whole, "\(path)")
        }
    }

    @Test("samples", arguments: LinkThreadTests.samples)
    func sample(name: String) throws { try Self.check("samples/" + name) }

    @Test("real captures", arguments: RealCaptures.names)
    func real(name: String) throws { try Self.check(RealCaptures.directory.appendingPathComponent(name).path) }
}

/// The counters behind the bound: on a generated capture of hundreds of scans (`btlens-scenario bench --shape
/// scans`), finished sessions tracked as the audit tracks keep no device of their lists (the bench's peers never
/// advertise) and each has its app scan's devices counted, while tracked whole they keep hundreds each.
@Suite("Scan device counts: the bound")
struct ScanDeviceBoundTests {
    @Test("a capture of many scans keeps no per-device list once its scans ended")
    func manyScans() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("btlens-scans-\(getpid()).btsnoop").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        _ = try BenchmarkGenerator.write(to: path, targetBytes: 4 << 20, shape: .scans)
        func model(listed: Int) throws -> CaptureModel {
            var options = TrackerOptions.withoutAdvertisers
            options.scanDevicesListed = listed
            var collector = TrackingCollector(options: options)
            return try OpenedCapture.open(path: path).accept(&collector)
        }
        let whole = try model(listed: .max), trimmed = try model(listed: 0)
        let ended = trimmed.scans.filter { $0.end != nil }
        #expect(ended.count > 20)
        #expect(whole.scans.filter { $0.end != nil }.map(\.reportsPerDevice.count).reduce(0, +) > 100 * ended.count)
        #expect(ended.allSatisfy { $0.reportsPerDevice.isEmpty && $0.scanDevices != nil })
        #expect(trimmed.appScans.map(\.received.devices) == whole.appScans.map(\.received.devices))
    }
}
