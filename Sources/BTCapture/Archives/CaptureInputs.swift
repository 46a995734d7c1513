/// What a path on the command line holds, as captures to read: a capture file is one; a compressed capture
/// (gzip, xz, zstd, bzip2) is the capture inside; an archive (zip, tar, tar.gz, 7z) is every capture inside,
/// each named `archive.zip:path/inside`; an Android bug report is its snoop log, or the btsnooz summary in its
/// text when it holds no log; a sysdiagnose is its PacketLogger files as one capture. Rotated logs
/// (`btsnoop_hci.log.last` then `btsnoop_hci.log`), given together or found together, are one capture when the
/// second begins after the first ends. Formats are decided by content, never by file name; names only pair a
/// rotated log with its successor and find a bug report's text.
public enum CaptureInputs {
    /// Android's snoop log, and the name its previous log gets when a new one starts.
    public static let rotatedSuffix = ".last"
    /// Where iOS keeps PacketLogger files in a sysdiagnose, and how they are named.
    static let sysdiagnoseDirectory = "logs/Bluetooth/"
    static let sysdiagnosePrefix = "bluetoothd-hci"
    /// A capture is recognised from this many first bytes (several PacketLogger records).
    static let sniffLength = 4096

    /// The captures of every path, in order; a path that holds none (or cannot be read) is a failure in its
    /// place. Rotated pairs given as two paths are joined.
    public static func resolve(_ paths: [String]) -> [Result<CaptureInput, CaptureInputFailure>] {
        var results: [Result<CaptureInput, CaptureInputFailure>] = []
        for path in paths {
            do {
                for input in try resolve(path) { results.append(.success(input)) }
            } catch {
                let captureError = error as? CaptureError ?? CaptureError(.readFailed, "\(error)")
                results.append(.failure(CaptureInputFailure(path: path, error: captureError)))
            }
        }
        return joinRotatedFiles(results)
    }

    /// The captures `path` holds ("-": standard input, read once: a capture, or the first capture of an archive).
    public static func resolve(_ path: String) throws -> [CaptureInput] {
        if path == "-" { return [CaptureInput(path: "-", displayName: "-", parts: [.standardInput])] }
        let source = try ByteSource(path: path)
        _ = try source.ensure(sniffLength)
        let head = source.peek(sniffLength)
        if OpenedCapture.recognises(head) || head.count < 4 {
            // Short or empty files get the capture opener's own error.
            var input = CaptureInput(path: path, displayName: baseName(path), parts: [.file(path)])
            let headed = head.count >= 4 && (try? OpenedCapture.isBTSnoopHeadedBTSnooz(source)) == true
            input.notices += btsnoozLogNotices(input.displayName, path: path, btsnoopHeaded: headed)
            return [input]
        }
        if let kind = ArchiveMagic.kind(head) {
            return try resolveArchive(path, kind: kind)
        }
        if looksLikeText(head), try BTSnoozReader.extractSummary(from: source) != nil {
            var input = CaptureInput(path: path, displayName: baseName(path), parts: [.btsnooz(.file(path))])
            input.notices.append(btsnoozNotice(path))
            input.bugReportText = .file(path)
            return [input]
        }
        // Not ours: the opener says what it starts with.
        return [CaptureInput(path: path, displayName: baseName(path), parts: [.file(path)])]
    }

    /// What a btsnooz capture (the text summary or the binary log) holds, and how to get all of it.
    static let btsnoozCaveat = "which holds only the last packets the Bluetooth service kept, with ACL payloads cut "
        + "short (enable the full log: Developer options → Enable Bluetooth HCI snoop log)"

    public static func btsnoozNotice(_ text: String) -> String {
        "no full snoop log here: read the btsnooz summary in \(text), " + btsnoozCaveat
    }

    /// Android's binary btsnooz log (Android 12 and later; the text summary is older Android's): the in-memory
    /// ring the Bluetooth service keeps while the full log is off, dumped at each bug report as btsnoop H4
    /// records whose ACL payloads are cut (AOSP system/gd/hal/snoop_logger.cc). Its format is btsnoop, read
    /// from the content; the name only says to give the caveat and to read `.last` and the log as overlapping.
    public static let btsnoozLogName = "btsnooz_hci.log"

