import Foundation
import Testing
import TestSupport

@Suite("btlens energy")
struct EnergyCommandTests {
    static let schema = "Sources/BTReport/Schemas/energy.schema.json"

    static func json(_ args: [String]) throws -> [String: Any] {
        let r = try CLI.run(["energy", "--json"] + args)
        #expect(r.status == 0, "\(r.stderr)")
        try SchemaValidation.validate(r.stdout, schema: schema)
        return try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
    }

    static func charge(_ cost: Any?) -> Double { ((cost as? [String: Any])?["charge_mc"] as? NSNumber)?.doubleValue ?? -1 }

    @Test("--json follows energy.schema.json; scans, connections and advertising add up to the total",
          arguments: ["wasteful-central", "heart-rate-session", "peripheral-role", "beacons", "connection-churn"])
    func jsonShape(scenario: String) throws {
        let j = try Self.json([try writeScenario(scenario)])
        let total = Self.charge((j["total"] as? [String: Any])?["phone"])
        var sum = 0.0
        for key in ["scans", "connections", "advertising"] {
            for item in (j[key] as? [[String: Any]]) ?? [] { sum += Self.charge(item["phone"]) }
        }
        #expect(total >= 0 && abs(sum - total) <= max(1e-3, total * 1e-6), "\(scenario): \(sum) vs \(total)")
        // Each connection is the sum of its phases.
        for c in (j["connections"] as? [[String: Any]]) ?? [] {
            let phases = ((c["phases"] as? [[String: Any]]) ?? []).reduce(0) { $0 + Self.charge($1["phone"]) }
            #expect(abs(phases - Self.charge(c["phone"])) <= 1e-3)
        }
    }

    @Test("judged links' rows set aside in TMPDIR give the same report; a TMPDIR it cannot use is a warning, not a failure")
    func rowsSetAside() throws {
        let path = try writeScenario("connection-churn")
        let directory = try TemporaryDirectory()
        for args in [["--side", "both", "--full"], ["--json"]] {
            let whole = try CLI.run(["energy"] + args + [path])
            // Every link judged (and its row set aside) as soon as the next one finishes.
            let spilled = try CLI.run(["energy"] + args + [path],
                                      environment: ["BTLENS_LINK_WINDOW": "1", "TMPDIR": directory.path])
            #expect(whole.status == 0 && spilled.status == 0 && spilled.stderr.isEmpty, "\(spilled.stderr)")
            #expect(spilled.stdout == whole.stdout && whole.stdout.contains(args == ["--json"] ? "\"phases\"" : "Connection #"))
            let missing = try CLI.run(["energy"] + args + [path],
                                      environment: ["BTLENS_LINK_WINDOW": "1", "TMPDIR": directory.path + "/missing"])
            #expect(missing.status == 0 && missing.stdout == whole.stdout)
            #expect(missing.stderr.hasPrefix("btlens: warning: ") && missing.stderr.contains("/missing")
                    && missing.stderr.contains("kept in memory") && missing.stderr.split(separator: "\n").count == 1)
        }
        // The file's name is removed as soon as it is made: nothing is left behind.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }

    @Test("the text names every activity, the totals and the profile; --side both adds the peripheral")
    func text() throws {
        let path = try writeScenario("wasteful-central")
        let r = try CLI.run(["energy", "--side", "both", path])
        #expect(r.status == 0 && r.stderr.isEmpty)
        for part in ["profile: phone Pixel 7", "Scan hci0 active duty 100 %", "Connection #1 handle 0x0040", "peripheral:",
                     "Total over", "host wake-ups:", "mAh"] {
            #expect(r.stdout.contains(part), "\(part)")
        }
        let phoneOnly = try CLI.run(["energy", path])
        #expect(!phoneOnly.stdout.contains("    peripheral:"))
    }

    @Test("--profile: power_profile.xml keys change the phone's charge; a bad profile exits 2 naming it")
    func profile() throws {
        let dir = try TemporaryDirectory()
        let path = try writeScenario("wasteful-central")
        let pixel4 = try dir.write("pixel4.yml", Array("""
            phone:
              name: Pixel 4
              bluetooth.controller.rx: 9
              bluetooth.controller.tx: 7
              bluetooth.controller.voltage: 3300
            """.utf8))
        let base = Self.charge(((try Self.json([path]))["total"] as? [String: Any])?["phone"])
        let other = try Self.json(["--profile", pixel4, path])
        #expect((other["profile"] as? [String: Any])?["phone"] as? String == "Pixel 4")
        let charge = Self.charge((other["total"] as? [String: Any])?["phone"])
        // Scanning dominates the sample: rx at 9 mA against 5.8 mA.
        #expect(charge > base * 1.4 && charge < base * 1.6, "\(charge) vs \(base)")
        let bad = try dir.write("bad.yml", Array("phone:\n  bluetooth.controller.rx: lots\n".utf8))
        let r = try CLI.run(["energy", "--profile", bad, path])
        #expect(r.status == 2 && r.stderr.contains("bad.yml") && r.stderr.split(separator: "\n").count == 1, "\(r.stderr)")
        #expect(try CLI.run(["energy"]).status == 2)
        #expect(try CLI.run(["energy", dir.file("missing.log")]).status == 3)
        #expect(try CLI.run(["help", "energy"]).stdout.contains("Examples"))
    }

    @Test("several files give an array; the real captures all follow the schema", arguments: RealCaptureFiles.all)
    func realCapture(name: String) throws {
        let r = try CLI.run(["energy", "--json", RealCaptureFiles.path(name)])
        #expect(r.status == 0, "\(name): \(r.stderr)")
        try SchemaValidation.validate(r.stdout, schema: Self.schema)
    }

    @Test("two files: an array of two")
    func severalFiles() throws {
        let r = try CLI.run(["energy", "--json", try writeScenario("beacons"), try writeScenario("heart-rate-session")])
        let array = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]])
        #expect(array.count == 2)
    }

    /// Found by `make fuzz`: a damaged btsnoop whose records lie 300,000 years apart made the text's "Total over"
    /// duration overflow `Int64` nanoseconds.
    @Test("a capture spanning longer than Int64 nanoseconds prints a saturated duration, not a crash")
    func hugeSpan() throws {
        let dir = try TemporaryDirectory()
        let hciReset: [UInt8] = [0x01, 0x03, 0x0C, 0x00]
        // Raw btsnoop timestamps (µs since year 0): 0 and nearly 2⁶³, clamped by the reader to ±2⁶² ns.
        func record(_ raw: UInt64) -> [UInt8] {
            CaptureBytes.be32(UInt32(hciReset.count)) + CaptureBytes.be32(UInt32(hciReset.count)) + CaptureBytes.be32(2)
                + CaptureBytes.be32(0) + CaptureBytes.be64(raw) + hciReset
        }
        var bytes = CaptureBytes.btsnoopHeader(datalink: 1002)
        bytes += record(0) + record(0x7FFF_FFFF_FFFF_0000)
        let path = try dir.write("span.btsnoop", bytes)
        let r = try CLI.run(["energy", path])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("Total over"))
    }
}
