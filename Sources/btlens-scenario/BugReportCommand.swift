import ArgumentParser
import BTCapture
import BTScenario
#if canImport(Glibc)
import Glibc
#endif

extension ScenarioTool {
    /// `bugreport DIR`: the shared test phone as Android bug reports, one per layout, with their ground truth.
    struct BugReport: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "bugreport",
            abstract: "Write the shared-phone scenario as Android bug reports (per-app sections) with ground truth.",
            discussion: """
                Three apps share one phone: com.example.tracker restarts its unfiltered scan seven times and keeps \
                scanning while connected (it misbehaves), com.example.lock scans filtered and connects, \
                com.google.uid.shared (Play services) scans filtered in the background throughout. Each bug report \
                zip holds the full snoop log and a text whose GATT Scanner Map and GATT Client Map (Android 7: one \
                GATT Client Map), BatteryStats and Play services sections name them, in the layout of the given \
                Android version; DIR/<zip>.truth.tsv says what each app did (UTC).

                Example: btlens-scenario bugreport phone/ --android 7 --android 8 --android 14 --apps tracker,lock
                """)

        @Argument(help: "Directory to write the bug reports in (must exist).")
        var directory: String
        @Option(help: "Android version whose layout to write: 7 (7.x), 8 (8.x) or 14 (9 and later); repeatable.")
        var android: [Int] = [14]
        @Option(help: "The apps on the phone, comma-separated: tracker, lock, play (default: all three).")
        var apps: String = "tracker,lock,play"
        @Flag(help: "Leave the time zone (persist.sys.timezone) out of the report: btlens must match by pattern.")
        var noZone = false
        @Flag(help: "Write the report's times as if the snoop log's clock were the phone's local time (as one vendor's btsnooz summaries are).")
        var snoopLocalTime = false

        func run() throws {
            var chosen = Set<SharedPhone.App>()
            for name in apps.split(separator: ",") {
                switch name {
                case "tracker": chosen.insert(.tracker)
                case "lock": chosen.insert(.lock)
                case "play": chosen.insert(.playServices)
                default: throw ToolError.usage("unknown app '\(name)' (known: tracker, lock, play)")
                }
            }
            for version in android {
                let layout: DumpLayout
                switch version {
                case 7: layout = .android7
                case 8, 9: layout = .android8
                case 10...: layout = .android10
                default: throw ToolError.usage("--android \(version): btlens knows the layouts of Android 7 and later")
                }
                let name = "bugreport-shared-phone-android-\(version)\(noZone ? "-nozone" : "")\(snoopLocalTime ? "-localtime" : "")"
                let path = directory + "/" + name + ".zip", scratch = directory + "/.\(name)-\(getpid()).btsnoop"
                defer { unlink(scratch) }
                let truth: SharedPhoneTruth
                do {
                    truth = try SharedPhoneBugReport.writeZip(path, layout: layout, apps: chosen, withZone: !noZone,
                                                             snoopInLocalTime: snoopLocalTime, scratch: scratch)
                } catch let error as CaptureError {
                    throw ToolError.io("\(path): \(error.message)")
                }
                try ScenarioTool.writeFile(Array(SharedPhoneBugReport.truthRows(truth).utf8), to: path + ".truth.tsv")
            }
        }
    }
}