    public static func isBTSnoozLog(_ path: String) -> Bool { baseName(path).contains(btsnoozLogName) }

    static let btsnoozLogNoticePrefix = "no full snoop log here: read Android's btsnooz log "

    public static func btsnoozLogNotice(_ name: String) -> String {
        btsnoozLogNoticePrefix + name + ", " + btsnoozCaveat
    }

    /// What to say about a capture named as Android's btsnooz log, or found to be btsnooz records behind a
    /// btsnoop header (whatever its name): the caveat, and for the latter that it has no absolute time base.
    static func btsnoozLogNotices(_ name: String, path: String, btsnoopHeaded: Bool) -> [String] {
        (isBTSnoozLog(path) || btsnoopHeaded ? [btsnoozLogNotice(name)] : []) + (btsnoopHeaded ? [BTSnoozReader.logNotice] : [])
    }

    // MARK: - Archives

    /// A member of an archive, as a first pass over it saw it.
    struct Listed {
        var path: String?
        var isCapture: Bool
        var isBugReportText: Bool
        /// The first record's time, and for a log that may be followed by another (a rotated `.last`, a
        /// sysdiagnose's PacketLogger file) the last's: read in the listing pass, so joining costs no pass more.
        var first: Timestamp?
        var last: Timestamp?
        /// btsnooz records behind a btsnoop header (no absolute time base).
        var btsnoopHeadedBTSnooz = false
    }

    static func resolveArchive(_ archivePath: String, kind: String) throws -> [CaptureInput] {
        let (members, damage) = try list(archivePath)
        let shownArchive = baseName(archivePath)
        func input(_ member: Listed) -> CaptureInput {
            guard let inside = member.path else {
                // A compressed capture: the file is the capture.
                return CaptureInput(path: archivePath, displayName: shownArchive, parts: [.member(archive: archivePath, path: nil)])
            }
            var input = CaptureInput(path: archivePath + ":" + inside, displayName: shownArchive + ":" + inside,
                                     parts: [.member(archive: archivePath, path: inside)])
            input.knownFirst = member.first
            input.knownLast = member.last
            input.notices += btsnoozLogNotices(input.displayName, path: inside, btsnoopHeaded: member.btsnoopHeadedBTSnooz)
            return input
        }
        var inputs = members.filter(\.isCapture).map(input)
        if inputs.contains(where: \.isAndroidSnoopLog) {
            // The full log was on (Android deletes the btsnooz log then; one left from before is older and partial).
            inputs.removeAll { $0.memberPath.map(isBTSnoozLog) ?? false }
        }
        inputs = joinRotated(inputs)
        inputs = joinSysdiagnose(inputs)
        if inputs.isEmpty, let text = members.first(where: \.isBugReportText) {
            // No full snoop log in the bug report: the summary its text holds, if any.
            let part = CaptureInput.Part.btsnooz(.member(archive: archivePath, path: text.path))
            let shown = text.path.map { shownArchive + ":" + $0 } ?? shownArchive
            if (try? part.byteSourceHoldsSummary()) == true {
                var summary = CaptureInput(path: text.path.map { archivePath + ":" + $0 } ?? archivePath,
                                           displayName: shown, parts: [part])
                summary.notices.append(btsnoozNotice(shown))
                inputs.append(summary)
            }
        } else if members.contains(where: \.isBugReportText) {
            for i in inputs.indices where inputs[i].isAndroidSnoopLog {
                inputs[i].notices.append("the bug report's full snoop log is read (not the btsnooz summary in its text)")
            }
            for i in inputs.indices where inputs[i].memberPath.map(isBTSnoozLog) ?? inputs[i].overlapping {
                inputs[i].notices.append("the bug report's btsnooz log is read (not a btsnooz summary in its text, which older Android wrote)")
            }
        }
        if let text = members.first(where: \.isBugReportText) {
            // The report's text says which apps used Bluetooth (`BugReportApps`): every capture in it may use it.
            for i in inputs.indices { inputs[i].bugReportText = .member(archive: archivePath, path: text.path) }
        }
        if let damage {
            for i in inputs.indices { inputs[i].notices.append("the archive is damaged (\(damage)); what comes before the damage is read") }
        }
        guard !inputs.isEmpty else {
            if let damage { throw CaptureError(.readFailed, "damaged \(kind) archive: \(damage)") }
            let looked = members.count
            throw CaptureError(.notACapture, "\(kind) archive without a Bluetooth capture (btsnoop, pcap, pcapng, "
                               + "PacketLogger or a bug report's btsnooz summary) in its \(looked) member\(looked == 1 ? "" : "s")")
        }
        return inputs
    }

