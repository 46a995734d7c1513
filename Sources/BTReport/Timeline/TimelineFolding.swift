import BTWire
import BTCapture
import BTTrack

/// What a long link repeats, folded in the text timeline as advertising sessions and scans are
/// (`RepeatedEpisodes`; `--full` and JSON keep every line). Within a connection, lines whose description is the
/// same once times and counts are taken out (`key`) read as their first occurrence and one line "27 × every ~3m
/// 20s over 1h 30m: …"; lines that follow each other in every occurrence (an exchange: the phone's notification,
/// the peer's writes) share that line. Every line that differs stays where it was. Across the capture, links
/// whose lines are alike (the same events, other peers) read as the first of them and one entry for the rest.
public enum TimelineFolding {
    /// Lines of one exchange: each occurrence of a line follows one of the line before it within this long.
    static let exchangeWindow: Int64 = 10_000_000_000
    /// Share of a line's occurrences that must follow the line before it for both to read as one exchange.
    static let exchangeShare = 0.8
    /// Links with more events (lines) than this are compared with no other: alike links are short ones.
    static let alikeEvents = 200
    /// Connections of a group named one by one in its entry, and peers.
    static let namedConnections = 8, namedPeers = 3
    /// Peers counted in a folded entry of alike links ("with 12 peers"); past it, "with over 10000 peers".
    static let countedPeers = 10_000
    /// Likenesses of links remembered per generation (`GenerationalMap`): a link alike one not seen for two
    /// generations of new likenesses (more links than 1 GB of many short ones has) starts a group of its own. A long
    /// capture's links are nearly all different: one table of them all held 4.8 MB on 10 GB.
    static let likenessesRemembered = 32_768

    // MARK: Descriptions without times and counts

    /// `text` with the times and counts of what it describes taken out, as a folded line reads it: "3 writes
    /// handle 0x001b at 4.4 Hz over 450 ms" and "1 write handle 0x001b" are both "writes handle 0x001b", "idle
    /// 1m 47s (no ATT traffic)" is "idle (no ATT traffic)". A value (after ", last ") and a setting (an interval,
    /// a timeout) are part of the description.
    public static func key(_ text: String) -> String {
        let valueStart = lastValue(in: text)
        let head = valueStart.map { text[..<$0] } ?? text[...]
        let tokens = words(head)
        var out: [String] = []
        var i = 0
        while i < tokens.count {
            if let length = durationLength(tokens, at: i) {
                let first = tokens[i], last = tokens[i + length - 1]
                let previous = out.last ?? ""
                if ["at", "over", "for", "after", "every"].contains(previous) {
                    out.removeLast()
                } else if previous == "idle" {
                    // "idle 1m 47s (no ATT traffic)": the gap's length goes.
                } else if first.hasPrefix("(") && last.hasSuffix(")") {
                    // "(2.0 s)": a waited time in parentheses.
                } else if previous.hasSuffix(",") {
                    // "…in 2 requests, 120 ms": the procedure's length at the end.
                    out[out.count - 1] = String(previous.dropLast())
                } else {
                    out += tokens[i..<(i + length)].map(String.init)
                    i += length
                    continue
                }
                // Closing punctuation after the time stays with the text before it.
                if let close = last.last, close == ")" || close == "," || close == ";", !first.hasPrefix("("), !out.isEmpty {
                    out[out.count - 1] += String(close)
                }
                i += length
                continue
            }
            let token = tokens[i]
            if isCount(token), i + 1 < tokens.count, let next = tokens[i + 1].first, next.isLowercase,
               tokens[i + 1] != "of", tokens[i + 1] != "found",
               out.last == "in" || (out.last?.hasSuffix(":") ?? true) && !out.contains(where: { $0.contains(where: \.isNumber) }) {
                // "3 writes", "phone's server: 1 notification": the noun in the plural, without its count; "in 2
                // requests" goes.
                i += 1
                if out.last == "in" {
                    out.removeLast()
                    let closing = tokens[i].dropFirst(trimmed(tokens[i]).count)
                    if !closing.isEmpty, !out.isEmpty { out[out.count - 1] += closing }
                    i += 1
                    continue
                }
                if token == "1" {
                    let (words, used) = pluralWords(tokens, from: i)
                    out += words
                    i += used
                }
                continue
            }
            out.append(String(token))
            i += 1
        }
        return out.joined(separator: " ") + (valueStart.map { String(text[$0...]) } ?? "")
    }

    /// Where ", last " (a value) begins in `text`: ASCII, so its bytes are found where its characters are. A loop
    /// over the bytes: Foundation's `range(of:)` and the standard library's generic `firstRange(of:)` each took a
    /// large share of folding a long timeline.
    static func lastValue(in text: String) -> String.Index? {
        let utf8 = text.utf8
        guard utf8.count >= lastValueMark.count else { return nil }
        var i = utf8.startIndex
        let end = utf8.index(utf8.endIndex, offsetBy: 1 - lastValueMark.count)
        while i < end {
            if utf8[i] == lastValueMark[0], utf8[i...].starts(with: lastValueMark) { return i }
            utf8.formIndex(after: &i)
        }
        return nil
    }

