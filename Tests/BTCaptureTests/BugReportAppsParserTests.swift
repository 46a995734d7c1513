import Testing
@testable import BTCapture

/// The per-app sections of bug reports in each layout AOSP has printed (texts written here in AOSP's grammar).
@Suite struct BugReportAppsParserTests {
    static let android7 = """
        == dumpstate: 2017-03-02 10:15:40
        [persist.sys.timezone]: [Europe/Berlin]
        [ro.build.version.release]: [7.1.1]
        DUMP OF SERVICE bluetooth_manager:
        Profile: GattService
        GATT Client Map
          Entries: 2

          com.example.tracker (Registered)
          LE scans (started/stopped)         : 3 / 2
          Scan time in ms (min/max/avg/total): 4000 / 9000 / 6500 / 13000
          Last 2 scans                       :
            2017/03/02 10:10:01 - 4000ms
            2017/03/02 10:11:30 - 9000ms Opp Back
          Application ID                     : 5
          UUID                               : 1234
          Current scan duration in ms        : 20000
          Connections: 1
            7: C4:7C:8D:6A:01:02 15000ms

        GATT Server Map
        """

    static let android8 = """
        == dumpstate: 2018-06-12 09:02:10
        [persist.sys.timezone]: [America/New_York]
        GATT Scanner Map
          Entries: 1

          com.google.uid.shared (Registered) (Filtered)
          LE scans (started/stopped)         : 4 / 3
          Scan time in ms (min/max/avg/total): 900 / 5000 / 2000 / 6000
          Total number of results            : 17
          Last 3 scans                       :
            2018/06/12 08:59:01 - 900ms Filter 2 results
            2018/06/12 08:59:30 - 5000ms Filter 15 results
            2018/06/12 09:00:00 - 100ms 0 results
          Application ID                     : 3
          UUID                               : abcd
          Current scan duration in ms        : 118000
          Connections: 0

        GATT Client Map
          Entries: 1

          com.example.lock (Registered)
          Application ID                     : 6
          UUID                               : ef01
          Connections: 1
            3: E0:11:22:33:44:55 60000ms

        DUMP OF SERVICE batterystats:
          u0a100:
            Apk com.google.android.gms:
            Bluetooth Scan (total blamed realtime): 1m 58s 3ms (3 times)
            Bluetooth Scan (total actual realtime): 1m 58s 3ms (3 times) (currently running)
          1000:
            Bluetooth Scan (total actual realtime): 2s 0ms (1 times)
        """

    static let android14 = """
        GATT Scanner Map
          Entries: 1

          com.example.app:10123 (Registered)
          LE scans (started/stopped)                                  : 2 / 1
          Scan time in ms (active/suspend/total)                      : 9000 / 0 / 9000
          Total number of results                                     : 12
          Last 1 scans                                                :
            05-08 17:26:57 - 6000ms Filter 10 results (3) CB Regular Scan
              └ Scan Config: [ ScanMode=LOW_LATENCY, callbackType=ALL_MATCHES ]
              └ BluetoothLeScanFilter [ ServiceUuid=0000180d-0000-1000-8000-00805f9b34fb ]
          Ongoing scans                                               :
            05-08 17:27:10 - 3000ms 2 results (4) CB Regular Scan
              └ Scan Config: [ ScanMode=BALANCED, callbackType=ALL_MATCHES ]
          Application ID                     : 1
          Connections: 0

        GATT Client Map
          Entries: 1

          com.example.app:10123 (Registered)
          Application ID                     : 2
          Connections: 1
            05-08 17:27:05 - 8000ms : AA:BB:CC:DD:EE:FF (7)

        GATT Server Map
          BleSettings [scanMode=2, reportDelayMillis=0, 3 filters, callingClientName=Nearby]
        """

