import BTWire

/// A capture's findings set aside as they are made (those of links judged while the capture is read, then the
/// rest at its end), so that memory keeps 16 bytes per finding rather than the finding: in a temporary file whose
/// name is removed as soon as it is made (nothing is left behind, even when the run is killed), or in memory
/// without a directory. `Auditor.audit(_:file:judged:spill:finishing:)` reads them back once, in the order made,
/// to finish them.
public final class FindingSpill: @unchecked Sendable {
    /// Where one finding's bytes are, and its link (the order of judged links' findings is by link).
    struct Ref {
        var offset: Int64
        var length: UInt32
        /// `FindingConnection.id`, or 0 without a link (`Auditor.inLinkOrder`'s order).
        var link: Int32
    }

    let spill: Spill
    /// Where the spill's file is (nil: memory): finished findings go to a second file there.
    public let directory: String?
    /// The finished findings' keys sorted in memory at once, the rest set aside in sorted runs and merged
    /// (`FinishedFindings`): 16,384 keys of 56 bytes.
    public var keyRunLength = FindingSpill.defaultKeyRunLength
    public static let defaultKeyRunLength = 16_384
    /// Reused for each finding's bytes.
    private var bytes: [UInt8] = []

    /// `directory`: where the temporary file is made (`$TMPDIR`); nil keeps the findings in memory.
    public init(directory: String?) throws(FindingStoreError) {
        self.directory = directory
        do { spill = try Spill(directory: directory, name: "findings", readAhead: Spill.readAheadWindow) } catch {
            throw .spill(cause: (error as? SpillError).map { "\($0.path): \($0.cause)" } ?? "\(error)")
        }
        bytes.reserveCapacity(2048)
    }

    /// Whether the findings are in a file (not held in memory).
    public var isFile: Bool { spill.isFile }
    /// Bytes set aside so far.
    public var size: Int64 { spill.size }

    /// What went wrong writing or reading (a full disk), if anything: the findings after it are lost.
    public var failure: FindingStoreError? {
        spill.flush()
        return spill.failure.map { .spill(cause: $0) }
    }

    /// Bytes before each finding's: the hash the de-duplication sorts by (`FindingDeduplication.hash`), so that it
    /// reads 8 bytes of each finding, not the whole to decode.
    static let hashBytes = 8

    /// Sets `finding` aside.
    func append(_ finding: Finding) -> Ref {
        bytes.removeAll(keepingCapacity: true)
        withUnsafeBytes(of: FindingDeduplication.hash(finding).littleEndian) { bytes.append(contentsOf: $0) }
        FindingCoding.encode(finding, into: &bytes)
        let offset = bytes.withUnsafeBytes { spill.append($0) } + Int64(Self.hashBytes)
        return Ref(offset: offset, length: UInt32(clamping: bytes.count - Self.hashBytes),
                   link: Int32(clamping: finding.connection?.id ?? 0))
    }

    /// The de-duplication's hash of the finding at `ref`; nil when it cannot be read back (`failure` says why).
    func hash(_ ref: Ref) -> UInt64? {
        var hash: UInt64 = 0
        guard withUnsafeMutableBytes(of: &hash, { spill.read(at: ref.offset - Int64(Self.hashBytes), into: $0) }) else { return nil }
        return UInt64(littleEndian: hash)
    }

    /// The finding at `ref` in `other`, set aside here as it is: its bytes copied, not decoded. (Bytes that cannot
    /// be read back leave a failure in `other`.)
    func copy(_ ref: Ref, from other: FindingSpill) -> Ref {
        bytes.removeAll(keepingCapacity: true)
        bytes.append(contentsOf: repeatElement(0, count: Self.hashBytes + Int(ref.length)))
        _ = bytes.withUnsafeMutableBytes { other.spill.read(at: ref.offset - Int64(Self.hashBytes), into: $0) }
        let offset = bytes.withUnsafeBytes { spill.append($0) } + Int64(Self.hashBytes)
        return Ref(offset: offset, length: ref.length, link: ref.link)
    }

    /// The finding `ref` points at.
    func read(_ ref: Ref) throws(FindingStoreError) -> Finding {
        try StoredFindings.read(spill, at: ref.offset, length: Int(ref.length))
    }
}
