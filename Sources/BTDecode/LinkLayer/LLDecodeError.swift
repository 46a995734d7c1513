/// Why a link-layer record or PDU could not be decoded. Equality compares the code only, so tests can assert
/// the kind of failure without matching the text.
public struct LLDecodeError: Error, Equatable, CustomStringConvertible {
    /// What kept a link-layer record from decoding.
    public enum Code: UInt8, Sendable {
        /// The container header is shorter than its format needs.
        case containerTooShort
        /// The container's own length fields disagree with the record (nRF length check).
        case containerLengthMismatch
        /// A PPI record without a BTLE field and an inner linktype that is not the LE link layer.
        case containerNotLinkLayer
        /// Fewer bytes than the access address and PDU header.
        case packetTooShort
        /// A PDU payload shorter than its type's fields.
        case payloadTooShort
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public static func == (a: LLDecodeError, b: LLDecodeError) -> Bool { a.code == b.code }
    public var description: String { message }
}