    @Test func testAndroid7ClientMapHoldsTheScans() {
        let apps = BugReportAppsParser.parse(text: Self.android7)
        #expect(apps.layout == .android7)
        #expect(apps.release == "7.1.1")
        #expect(apps.timeZone == "Europe/Berlin")
        #expect(apps.scanners.map(\.name) == ["com.example.tracker"])
        let scans = apps.scanners[0].scans
        #expect(scans.count == 3)
        #expect(scans[1].durationMs == 9000)
        #expect(scans[1].opportunistic && scans[1].background)
        #expect(scans[2].ongoing && scans[2].startEstimated)
        #expect(scans[2].start == LocalTime(year: 2017, month: 3, day: 2, hour: 10, minute: 15, second: 20))
        #expect(apps.connections.map(\.connection.address) == ["C4:7C:8D:6A:01:02"])
        #expect(apps.connections.first?.connection.ageMs == 15000)
    }

    @Test func testAndroid8ScannerMapAndBatteryStats() {
        let apps = BugReportAppsParser.parse(text: Self.android8)
        #expect(apps.layout == .android8)
        let app = apps.scanners[0]
        #expect(app.name == "com.google.uid.shared")
        #expect(app.flags == ["Registered", "Filtered"])
        #expect(app.results == 17)
        #expect(app.scans.count == 4)
        #expect(app.scans[0].filtered)
        #expect(app.scans[1].results == 15)
        #expect(!(app.scans[2].filtered))
        #expect(app.scans[3].durationMs == 118_000)
        #expect(app.scans[3].filtered, "the scan in progress has the app's (Filtered) flag")
        #expect(apps.clients.map(\.name) == ["com.example.lock"])
        #expect(apps.batteryScans.count == 2)
        #expect(apps.batteryScans[0].uid == 10100)
        #expect(apps.batteryScans[0].package == "com.google.android.gms")
        #expect(apps.batteryScans[0].realtimeMs == 118_003)
        #expect(apps.batteryScans[0].times == 3)
        #expect(apps.batteryScans[0].running)
        #expect(apps.batteryScans[1].uid == 1000)
    }

    @Test func testAndroid14OngoingScansConfigAndConnections() {
        let apps = BugReportAppsParser.parse(text: Self.android14)
        #expect(apps.layout == .android10)
        let app = apps.scanners[0]
        #expect(app.name == "com.example.app")
        #expect(app.uid == 10123)
        #expect(app.totalScanMs == 9000)
        #expect(app.scans.count == 2)
        #expect(app.scans[0].mode == "LOW_LATENCY")
        #expect(app.scans[0].scannerID == 3)
        #expect(app.scans[0].filters.count == 1)
        #expect(app.scans[0].start.year == nil)
        #expect(app.scans[1].ongoing)
        #expect(!(app.scans[1].filtered))
        #expect(apps.connections.count == 1)
        #expect(apps.connections[0].connection.connectionID == 7)
        #expect(apps.connections[0].connection.start?.minute == 27)
        #expect(apps.playServicesClients == [PlayServicesBLEClient(clientName: "Nearby", scanMode: "2", filters: 3)])
    }

    /// Android 9: min/max/avg/total and `(Filtered)` as before, but year-less dates, scanner ids and ongoing scans.
    static let android9 = """
        GATT Scanner Map
          com.google.uid.shared (Registered) (Filtered)
          LE scans (started/stopped)         : 3 / 2
          Scan time in ms (min/max/avg/total): 1000 / 118000 / 40000 / 2000
          Total time suspended               : 500ms
          Total number of results            : 9
          Last 2 scans                       :
            06-12 08:59:01 - 1000ms Filter 4 results (2)
              └ Suspended Time: 500ms
            06-12 08:59:30 - 1000ms Filter 5 results (2)
          Ongoing scans                      :
            06-12 09:00:12 - 118000ms Filter Suspended 0 results (3)
          Application ID                     : 3
          Connections: 1
            06-12 09:01:00 - 10000ms : AA:BB:CC:DD:EE:01 (5)

        """

    @Test func testAndroid9() {
        let apps = BugReportAppsParser.parse(text: Self.android9)
        #expect(apps.layout == .android10)
        let app = apps.scanners[0]
        #expect(app.flags == ["Registered", "Filtered"])
        #expect(app.scans.count == 3)
        #expect(app.scans.map(\.scannerID) == [2, 2, 3])
        #expect(app.scans[2].ongoing && app.scans[2].durationMs == 118_000 && app.scans[2].filtered)
        #expect(app.connections.first?.address == "AA:BB:CC:DD:EE:01")
    }

