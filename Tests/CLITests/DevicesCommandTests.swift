import Foundation
import Testing
import TestSupport

/// The real captures beside the repository (../shared/captures/real); absent on machines without them.
enum RealCaptureFiles {
    static let directory = CLI.packageRoot.deletingLastPathComponent().appendingPathComponent("shared/captures/real")

    /// Every capture file (not the manifest or the expected/ and expected-ll/ folders), or [] with a note on stderr.
    static let all: [String] = {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        let captures = files.filter { name in
            var isDirectory: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: path(name), isDirectory: &isDirectory)
            return !isDirectory.boolValue && !name.hasSuffix(".tsv") && !name.hasSuffix(".md")
        }.sorted()
        if captures.isEmpty {
            FileHandle.standardError.write(Data("""
                NOTE: \(directory.path) is absent: btlens devices was NOT run over the real captures.\n
                """.utf8))
        }
        return captures
    }()

    static func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
}

@Suite("btlens devices")
struct DevicesCommandTests {
    static let schema = "Sources/BTReport/Schemas/devices.schema.json"

    func json(_ path: String) throws -> [String: Any] {
        let r = try CLI.run(["devices", "--json", path])
        #expect(r.status == 0, "\(r.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
    }

    @Test("the text table: one row per advertiser, most reports first, then scans and own advertising")
    func text() throws {
        let path = try writeScenario("beacons")
        let r = try CLI.run(["devices", path])
        #expect(r.status == 0)
        #expect(r.stderr.isEmpty)
        let lines = r.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.first?.contains("13 advertisers") == true)
        let header = try #require(lines.first { $0.contains("ADDRESS") })
        for column in ["TYPE", "NAME", "RSSI min/med/max", "REPORTS", "FIRST", "LAST", "DETAILS"] {
            #expect(header.contains(column), "column \(column)")
        }
        #expect(r.stdout.contains("Treadmill 44") && r.stdout.contains("Kitchen Scale Pro"))
        #expect(r.stdout.contains("iBeacon e2c56db5-dffb-48d2-b060-d0f5a71096e0 2/2571"))
        // Sorted by reports, descending: the REPORTS column never increases down the table.
        let headerIndex = try #require(lines.firstIndex(of: header))
        let rows = lines[(headerIndex + 1)...].prefix { $0.hasPrefix("  ") && !$0.isEmpty }
        #expect(rows.count == 13)
        let reportColumn = header.range(of: "REPORTS").map { header.distance(from: header.startIndex, to: $0.upperBound) }
        let counts = rows.compactMap { row -> Int? in
            guard let end = reportColumn else { return nil }
            let cell = row.prefix(end).split(separator: " ").last
            return cell.flatMap { Int($0) }
        }
        #expect(counts.count == 13 && counts == counts.sorted(by: >))
        // Aligned: every row has its REPORTS value ending in the same column as the header.
        #expect(rows.allSatisfy { $0.count >= (reportColumn ?? 0) })
        #expect(lines.contains("Scans") && lines.contains("Own advertising"))
        #expect(r.stdout.contains("legacy active") && r.stdout.contains("1M 50/30, Coded 150/90 ms"))
        #expect(r.stdout.contains("no advertising sessions"))
        #expect(!lines.contains { $0.hasSuffix(" ") }, "no trailing spaces")
    }

    @Test("--json has the documented shape and is valid against devices.schema.json",
          arguments: ["beacons", "heart-rate-session", "wasteful-central", "peripheral-role", "fragmented-acl"])
    func jsonShape(scenario: String) throws {
        let path = try writeScenario(scenario)
        let r = try CLI.run(["devices", "--json", path])
        #expect(r.status == 0)
        try SchemaValidation.validate(r.stdout, schema: Self.schema)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        #expect(object["file"] as? String == (path as NSString).lastPathComponent)
        for key in ["advertisers", "scans", "own_advertising"] { #expect(object[key] is [Any], "\(key)") }
        for scan in object["scans"] as? [[String: Any]] ?? [] {
            for key in ["start", "end", "filter_duplicates", "type", "interval_ms", "window_ms", "reports"] {
                #expect(scan.keys.contains(key), "scan key \(key)")
            }
        }
        // Keys in the documented order.
        let keys = r.stdout.split(separator: "\n").filter { $0.hasPrefix("  \"") }.map { $0.split(separator: "\"")[1] }
        #expect(keys == ["file", "format", "first_timestamp", "last_timestamp", "advertisers", "advertisers_not_kept",
                         "scans", "own_advertising"])
    }

    @Test("--json: scans with and without duplicate filtering, still on at the end, iBeacon fields")
    func jsonValues() throws {
        let beacons = try json(try writeScenario("beacons"))
        let advertisers = try #require(beacons["advertisers"] as? [[String: Any]])
        let beacon = try #require(advertisers.first { ($0["ibeacon"] as? [String: Any])?["minor"] as? Int == 2571 })
        let ibeacon = try #require(beacon["ibeacon"] as? [String: Any])
        #expect(ibeacon["uuid"] as? String == "e2c56db5-dffb-48d2-b060-d0f5a71096e0")
        #expect(ibeacon["major"] as? Int == 2 && ibeacon["measured_power"] as? Int == -59)
        #expect(beacon["address"] as? String == "C1:00:00:00:B0:02" && beacon["address_type"] as? String == "random")
        let rssi = try #require(beacon["rssi"] as? [String: Any])
        #expect((rssi["min"] as? Int ?? 0) <= (rssi["median"] as? Int ?? 1))
        #expect((rssi["median"] as? Int ?? 0) <= (rssi["max"] as? Int ?? -1))
        let reports = advertisers.compactMap { $0["reports"] as? Int }
        #expect(reports == reports.sorted(by: >))

        let heart = try #require(try json(try writeScenario("heart-rate-session"))["scans"] as? [[String: Any]])
        #expect(heart.count == 1)
        #expect(heart.first?["filter_duplicates"] as? Bool == true && heart.first?["type"] as? String == "active")
        #expect(heart.first?["interval_ms"] as? Double == 60 && heart.first?["window_ms"] as? Double == 30)
        #expect(heart.first?["end"] is Double)

        let wasteful = try #require(try json(try writeScenario("wasteful-central"))["scans"] as? [[String: Any]])
        #expect(wasteful.count == 2)
        #expect(wasteful.allSatisfy { $0["filter_duplicates"] as? Bool == false && $0["duty_cycle"] as? Double == 1 })
        #expect(wasteful.last?["end"] is NSNull)
    }

    @Test("own advertising: legacy and extended sets, Advertising Set Terminated, re-enabled set")
    func ownAdvertising() throws {
        let sessions = try #require(try json(try writeScenario("peripheral-role"))["own_advertising"] as? [[String: Any]])
        let extended = sessions.filter { $0["extended"] as? Bool == true }
        #expect(extended.count == 3)
        #expect(extended.first?["end_reason"] as? String == "connected" && extended.first?["completed_events"] as? Int == 37)
        #expect(extended.first?["name"] as? String == "btlens Demo")
        #expect(extended.contains { $0["name"] as? String == "btlens Demo broadcast" && $0["connectable"] as? Bool == false })
        #expect(extended.last?["resumed_after_connection"] is [String: Any])
        #expect(sessions.contains { $0["extended"] as? Bool == false && $0["interval_min_ms"] as? Double == 100 })
    }

    @Test("several files give an array; - reads standard input")
    func severalAndStdin() throws {
        let a = try writeScenario("beacons"), b = try writeScenario("heart-rate-session")
        let r = try CLI.run(["devices", "--json", a, b])
        #expect(r.status == 0)
        let array = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]])
        #expect(array.count == 2)
        let bytes = try TemporaryDirectory.contents(of: b)
        let stdin = try CLI.run(["devices", "-"], stdin: bytes)
        #expect(stdin.status == 0 && stdin.stdout.hasPrefix("-  ") && stdin.stdout.contains("HR Sensor 5E07"))
    }

    @Test("usage errors exit 2; an unreadable file exits 3 with one line naming it")
    func errors() throws {
        #expect(try CLI.run(["devices"]).status == 2)
        #expect(try CLI.run(["devices", "--frobnicate", "x"]).status == 2)
        let dir = try TemporaryDirectory()
        let missing = try CLI.run(["devices", dir.file("nope.log")])
        #expect(missing.status == 3)
        #expect(missing.stderr.split(separator: "\n").count == 1 && missing.stderr.contains("nope.log"))
        let help = try CLI.run(["help", "devices"])
        #expect(help.stdout.contains("4096") && help.stdout.contains("Examples"))
        #expect(try CLI.run(["--help"]).stdout.contains("devices"))
    }

    @Test("every real capture: no crash, valid JSON", arguments: RealCaptureFiles.all)
    func realCapture(name: String) throws {
        let r = try CLI.run(["devices", "--json", RealCaptureFiles.path(name)])
        #expect(r.status == 0, "\(name): \(r.stderr)")
        try SchemaValidation.validate(r.stdout, schema: Self.schema)
        let text = try CLI.run(["devices", RealCaptureFiles.path(name)])
        #expect(text.status == 0 && text.stdout.contains("Scans"))
    }

    @Test("yeelock: the lock advertises as EL_B0PUmFAH; an iBeacon fda50693-… major 5 minor 6",
          .enabled(if: RealCaptureFiles.all.contains("yeelock_smartlock_btsnoop_hci.log")))
    func yeelock() throws {
        let object = try json(RealCaptureFiles.path("yeelock_smartlock_btsnoop_hci.log"))
        let advertisers = try #require(object["advertisers"] as? [[String: Any]])
        let lock = try #require(advertisers.first { $0["name"] as? String == "EL_B0PUmFAH" })
        #expect(lock["address"] as? String == "60:C0:BF:1A:19:75" && lock["connectable"] as? Bool == true)
        let beacons = advertisers.compactMap { $0["ibeacon"] as? [String: Any] }
        #expect(beacons.contains {
            $0["uuid"] as? String == "fda50693-a4e2-4fb1-afcf-c6eb07647825" && $0["major"] as? Int == 5 && $0["minor"] as? Int == 6
        })
        let scans = try #require(object["scans"] as? [[String: Any]])
        #expect(!scans.isEmpty && scans.allSatisfy { $0["type"] as? String == "active" })
    }
}
