import Foundation
import Testing
import TestSupport

/// Long captures read short: `timeline` and `energy` fold repeated advertising sessions, short scans and failed
/// attempts into one entry, `timeline` a link's repeated lines and links alike too (samples/repeating-episodes.btsnoop: 200 sessions, 29 scans, 50 cancelled attempts
/// in 98 minutes), `--full` and JSON keep every item, and `audit -v` prints each piece of advice once.
@Suite struct RepeatedEpisodesTests {
    static let capture = "samples/repeating-episodes.btsnoop"

    static func run(_ arguments: [String]) throws -> CLI.Result {
        try CLI.run(arguments, directory: CLI.packageRoot.path)
    }

    @Test func timelineFoldsRepeatsAndFullListsEach() throws {
        let short = try Self.run(["timeline", Self.capture])
        #expect(short.status == 0)
        let lines = short.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count < 25, "\(short.stdout)")
        #expect(short.stdout.contains("200 advertising sessions of set 0, 1.28 s each, every 29.4 s on average, 1h 37m in all"))
        #expect(short.stdout.contains("29 short scans, 2.01 s each, every 3m 25s on average"))
        #expect(short.stdout.contains("50 × to D4:3A:2C:81:5E:07 cancelled by the host (Unknown Connection Identifier 0x02), 5.00 s each"))
        // The connection is on the first screen.
        #expect(lines.prefix(20).contains { $0.hasPrefix("Connection #1  handle 0x0040") })

        let full = try Self.run(["timeline", "--full", Self.capture])
        #expect(full.status == 0)
        let fullLines = full.stdout.split(separator: "\n")
        #expect(fullLines.filter { $0.hasPrefix("Advertising  hci0 set 0") }.count == 200)
        #expect(fullLines.filter { $0.hasPrefix("Scan  hci0") }.count == 29)
        #expect(fullLines.filter { $0.hasPrefix("Connection attempt ") }.count == 50)
        // Longer than a screen: it opens with the overview and the findings' headline.
        #expect(fullLines[2].hasPrefix("  Overview: 1 connection (#1 D4:3A:2C:81:5E:07 3.0 s); 29 scans"), "\(fullLines[2])")
        // The 50 direct attempts the host gave up on after 5 s each timed out: failed attempts (BTL009).
        #expect(fullLines[3].hasPrefix("  Findings: 2 warnings: BTL005 poll-instead-of-notify, BTL009 connection-churn"), "\(fullLines[3])")

        let json = try Self.run(["timeline", "--json", Self.capture])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect((object["advertising"] as? [Any])?.count == 200)
        #expect((object["scans"] as? [Any])?.count == 29)
        #expect((object["failed_connections"] as? [Any])?.count == 50)
    }

    /// A 5-hour iPhone capture (../shared/captures/real): a link that runs the same exchanges for 90 minutes and
    /// 19 short connections, most of them alike.
    static let iPhone = CLI.packageRoot.deletingLastPathComponent()
        .appendingPathComponent("shared/captures/real/ios_bafang_ebike_bluetoothd_hci.pklg").path

    @Test func realIPhoneTimelineFoldsToAFewScreens() throws {
        guard FileManager.default.fileExists(atPath: Self.iPhone) else {
            FileHandle.standardError.write(Data("NOTE: \(Self.iPhone) is absent: the folded timeline of the real 5-hour iPhone capture (at most 300 lines) was NOT checked.\n".utf8))
            return
        }
        let short = try Self.run(["timeline", Self.iPhone])
        #expect(short.status == 0)
        let lines = short.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count <= 300, "\(lines.count) lines")
        // The phone's server notifying and the peer writing back, over and over for 90 minutes: one line.
        #expect(lines.contains { $0.contains(" × every ~") && $0.contains(": phone's server: notifications handle 0x001e, last 02 10 00 00 1f 00 00 00; peer: writes handle 0x001b") },
                "\(short.stdout)")
        // Ten short connections alike to the first of them.
        #expect(lines.contains { $0.hasPrefix("Connections like #2  ×10 more: #3, #6, #8") }, "\(short.stdout)")
        // --full lists every line: each connection under its heading, each exchange.
        let full = try Self.run(["timeline", "--full", Self.iPhone])
        #expect(full.status == 0)
        let fullLines = full.stdout.split(separator: "\n")
        #expect(fullLines.count > 1_500)
        #expect(fullLines.filter { $0.hasPrefix("Connection #") }.count == 21)
        #expect(!full.stdout.contains(" × every ~") && !full.stdout.contains("Connections like"))
        #expect(fullLines.filter { $0.hasSuffix("phone's server: 1 notification handle 0x001e, last 02 10 00 00 1f 00 00 00") }.count > 10)
        // Every connection is counted in the folded text: under its heading or in the entry of those alike.
        let headings = lines.filter { $0.hasPrefix("Connection #") }.count
        let alike = lines.filter { $0.hasPrefix("Connections like #") }.compactMap { line -> Int? in
            line.split(separator: "×").dropFirst().first.flatMap { Int($0.prefix { $0.isNumber }) }
        }
        #expect(headings + alike.reduce(0, +) == 21, "\(headings) headings, \(alike) alike")
    }

    @Test func fewRepeatsStayAsTheyWere() throws {
        // Two failed attempts (under three of a kind) are listed each, as before.
        let churn = try Self.run(["timeline", "samples/connection-churn.btsnoop"])
        #expect(churn.stdout.components(separatedBy: "Failed connection  ").count - 1 == 2)
        #expect(!churn.stdout.contains("Overview:"))
    }

    @Test func energyFoldsRepeatsWithTheirSummedCost() throws {
        let short = try Self.run(["energy", Self.capture])
        #expect(short.status == 0)
        #expect(short.stdout.contains("Advertising hci0 set 0 ×200 sessions, 1.28 s each"))
        #expect(short.stdout.contains("Scan hci0 passive duty 50 % ×29 short scans"))
        let full = try Self.run(["energy", "--full", Self.capture])
        #expect(full.stdout.split(separator: "\n").filter { $0.hasPrefix("  Advertising hci0 set 0,") }.count == 200)
        // The totals do not depend on how the entries are shown.
        func total(_ text: String) -> Substring? { text.split(separator: "\n").first { $0.hasPrefix("    phone: ") && $0.contains("per hour of capture") } }
        #expect(total(short.stdout) != nil && total(short.stdout) == total(full.stdout))
    }

    @Test func verboseAuditPrintsEachAdviceOnce() throws {
        let r = try Self.run(["audit", "-v", "--fail-on", "never", "samples/wasteful-central.btsnoop", "samples/connection-churn.btsnoop"])
        #expect(r.status == 0)
        let adviceLines = r.stdout.split(separator: "\n").filter { $0.hasPrefix("            ") && !$0.contains("records ") }
            .filter { !$0.contains("(advice: as for") }
        #expect(!adviceLines.isEmpty)
        #expect(Set(adviceLines).count == adviceLines.count, "an advice is printed twice")
        #expect(r.stdout.contains("(advice: as for BTL"))
    }
}
