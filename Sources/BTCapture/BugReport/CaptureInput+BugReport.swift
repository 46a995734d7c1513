extension CaptureInput {
    /// Whether the capture came from an Android bug report whose text can say which apps used Bluetooth.
    public var hasBugReportText: Bool { bugReportText != nil }

    /// The per-app sections of the bug report the capture came from; nil when it came from none, or the text
    /// holds none of them. Reads the text once, streaming.
    public func bugReportApps() throws -> BugReportApps? {
        guard let text = bugReportText else { return nil }
        let apps = try BugReportAppsParser.parse(text.byteSource())
        return apps.isEmpty ? nil : apps
    }

    /// The per-app sections of a text file given beside a capture (`dumpsys bluetooth_manager` output or a bug
    /// report's text); nil when it holds none.
    public static func bugReportApps(path: String) throws -> BugReportApps? {
        let apps = try BugReportAppsParser.parse(ByteSource(path: path))
        return apps.isEmpty ? nil : apps
    }
}
