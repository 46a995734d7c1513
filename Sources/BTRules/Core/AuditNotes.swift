import BTWire
import BTTrack
import BTEnergy

/// What a reader of an audit must know about the capture to read its findings right: said once per capture,
/// not per finding.
public enum AuditNotes {
    /// Rules that judge the host's own HCI scanning and advertising commands: an air capture shows none.
    public static let hostCommandRules = ["BTL001 scan-after-connect", "BTL002 duplicate-scan", "BTL007 reconnect-by-scan",
                                   "BTL013 advertising-after-connect", "BTL014 scan-churn"]
    /// Rules that judge an absence of traffic, which ciphertext without the key hides.
    public static let absenceRules = ["BTL003", "BTL004", "BTL006", "BTL010", "BTL011"]
    /// Rules that judge an attribute unused, which a request the sniffer missed may have used.
    public static let unusedAttributeRules = ["BTL003", "BTL004"]

    /// Rules that read ATT payloads, which a capture that cut its ACL packets short (a btsnooz log or summary)
    /// does not hold.
    public static let payloadRules = ["BTL003", "BTL004", "BTL005", "BTL008", "BTL010", "BTL012"]

    static func cutPayloadNote(_ links: [String]) -> String {
        "connection\(links.count == 1 ? "" : "s") \(links.joined(separator: ", ")): the capture cut ACL payloads short "
            + "(Android's btsnooz keeps their first 14 bytes), so no ATT is read from them: "
            + payloadRules.joined(separator: ", ") + " (which read ATT payloads) cannot judge "
            + (links.count == 1 ? "it" : "them") + ", and " + absenceRules.joined(separator: ", ")
            + " (which judge an absence of traffic) skipped " + (links.count == 1 ? "it" : "them")
    }

    public static func notes(_ model: CaptureModel, phone: PhoneProfile = PhoneProfile()) -> [String] {
        var notes: [String] = []
        if let platform = model.platform.platform, platform != .android, platform != .linux, phone == PhoneProfile() {
            // The default profile is an Android phone's: say so rather than price another system's radio silently.
            notes.append("costs are priced with the default phone profile (\(phone.name)); this capture comes from "
                         + "\(platform.rawValue): give --profile with its radio currents for its own figures")
        }
        if model.isAirCapture {
            notes.append("air capture: each link is seen from its central, so discovery, polling, lingering, interval and "
                         + "churn findings judge the central; " + hostCommandRules.joined(separator: ", ")
                         + " need the host's HCI scan and advertising commands and do not apply")
        }
        // Links are read in place: a copy of every summary would cost as much memory as the summaries.
        let links = model.links.lazy
        let cut = Array(links.filter { $0.aclPacketsCutShort > 0 }.map { "#\($0.id)" })
        if !cut.isEmpty {
            notes.append(cutPayloadNote(cut))
        }
        let hidden = Array(links.filter { $0.hidesTraffic && $0.aclPacketsCutShort == 0 }.map { "#\($0.id)" })
        if !hidden.isEmpty {
            notes.append("connection\(hidden.count == 1 ? "" : "s") \(hidden.joined(separator: ", ")) carried encrypted PDUs "
                         + "without the key: " + absenceRules.joined(separator: ", ")
                         + " (which judge an absence of traffic) skipped \(hidden.count == 1 ? "it" : "them")")
        }
        let missed = Array(links.filter { $0.missedUses > 0 && !$0.hidesTraffic }.map { "#\($0.id)" })
        if !missed.isEmpty {
            let links = "connection" + (missed.count == 1 ? " " : "s ") + missed.joined(separator: ", ")
            let rules = unusedAttributeRules.joined(separator: ", ")
            notes.append(links + ": the sniffer missed read or write requests (their responses came without them): "
                         + rules + " (which judge attributes unused) count each as a possible use")
        }
        for b in model.backgroundScanning {
            let indexes = b.clients > 0 ? "\(b.clients) filter \(b.clients == 1 ? "index" : "indexes"): " : ""
            notes.append("hci\(b.controller): filtered scan clients (\(indexes)the OS's background scans, or filtered scans of the "
                         + "app's own, which the capture cannot tell apart) kept the controller scanning "
                         + "\(RuleText.seconds(b.nanoseconds)) outside the app's scans, mostly at \(Int((b.dutyCycle * 100).rounded())) % "
                         + "duty; the scan rules judge only the scans they can tie to the app")
        }
        let unknown = model.unattributedScanning
        if unknown > 0 {
            notes.append("the controller scanned \(RuleText.seconds(unknown)) before the capture showed whose scan it was "
                         + "(Android's scan filters were set before it began): the scan rules did not judge that time")
        }
        // The links left out, by reason: their ids.
        var reasons: [String: [Int]] = [:]
        for c in links {
            if case .os(let reason) = c.ownership { reasons[reason.description, default: []].append(c.id) }
        }
        for (reason, ids) in reasons.sorted(by: { $0.value[0] < $1.value[0] }) {
            notes.append("\(ids.count == 1 ? "connection" : "connections") \(ids.map { "#\($0)" }.joined(separator: ", ")) left out of the app's rules: \(reason)")
        }
        if model.unfollowedConnectRequests > 0 {
            notes.append("\(model.unfollowedConnectRequests) CONNECT_IND\(model.unfollowedConnectRequests == 1 ? "" : "s") "
                         + "whose link the sniffer never heard (it followed another, or the link failed to be established)")
        }
        return notes
    }
}