    @Test func testEmptyMapsAreAnAnswer() {
        let apps = BugReportAppsParser.parse(text: "GATT Scanner Map\n  Entries: 0\n\nGATT Client Map\n  Entries: 0\n")
        #expect(!(apps.isEmpty))
        #expect(apps.scanningApps.isEmpty)
        #expect(BugReportAppsParser.parse(text: "no bluetooth here\n").isEmpty)
    }

    @Test func testBadInputIsBounded() {
        var text = "GATT Scanner Map\n  com.flood (Registered)\n  Last 5 scans :\n"
        for i in 0..<500 { text += "    05-08 17:26:\(i % 60 < 10 ? "0" : "")\(i % 60) - \(i)ms Filter 1 results (1) CB Regular Scan\n" }
        text += String(repeating: "x", count: 100_000) + "\n    13-45 99:99:99 - -5ms\n  ((((\n"
        let apps = BugReportAppsParser.parse(text: text)
        #expect(apps.scanners.first?.scans.count == BugReportApps.Limits.scansPerApp)
    }

    @Test func testYearlessTimesBeforeANewYearReport() {
        let dump = LocalTime(year: 2019, month: 1, day: 1, hour: 0, minute: 5, second: 0)
        let december = LocalTime(year: nil, month: 12, day: 31, hour: 23, minute: 59, second: 0)
        #expect(december.naiveSeconds(before: dump, defaultYear: 2019) == LocalTime(year: 2018, month: 12, day: 31, hour: 23, minute: 59, second: 0).naiveSeconds(defaultYear: 0))
        let january = LocalTime(year: nil, month: 1, day: 1, hour: 0, minute: 1, second: 0)
        #expect(january.naiveSeconds(before: dump, defaultYear: 2019) == LocalTime(year: 2019, month: 1, day: 1, hour: 0, minute: 1, second: 0).naiveSeconds(defaultYear: 0))
    }

    @Test func testCivilDaysRoundTrip() {
        let t = LocalTime(year: 2018, month: 5, day: 8, hour: 17, minute: 26, second: 57)
        #expect(t.naiveSeconds(defaultYear: 0) == 1_525_800_417)
        #expect(LocalTime.from(seconds: 1_525_800_417) == t)
    }
}

/// Text of the sections' words in random order, with random numbers and cut lines: the parser never traps and
/// stays within its bounds.
@Suite struct BugReportAppsParserNoiseTests {
    static let words = ["GATT Scanner Map", "GATT Client Map", "  com.a.b (Registered) (Filtered)", "  x:10100 (Registered)",
                        "  LE scans (started/stopped) : ", "  Last 5 scans :", "  Ongoing scans :", "    05-08 17:26:57 - ",
                        "    2018/06/12 08:59:01 - ", "ms Filter ", " results (", ") CB Regular Scan", "      └ Scan Config: [ ScanMode=",
                        "  Connections: ", "    3: AA:BB:CC:DD:EE:FF ", "  Current scan duration in ms : ", "DUMP OF SERVICE batterystats:",
                        "  u0a", "    Bluetooth Scan (total actual realtime): ", "m ", "s ", " times)", "BleSettings [scanMode=",
                        ", callingClientName=", "== dumpstate: 2018-13-45 99:99:99", "\n", "\n", "\n", ":", "(", ")", "-", " "]

    @Test func noise() {
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<300 {
            var text = ""
            for _ in 0..<Int.random(in: 0..<400, using: &rng) {
                text += Bool.random(using: &rng) ? Self.words.randomElement(using: &rng)! : String(Int.random(in: -99_999...Int(Int32.max), using: &rng))
            }
            let apps = BugReportAppsParser.parse(text: text)
            #expect(apps.scanners.count <= BugReportApps.Limits.apps)
            #expect(apps.scanners.allSatisfy { $0.scans.count <= BugReportApps.Limits.scansPerApp && $0.scans.allSatisfy { $0.durationMs >= 0 } })
        }
    }
}
