import BTWire
import BTCapture

/// Whose a scan or a link was, and what shows it: an app the bug report names, the OS, or nobody the capture
/// can name. Never a guess: `unknown` says why it stays unknown.
public struct Owner: Sendable, Equatable {
    /// What kind of owner it is.
    public enum Kind: String, Sendable {
        /// Apps named by the bug report (several when they shared the controller's all-pass filter).
        case app
        /// The operating system: device discovery, a filtered background scan, a link the OS drives.
        case os
        /// No evidence names anyone.
        case unknown
    }

    public var kind: Kind
    /// The packages (or shared uids) when `kind` is `app`, in the order they were matched.
    public var apps: [String]
    /// What shows it, in words: "bug report: GATT Scanner Map, scan started 17:26:57 local, 76.1 s, filtered".
    public var evidence: String

    public init(kind: Kind, apps: [String] = [], evidence: String) {
        self.kind = kind
        self.apps = apps
        self.evidence = evidence
    }

    public static func app(_ name: String, evidence: String) -> Owner { Owner(kind: .app, apps: [name], evidence: evidence) }
    public static func os(_ evidence: String) -> Owner { Owner(kind: .os, evidence: evidence) }
    public static func unknown(_ evidence: String) -> Owner { Owner(kind: .unknown, evidence: evidence) }

    /// `com.example.app`, `com.a + com.b`, `OS`, `unattributed`.
    public var name: String {
        switch kind {
        case .app: apps.joined(separator: " + ")
        case .os: "OS"
        case .unknown: "unattributed"
        }
    }

    public func includes(_ app: String) -> Bool { kind == .app && apps.contains(app) }

    /// Adds `app` as a co-owner (another app on the same shared filter).
    mutating func add(_ app: String, evidence more: String) {
        if kind != .app {
            self = .app(app, evidence: more)
        } else if !apps.contains(app) {
            apps.append(app)
            evidence += "; " + more
        }
    }
}