    /// One pass over the archive: each regular member's first bytes say whether it is a capture. Damage stops
    /// the pass; what was listed before it stays.
    static func list(_ archivePath: String) throws -> (members: [Listed], damage: String?) {
        let archive = try ArchiveReader.open(path: archivePath)
        var members: [Listed] = []
        do {
            while let member = try archive.nextMember() {
                guard member.isRegularFile else { continue }
                let source = ByteSource(input: archive.memberInput(), capacity: sniffLength)
                var damage: CaptureError?
                do {
                    _ = try source.ensure(sniffLength)
                } catch let error as CaptureError where error.code != .refused {
                    damage = error  // the bytes before the damage still say what the member is
                }
                var head = source.peek(sniffLength)
                var inner: ByteSource?
                if damage == nil, !OpenedCapture.recognises(head), member.path != nil,
                   let nested = try? decompressed(source), (try? nested.ensure(sniffLength)) != nil {
                    // A compressed capture inside the archive (btsnoop_hci.log.gz in a zip): one level deep.
                    inner = nested
                    head = nested.peek(sniffLength)
                }
                let name = member.path.map(baseName) ?? ""
                let isText = inner == nil && looksLikeText(head)
                var listed = Listed(path: member.path, isCapture: OpenedCapture.recognises(head),
                                    isBugReportText: isText && (member.path == nil || (name.hasPrefix("bugreport") && name.hasSuffix(".txt"))))
                let capture = listed.isCapture && damage == nil && member.path != nil
                    ? try? OpenedCapture.open(source: inner ?? source, issues: IssueLog()) : nil
                listed.btsnoopHeadedBTSnooz = capture?.info.format == .btsnoozLog
                if let capture, let inside = member.path, capture.info.format.hasAbsoluteTime,
                   let firstRecord = capture.nextRecord() {
                    listed.first = firstRecord.timestamp
                    if inside.hasSuffix(rotatedSuffix) || isSysdiagnoseLog(inside) || isBTSnoozLog(inside) {
                        var last = firstRecord.timestamp
                        while let record = capture.nextRecord() { last = record.timestamp }
                        listed.last = last
                    }
                }
                members.append(listed)
                if let damage { throw damage }
            }
        } catch let error as CaptureError where error.code != .refused {
            return (members, error.message.replacingPrefix("damaged archive: "))
        }
        return (members, nil)
    }

    /// The decompressed bytes of `source` when it starts as a single compressed stream (gzip, xz, zstd, bzip2);
    /// nil otherwise. For captures compressed inside an archive, one level deep.
    static func decompressed(_ source: ByteSource) throws -> ByteSource? {
        _ = try source.ensure(sniffLength)
        switch ArchiveMagic.kind(source.peek(sniffLength)) {
        case "gzip":
            return ByteSource(input: try GzipInput(source: source))
        case "xz", "zstd", "bzip2":
            let nested = try ArchiveReader(source: source)
            guard try nested.nextMember() != nil, nested.member?.path == nil else { return nil }
            return ByteSource(input: nested.memberInput())
        default:
            return nil
        }
    }

    // MARK: - Joining

    /// `X.last` followed by `X` from the same archive, read as one when `X` begins after `X.last` ends.
    static func joinRotated(_ inputs: [CaptureInput]) -> [CaptureInput] {
        var result = inputs
        for older in inputs where older.path.hasSuffix(rotatedSuffix) {
            let newerPath = String(older.path.dropLast(rotatedSuffix.count))
            guard let newer = result.firstIndex(where: { $0.path == newerPath }),
                  let olderIndex = result.firstIndex(where: { $0.path == older.path })
            else { continue }
            let pair = [result[olderIndex], result[newer]]
            if let joined = isBTSnoozLog(newerPath) ? joinOverlapping(pair) : join(pair) {
                result[olderIndex] = joined
                result.remove(at: newer)
            }
        }
        return result
    }

