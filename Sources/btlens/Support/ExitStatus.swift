/// btlens' documented exit codes (README, man page).
struct ExitStatus: Error {
    let code: Int32

    static let success = ExitStatus(code: 0)
    /// A finding reached the `--fail-on` threshold (audit).
    static let findings = ExitStatus(code: 1)
    /// Bad command line.
    static let usage = ExitStatus(code: 2)
    /// An input could not be read: missing, unreadable, not a capture, not Bluetooth.
    static let inputUnreadable = ExitStatus(code: 3)
    /// audit: a capture held no HCI packet or link-layer frame, so nothing was judged (unless --allow-empty).
    /// 4–6 are live capture's.
    static let nothingToJudge = ExitStatus(code: 7)
}