    static let lastValueMark = Array(", last ".utf8)

    /// `text` split at every space. An ASCII text (most lines) is split at its space bytes: each is a character of
    /// its own there, and finding them needs no grapheme breaking, which was most of folding a timeline's time.
    static func words(_ text: Substring) -> [Substring] {
        let utf8 = text.utf8
        guard utf8.allSatisfy({ $0 < 0x80 }) else { return text.split(separator: " ", omittingEmptySubsequences: false) }
        var out: [Substring] = []
        var start = utf8.startIndex, i = start
        while i < utf8.endIndex {
            if utf8[i] == UInt8(ascii: " ") {
                out.append(text[start..<i])
                start = utf8.index(after: i)
            }
            utf8.formIndex(after: &i)
        }
        out.append(text[start...])
        return out
    }

    /// Whether `token` cannot begin with a number: its first byte is ASCII and no digit (a character beginning
    /// there is a number only if that byte is one). Checked before the characters, as most tokens are words.
    @inline(__always)
    static func beginsWithNonDigit(_ token: Substring) -> Bool {
        guard let b = token.utf8.first else { return true }
        return b < 0x80 && !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b)
    }

    /// The noun after a count of one in the plural, and how many tokens it took: "write without response" →
    /// "writes without response", "request," → "requests,".
    static func pluralWords(_ tokens: [Substring], from i: Int) -> ([String], Int) {
        for kind in ActivityKind.allCases.sorted(by: { $0.singular.count > $1.singular.count }) {
            let words = kind.singular.split(separator: " ")
            guard i + words.count <= tokens.count else { continue }
            let found = tokens[i..<(i + words.count)]
            guard zip(found, words).enumerated().allSatisfy({ n, pair in
                (n == words.count - 1 ? trimmed(pair.0) : pair.0) == pair.1
            }) else { continue }
            var plural = kind.plural.split(separator: " ").map(String.init)
            plural[plural.count - 1] += found.last.map { String($0.dropFirst(trimmed($0).count)) } ?? ""
            return (plural, words.count)
        }
        guard i < tokens.count else { return ([], 0) }
        let noun = trimmed(tokens[i]), after = tokens[i].dropFirst(noun.count)
        return ([(noun.hasSuffix("s") ? String(noun) : noun + "s") + after], 1)
    }

    static func isCount(_ token: Substring) -> Bool {
        // The first character first: most tokens are words, and fail there.
        !beginsWithNonDigit(token) && token.first?.isNumber == true && token.allSatisfy { $0.isASCII && ($0.isNumber || $0 == ",") }
    }

    /// Tokens a time takes at `i` ("450 ms", "2.7 s", "4.4 Hz", "1m 47s", "5h 16m", with parentheses or a comma
    /// around), or nil.
    static func durationLength(_ tokens: [Substring], at i: Int) -> Int? {
        guard i + 1 < tokens.count else { return nil }
        let number = trimmed(tokens[i])
        // Every time begins with a digit: most tokens are words, and fail on their first byte.
        guard !beginsWithNonDigit(number), let first = number.first, first.isNumber else { return nil }
        let unit = trimmed(tokens[i + 1])
        if number.allSatisfy({ $0.isNumber || $0 == "." || $0 == "," }), timeUnits.contains(unit) {
            return 2
        }
        func part(_ t: Substring, _ units: String) -> Bool {
            guard let u = t.last, units.contains(u), t.count > 1 else { return false }
            return t.dropLast().allSatisfy { $0.isASCII && $0.isNumber }
        }
        return part(number, "hm") && part(unit, "ms") ? 2 : nil
    }

    static let timeUnits: Set<Substring> = ["µs", "ms", "s", "Hz", "kHz"]

    static func trimmed(_ t: Substring) -> Substring {
        // Nothing to trim when the first byte is no "(" and the last none of ")", ",", ";": a character that is
        // one of them begins (and ends) with that byte.
        if let f = t.utf8.first, let l = t.utf8.last, f != UInt8(ascii: "("),
           l != UInt8(ascii: ")"), l != UInt8(ascii: ","), l != UInt8(ascii: ";") {
            return t
        }
        var t = t
        while let f = t.first, f == "(" { t = t.dropFirst() }
        while let l = t.last, l == ")" || l == "," || l == ";" { t = t.dropLast() }
        return t
    }

    static func isIdle(_ key: String) -> Bool { key.hasPrefix("idle ") }

    // MARK: Within a connection

    /// `lines` with what repeats folded: each line whose key recurs `RepeatedEpisodes.minimumRepeats` times or more
    /// stays at its first occurrence, followed by one line for all of them (and the lines of its exchange);
    /// lines that differ stay where they were.
    public static func fold(_ lines: [(at: RecordRef, text: String)]) -> [(at: RecordRef, text: String)] {
        guard lines.count >= RepeatedEpisodes.minimumRepeats else { return lines }
        let keys = lines.map { key($0.text) }
        var slot: [String: Int] = [:]
        var groups: [[Int]] = []
        for (i, k) in keys.enumerated() {
            if let s = slot[k] { groups[s].append(i) } else {
                slot[k] = groups.count
                groups.append([i])
            }
        }
        let folded = groups.filter { $0.count >= RepeatedEpisodes.minimumRepeats }
        guard !folded.isEmpty else { return lines }
        // Exchanges: a folded line whose first occurrence follows the previous one's, and whose occurrences
        // follow that line's, joins its line.
        var chains: [[[Int]]] = []
        for g in folded {
            if let chain = chains.last, let previous = chain.last, previous[0] + 1 == g[0], !isIdle(keys[g[0]]),
               !isIdle(keys[previous[0]]), follows(g, previous, lines) {
                chains[chains.count - 1].append(g)
            } else {
                chains.append([g])
            }
        }
        var skip = [Bool](repeating: false, count: lines.count)
        for g in folded { for i in g.dropFirst() { skip[i] = true } }
        var after: [Int: [[Int]]] = [:]
        for chain in chains { after[chain[chain.count - 1][0]] = chain }
        var out: [(at: RecordRef, text: String)] = []
        out.reserveCapacity(lines.count - skip.filter { $0 }.count + chains.count)
        for i in lines.indices where !skip[i] {
            out.append(lines[i])
            guard let chain = after[i] else { continue }
            let lead = chain[0], n = lead.count
            let span = elapsed(lines[lead[0]].at, lines[lead[n - 1]].at)
            let parts = chain.map { keys[$0[0]] + ($0.count == n ? "" : " (×\($0.count))") }
            out.append((lines[lead[0]].at, "\(n) × every ~\(RepeatedEpisodes.length(span / Int64(n - 1))) over "
                        + TimeFormat.human(.nanoseconds(span)) + ": " + parts.joined(separator: "; ")))
        }
        return out
    }

    /// Whether most occurrences of `line` come soon after one of `previous`, as lines of one exchange do.
    static func follows(_ line: [Int], _ previous: [Int], _ lines: [(at: RecordRef, text: String)]) -> Bool {
        var near = 0, j = 0
        for y in line {
            while j + 1 < previous.count && previous[j + 1] < y { j += 1 }
            guard previous[j] < y else { continue }
            let gap = elapsed(lines[previous[j]].at, lines[y].at)
            if gap >= 0 && gap <= exchangeWindow { near += 1 }
        }
        return Double(near) >= exchangeShare * Double(line.count)
    }

    /// Nanoseconds from `a` to `b`, saturated: a damaged capture's absurd timestamps must not overflow.
    static func elapsed(_ a: RecordRef, _ b: RecordRef) -> Int64 {
        let (d, overflow) = b.timestamp.nanoseconds.subtractingReportingOverflow(a.timestamp.nanoseconds)
        return overflow ? (b.timestamp.nanoseconds < a.timestamp.nanoseconds ? .min : .max) : d
    }

    // MARK: Across connections

    /// What makes two links alike: their kind (transport, controller, role) and their lines' keys, with the
    /// ids, handles and addresses that tell them apart taken out.
    static func likeness(_ link: TimelineLinkLines.Link) -> String {
        var text = anonymous(link.heading.head, heading: true)
        if link.heading.opening != nil { text += "\n(opening)" }
        if link.droppedEvents > 0 { text += "\n(dropped)" }
        for line in link.lines { text += "\n" + anonymous(key(line.text)) }
        return text
    }

    /// `text` without connection ids and device addresses (and, in a `heading`, the link's handle and access address).
    static func anonymous(_ text: String, heading: Bool = false) -> String {
        var out: [Substring] = []
        var dropNext = false
        for token in words(text[...]) {
            if dropNext { dropNext = false; continue }
            let t = trimmed(token)
            if heading && (t == "handle" || t == "AA") { out.append(token); dropNext = true; continue }
            if t.hasPrefix("#") && t.dropFirst().allSatisfy(\.isNumber) { continue }
            if isAddress(t) { continue }
            out.append(token)
        }
        return out.joined(separator: " ")
    }

    static func isAddress(_ t: Substring) -> Bool {
        // 17 characters take 17 bytes at least: shorter tokens are not counted character by character.
        t.utf8.count >= 17 && t.count == 17 && t.enumerated().allSatisfy { i, c in i % 3 == 2 ? c == ":" : c.isHexDigit }
    }
}