    /// A sysdiagnose's `logs/Bluetooth/bluetoothd-hci-*.pklg`: oldest first (by first record), as one capture
    /// while each begins after the one before ends.
    static func joinSysdiagnose(_ inputs: [CaptureInput]) -> [CaptureInput] {
        let isSysdiagnose: (CaptureInput) -> Bool = { $0.memberPath.map(isSysdiagnoseLog) ?? false }
        let found = inputs.filter(isSysdiagnose)
        guard found.count > 1 else { return inputs }
        let spans = found.map { ($0, $0.bounds(needLast: true).flatMap { b in b.last.map { (first: b.first, last: $0) } }) }
        let ordered = spans.sorted { ($0.1?.first.nanoseconds ?? .max) < ($1.1?.first.nanoseconds ?? .max) }
        var chains: [[(CaptureInput, (first: Timestamp, last: Timestamp)?)]] = []
        for item in ordered {
            if let tail = chains.last?.last, let end = tail.1?.last, let start = item.1?.first, start >= end {
                chains[chains.count - 1].append(item)
            } else {
                chains.append([item])
            }
        }
        let joinedChains = chains.map { chain in chain.count == 1 ? chain[0].0 : (join(chain.map(\.0), checked: true) ?? chain[0].0) }
        var result = inputs.filter { !isSysdiagnose($0) }
        if let at = inputs.firstIndex(where: isSysdiagnose) {
            result.insert(contentsOf: joinedChains, at: min(at, result.count))
        }
        return result
    }

    /// Command-line files `X.last` and `X` (in either order) joined as one capture when continuous.
    static func joinRotatedFiles(_ results: [Result<CaptureInput, CaptureInputFailure>]) -> [Result<CaptureInput, CaptureInputFailure>] {
        var result = results
        var i = 0
        while i < result.count {
            guard case .success(let older) = result[i], older.path.hasSuffix(rotatedSuffix), older.isPlainFile else { i += 1; continue }
            let newerPath = String(older.path.dropLast(rotatedSuffix.count))
            guard let j = result.firstIndex(where: { if case .success(let n) = $0 { n.path == newerPath && n.isPlainFile } else { false } }),
                  case .success(let newer) = result[j],
                  let joined = isBTSnoozLog(newerPath) ? joinOverlapping([older, newer]) : join([older, newer])
            else { i += 1; continue }
            result[min(i, j)] = .success(joined)
            result.remove(at: max(i, j))
            i = min(i, j) + 1
        }
        return result
    }

    /// The parts of `inputs` as one capture, when each begins at or after the end of the one before
    /// (`checked`: the caller already knows). nil when they overlap or one cannot be read: they stay apart.
    static func join(_ inputs: [CaptureInput], checked: Bool = false) -> CaptureInput? {
        if !checked {
            var end: Timestamp?
            for (i, input) in inputs.enumerated() {
                guard let span = input.bounds(needLast: i < inputs.count - 1) else { return nil }
                if let end, span.first < end { return nil }
                end = span.last
            }
        }
        var joined = inputs[0]
        joined.parts = inputs.flatMap(\.parts)
        joined.partNames = inputs.flatMap(\.partNames)
        let rest = inputs.dropFirst().map { baseName($0.memberPath ?? $0.path) }
        joined.path = ([inputs[0].path] + rest).joined(separator: "+")
        joined.displayName = ([inputs[0].displayName] + rest).joined(separator: "+")
        joined.notices = inputs.flatMap(\.notices)
        joined.knownLast = inputs.last?.knownLast
        return joined
    }

