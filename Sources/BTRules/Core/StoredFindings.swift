import BTWire
import BTCapture

/// One capture's findings in report order: held in memory (small runs, other commands), or in a spill file with
/// only their keys in memory (`btlens audit`, `Auditor.audit(_:file:judged:spill:finishing:)`), each read back
/// when a report reaches it.
public final class StoredFindings: @unchecked Sendable {
    enum Storage {
        case held([Finding])
        case spilled(Spill)
    }

    let storage: Storage
    /// In report order.
    public let keys: SetAsideArray<FindingKey>
    /// The rules' ids the keys point at.
    let ruleIDs: [String]
    /// Each finding's host part (`cost.hostMC`) where it is not 0, in report order: few findings have one.
    let hostCharges: [Double]
    /// The first finding that could not be read back; reports show a placeholder in its place, and
    /// `btlens audit` fails.
    public private(set) var failure: FindingStoreError?

    /// `findings`, held as they are.
    public convenience init(_ findings: [Finding]) {
        var interned = RuleInterning()
        let keys = findings.enumerated().map { i, f in FindingKey(f, offset: Int64(i), length: 0, rule: interned.slot(f.id)) }
        self.init(storage: .held(findings), keys: SetAsideArray(keys), ruleIDs: interned.ids,
                  hostCharges: findings.compactMap { f in f.cost.flatMap { $0.hostMC != 0 ? $0.hostMC : nil } })
    }

    init(storage: Storage, keys: SetAsideArray<FindingKey>, ruleIDs: [String], hostCharges: [Double]) {
        self.storage = storage
        self.keys = keys
        self.ruleIDs = ruleIDs
        self.hostCharges = hostCharges
    }

    public var count: Int { keys.count }

    /// Whether the findings wait in a file rather than in memory.
    public var isSpilled: Bool {
        if case .spilled(let spill) = storage { return spill.isFile }
        return false
    }

    /// The finding at `i` (report order), read back from the spill.
    public subscript(i: Int) -> Finding {
        let key = keys[i]
        switch storage {
        case .held(let findings):
            return findings[Int(key.offset)]
        case .spilled(let spill):
            do {
                return try Self.read(spill, at: key.offset, length: Int(key.length))
            } catch {
                if failure == nil { failure = error }
                return Self.placeholder(key, ruleID: ruleIDs[Int(key.rule)])
            }
        }
    }

    public func ruleID(at i: Int) -> String { ruleIDs[Int(keys[i].rule)] }

    /// The key at `i`, read in place: `stored.keys[i]` from outside copied the whole `SetAsideArray` (its file,
    /// offsets and lists retained and released) at each of the report's hundreds of thousands of key reads.
    @inline(__always)
    func key(at i: Int) -> FindingKey { keys[i] }

    /// Records a failure to keep the findings (their keys could not be set aside or read back).
    func note(_ error: FindingStoreError) {
        if failure == nil { failure = error }
    }

    /// The finding written at `offset` in `spill`.
    static func read(_ spill: Spill, at offset: Int64, length: Int) throws(FindingStoreError) -> Finding {
        let result: Result<Finding, FindingStoreError> = withUnsafeTemporaryAllocation(byteCount: length, alignment: 8) { buffer in
            guard spill.read(at: offset, into: buffer) else {
                return .failure(.spill(cause: spill.failure ?? "cannot read back"))
            }
            return Result { () throws(FindingStoreError) in try FindingCoding.decode(UnsafeRawBufferPointer(buffer)) }
        }
        return try result.get()
    }

    /// What stands for a finding that cannot be read back: its rule and severity, and a message saying so.
    static func placeholder(_ key: FindingKey, ruleID: String) -> Finding {
        Finding(rule: ruleID, id: ruleID, severity: key.severity, controller: 0, connection: nil, attributeHandle: nil,
                discriminator: "", start: Timestamp(nanoseconds: 0), end: Timestamp(nanoseconds: 0), records: [],
                message: "(this finding could not be read back)", advice: "", file: "", cost: nil, owner: nil,
                fingerprint: "")
    }
}
