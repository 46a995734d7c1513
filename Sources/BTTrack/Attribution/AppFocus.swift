import BTWire
import BTCapture

/// `btlens audit --app PACKAGE`: the model as that app's alone. With a bug report's attribution, the app's
/// scans are the scan clients it owns (filtered or not) and its links those it owns; everybody else's scanning
/// becomes the background the notes mention once, and their links the OS's (`anotherApp`, `unattributed`), not
/// judged. Without attribution nothing changes and `fallback` says what the audit fell back to.
public struct AppFocus: Sendable {
    public var app: String
    /// Whether the bug report named the app's scans and links.
    public var attributed: Bool
    /// What the audit fell back to when it could not focus on the app; nil when it did.
    public var fallback: String?
    /// The others' activity, once, by owner: scans and their time, links.
    public var others: [Other]

    /// One other owner's activity in the capture: named once, priced, never judged.
    public struct Other: Sendable {
        public var owner: String
        public var scans: Int
        public var scanNanoseconds: Int64
        public var links: Int
        /// The phone's radio charge of their scanning (`price`), mC.
        public var chargeMC: Double = 0
    }

    /// Focuses `model` on `app` (its connections' ownership is changed in place: audit the unfocused model first
    /// when both are wanted).
    /// `price`: the phone's charge (mC) of scanning a session for so many seconds.
    public static func focus(_ model: inout CaptureModel, on app: String,
                             price: (ScanSession, Double) -> Double = { _, _ in 0 }) -> AppFocus {
        guard let attribution = model.attribution else {
            return AppFocus(app: app, attributed: false, fallback: "no bug report with per-app sections came with this capture: "
                + "judged as btlens infers the app without one (unfiltered scans on the all-pass filter, the links the OS does not drive), "
                + "whichever app made them", others: [])
        }
        let end = model.lastTimestamp ?? Timestamp(nanoseconds: Timestamp.limit)
        var owned = Set<Int>()
        var others: [String: Other] = [:]
        func other(_ owner: Owner) -> String { owner.kind == .app ? owner.name : owner.name + " (" + owner.evidence + ")" }
        for s in attribution.scans {
            if s.owner.includes(app) {
                if let c = s.client { owned.insert(c) }
            } else {
                let key = other(s.owner)
                others[key, default: Other(owner: s.owner.name, scans: 0, scanNanoseconds: 0, links: 0)].scans += 1
                others[key]!.scanNanoseconds += s.duration(captureEnd: end)
                if let session = s.session { others[key]!.chargeMC += price(model.scans[session], Double(s.duration(captureEnd: end)) / 1e9) }
            }
        }
        let clientControllers = Set(model.scanClients.map(\.controller))
        var built = AppScans.build(sessions: model.scans, clients: model.scanClients, clientControllers: clientControllers,
                                   captureEnd: model.lastTimestamp, owned: owned)
        // On a controller without clients, the sessions the report gives the app.
        let ownedSessions = Set(attribution.scans.filter { $0.client == nil && $0.owner.includes(app) }.compactMap(\.session))
        built.scans.removeAll { $0.attribution == .controllerSession && !$0.sessions.contains(where: ownedSessions.contains) }
        (model.appScans, model.backgroundScanning, model.unattributedScanning) = built
        for c in model.connections {
            let owner = attribution.linkOwner(id: c.id) ?? .unknown("")
            if owner.includes(app) {
                c.ownership = .app
            } else if c.ownership.isApp {
                c.ownership = .os(reason: owner.kind == .app ? .anotherApp : .unattributed)
                let key = other(owner)
                others[key, default: Other(owner: owner.name, scans: 0, scanNanoseconds: 0, links: 0)].links += 1
            }
        }
        let named = attribution.apps.contains { $0.name == app } || attribution.scans.contains { $0.owner.includes(app) }
            || attribution.linkOwners.contains { $0.includes(app) }
        return AppFocus(app: app, attributed: true,
                        fallback: named ? nil : "\(app) is not among the apps the bug report names (\(attribution.appNames.joined(separator: ", "))): nothing of it to judge",
                        others: others.values.sorted { ($0.owner, $0.scans) < ($1.owner, $1.scans) })
    }
}