    /// Android's `btsnooz_hci.log.last` and `btsnooz_hci.log` as one capture: each is the ring dumped at a bug
    /// report, so the newer may repeat the older's end (read once) or follow it. nil when the newer one does not
    /// reach the older's end (not the later dump) or one cannot be read; two identical dumps are read once.
    static func joinOverlapping(_ pair: [CaptureInput]) -> CaptureInput? {
        guard let older = pair[0].bounds(needLast: true), let olderLast = older.last,
              let newer = pair[1].bounds(needLast: true), let newerLast = newer.last,
              newer.first >= older.first, newerLast >= olderLast,
              var joined = join(pair, checked: true)
        else { return nil }
        joined.overlapping = true
        joined.notices = [btsnoozLogNotice(joined.displayName)] + joined.notices.filter { !$0.hasPrefix(btsnoozLogNoticePrefix) }
        return joined
    }

    // MARK: - Helpers

    /// A sysdiagnose's PacketLogger file: `…/logs/Bluetooth/bluetoothd-hci-*.pklg`.
    static func isSysdiagnoseLog(_ member: String) -> Bool {
        ("/" + member).contains("/" + sysdiagnoseDirectory) && baseName(member).hasPrefix(sysdiagnosePrefix)
    }

    static func baseName(_ path: String) -> String {
        path == "-" ? "-" : String(path.split(separator: "/").last ?? Substring(path))
    }

    /// Text, not binary: no NUL and mostly printable in the first bytes.
    static func looksLikeText(_ head: UnsafeRawBufferPointer) -> Bool {
        guard !head.isEmpty, !head.contains(0) else { return false }
        let printable = head.filter { $0 >= 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }.count
        return printable * 10 >= head.count * 9
    }
}

/// A path that holds no capture btlens can read, and why.
public struct CaptureInputFailure: Error, Sendable {
    public var path: String
    public var error: CaptureError
}

/// One capture to read: a file, a member of an archive, standard input, a btsnooz summary, or several of these
/// joined (rotated logs). `path` names it in messages (`dir/bugreport.zip:FS/data/misc/bluetooth/logs/btsnoop_hci.log`),
/// `displayName` in reports (the same without the directory).
public struct CaptureInput: Sendable {
    public var path: String
    public var displayName: String
    /// What the reader should say about where the capture came from (which log of a bug report was read).
    public var notices: [String] = []
    var parts: [Part]
    var partNames: [String]

    init(path: String, displayName: String, parts: [Part]) {
        self.path = path
        self.displayName = displayName
        self.parts = parts
        self.partNames = [displayName]
    }

    /// Where a part's bytes are.
    indirect enum Part: Sendable {
        case file(String)
        case standardInput
        /// A member of an archive by its path inside; nil: the one member of a compressed file.
        case member(archive: String, path: String?)
        /// The btsnooz summary in the text of a bug report.
        case btsnooz(Part)

        /// The part's bytes as a stream.
        func byteSource() throws -> ByteSource {
            switch self {
            case .file(let path):
                return try ByteSource(path: path)
            case .standardInput:
                return try ByteSource(path: "-")
            case .member(let archivePath, let inside):
                let archive = try ArchiveReader.open(path: archivePath)
                while let member = try archive.nextMember() {
                    if member.isRegularFile && member.path == inside {
                        let source = ByteSource(input: archive.memberInput())
                        _ = try source.ensure(CaptureInputs.sniffLength)
                        if inside != nil, !OpenedCapture.recognises(source.peek(CaptureInputs.sniffLength)),
                           let nested = try CaptureInputs.decompressed(source) {
                            return nested
                        }
                        return source
                    }
                }
                throw CaptureError(.cannotOpen, "\(inside ?? "the compressed data") is no longer in \(archivePath)")
            case .btsnooz(let text):
                return try text.byteSource()
            }
        }

        func byteSourceHoldsSummary() throws -> Bool {
            guard case .btsnooz(let text) = self else { return false }
            return try BTSnoozReader.extractSummary(from: text.byteSource()) != nil
        }

        func open(issues: IssueLog) throws -> OpenedCapture {
            switch self {
            case .btsnooz(let text):
                guard let summary = try BTSnoozReader.extractSummary(from: text.byteSource()) else {
                    throw CaptureError(.notACapture, "no btsnooz summary in the text")
                }
                return .btsnooz(try BTSnoozReader(summary: summary, issues: issues))
            case .standardInput:
                return try Self.openStandardInput(issues: issues)
            default:
                return try OpenedCapture.open(source: byteSource(), issues: issues)
            }
        }

        /// Standard input is read once: a capture, or the first capture member of an archive or compressed stream.
        static func openStandardInput(issues: IssueLog) throws -> OpenedCapture {
            let source = try ByteSource(path: "-")
            _ = try source.ensure(CaptureInputs.sniffLength)
            guard ArchiveMagic.kind(source.peek(CaptureInputs.sniffLength)) != nil else {
                return try OpenedCapture.open(source: source, issues: issues)
            }
            let isGzip = source.peek(2).elementsEqual([0x1F, 0x8B])
            let archive = try ArchiveReader(source: isGzip ? ByteSource(input: GzipInput(source: source)) : source)
            while let member = try archive.nextMember() {
                guard member.isRegularFile else { continue }
                let inner = ByteSource(input: archive.memberInput())
                _ = try inner.ensure(CaptureInputs.sniffLength)
                if OpenedCapture.recognises(inner.peek(CaptureInputs.sniffLength)) {
                    return try OpenedCapture.open(source: inner, issues: issues)
                }
            }
            throw CaptureError(.notACapture, "no Bluetooth capture in the archive on standard input")
        }
    }

