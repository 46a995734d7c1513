/// Why a capture's findings could not be set aside or read back (`FindingSpill`, `StoredFindings`).
public enum FindingStoreError: Error, Equatable, CustomStringConvertible {
    /// The temporary file could not be made, written or read (a full disk): `cause` says why.
    case spill(cause: String)
    /// Bytes read back are not a finding written by this btlens.
    case corrupt(String)

    public var description: String {
        switch self {
        case .spill(let cause): "cannot set findings aside: \(cause)"
        case .corrupt(let what): "findings set aside cannot be read back (\(what))"
        }
    }
}
