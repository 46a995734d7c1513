import BTCapture

/// `btlens anonymize --check ORIGINAL COPY`: looks for every identifier of the original (`CapturedIdentifiers`,
/// as `Anonymizer.byValueScanner` would replace them: addresses in both byte orders and as text, names, keys,
/// serial numbers) in every record of the copy, within a record or across two consecutive ones (an ACL continuation
/// joined to the record before without its header, as `ScanWindow`). Memory grows
/// with the identifiers, not the copy.
public struct AnonymizeCheck: RecordSourceVisitor {
    /// One identifier, in one form, found in the copy.
    public struct Hit: Sendable {
        public var identifier: CapturedIdentifiers.Identifier
        public var form: IdentifierForm
        public var count = 0
        /// Where, first ones: `12`, or `11–12` across two records.
        public var records: [String] = []
        public var firstRecord: Int

        public var line: String {
            let shown = records.joined(separator: ", ") + (count > records.count ? " and \(count - records.count) more" : "")
            return "\(identifier.description) \(identifier.kind == .address ? form.description : form == .reversed ? "reversed" : "as is"): "
                + "record\(count == 1 ? "" : "s") \(shown)"
        }
    }

    /// What of the original's identifiers a copy still holds, and where.
    public struct Report: Sendable {
        public var hits: [Hit] = []
        /// Records read from the copy.
        public var records = 0
        public var recordsWithHits = 0
        /// Identifiers looked for (distinctive ones).
        public var lookedFor = 0
        public var identifiersFound: Int { Set(hits.map(\.identifier.bytes)).count }
        /// One line per identifier and form, in order of first appearance.
        public var lines: [String] { hits.map(\.line) }
    }

    static let recordsShown = 8
    let identifiers: CapturedIdentifiers
    let scanner: ValueScanner

    public init(identifiers: CapturedIdentifiers) {
        self.identifiers = identifiers
        scanner = Anonymizer.checkScanner(identifiers)
    }

    public mutating func visit<S: RecordSource>(_ source: S) throws -> Report {
        var report = Report()
        report.lookedFor = scanner.identifiersLookedFor
        var window = ScanWindow()
        var previous = HeldRecordBytes(capacity: 1 << 16)
        defer {
            window.deallocate()
            previous.deallocate()
        }
        var previousNumber = 0
        var hits: [Int: Hit] = [:]
        while let record = source.next() {
            report.records += 1
            let tail = UnsafeRawBufferPointer(previous.bytes)
            let skip = ScanWindow.skipped(kind: record.kind, record.payload)
            let (joined, carried) = window.load(tail: tail, keep: scanner.longest - 1,
                                                payload: UnsafeRawBufferPointer(rebasing: record.payload[skip...]))
            var any = false
            scanner.matches(in: UnsafeRawBufferPointer(joined), endingAfter: carried) { at, match in
                let place = at < carried ? "\(previousNumber)–\(record.number)" : "\(record.number)"
                let key = match.identifier << 2 | Int(match.form.rawValue)
                var hit = hits[key] ?? Hit(identifier: identifiers.all[match.identifier], form: match.form, firstRecord: record.number)
                hit.count += 1
                if hit.records.count < Self.recordsShown && hit.records.last != place { hit.records.append(place) }
                hits[key] = hit
                any = true
            }
            if any { report.recordsWithHits += 1 }
            previous.hold(record.payload)
            previousNumber = record.number
        }
        // An identifier's forms first found in one record by their order (a dictionary's own order changes from
        // run to run).
        report.hits = hits.values.sorted {
            ($0.firstRecord, $0.identifier.description, $0.form.rawValue) < ($1.firstRecord, $1.identifier.description, $1.form.rawValue)
        }
        return report
    }
}