    /// Opens the capture for reading (several parts: joined). Its notices go to `issues`.
    public func open(issues: IssueLog = IssueLog()) throws -> OpenedCapture {
        for notice in notices { issues.notice(notice) }
        if parts.count == 1 { return try parts[0].open(issues: issues) }
        let joined = zip(parts, partNames).enumerated().map { index, named in
            JoinedCapture.Part(name: named.1, skipsRepeats: overlapping && index > 0) { try named.0.open(issues: $0) }
        }
        return .joined(try JoinedCapture(parts: joined, issues: issues))
    }

    /// Whether this is a plain capture file (so a rotated pair given on the command line may join), not an
    /// archive member, a btsnooz summary or a joined chain.
    public var isPlainFile: Bool {
        if parts.count == 1, case .file = parts[0] { return true }
        return false
    }

    /// The path inside the archive of a single member.
    var memberPath: String? {
        if parts.count == 1, case .member(_, let inside) = parts[0] { return inside }
        return nil
    }

    /// Android's snoop log (`…/bluetooth/logs/btsnoop_hci.log…`).
    var isAndroidSnoopLog: Bool { path.contains("btsnoop_hci.log") }

    /// The text of the Android bug report the capture came from, when it came from one (its per-app sections:
    /// `bugReportApps()`).
    var bugReportText: Part?

    /// Parts that may repeat the end of the part before (Android's btsnooz dumps): read once.
    var overlapping = false

    /// Times the listing pass already read (members of an archive); nil for files.
    var knownFirst: Timestamp?
    var knownLast: Timestamp?

    /// The first record's time, and the last's when `needLast`: known from the listing, or read now. nil when
    /// its times are no clock times (a btsnoop-headed btsnooz log), which cannot say where it lies.
    func bounds(needLast: Bool) -> (first: Timestamp, last: Timestamp?)? {
        if let knownFirst, !needLast || knownLast != nil { return (knownFirst, knownLast) }
        if !needLast {
            // Only where it begins: one record, not the whole file.
            guard let capture = try? open(), capture.info.format.hasAbsoluteTime,
                  let first = capture.nextRecord()?.timestamp else { return nil }
            return (first, nil)
        }
        return timeSpan().map { ($0.first, $0.last) }
    }

    /// The first and last record times, reading every record (no decoding); nil when it has none, cannot
    /// be read or has no clock times. For deciding whether parts follow each other.
    func timeSpan() -> (first: Timestamp, last: Timestamp)? {
        guard let capture = try? open(), capture.info.format.hasAbsoluteTime else { return nil }
        guard let first = capture.nextRecord() else { return nil }
        var last = first.timestamp
        while let record = capture.nextRecord() { last = record.timestamp }
        return (first.timestamp, last)
    }
}

extension String {
    func replacingPrefix(_ prefix: String) -> String {
        hasPrefix(prefix) ? String(dropFirst(prefix.count)) : self
    }
}
