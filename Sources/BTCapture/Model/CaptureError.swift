/// Why a capture cannot be read (or written) at all. Problems inside a readable capture are `CaptureIssue`s
/// instead.
public struct CaptureError: Error, Sendable, CustomStringConvertible, Equatable {
    /// Why a capture could not be read: each maps to one of the command line's exit codes.
    public enum Code: String, Sendable {
        case cannotOpen = "cannot-open"
        case readFailed = "read-failed"
        case writeFailed = "write-failed"
        case notACapture = "not-a-capture"
        case unsupportedLinktype = "unsupported-linktype"
        case empty = "empty"
        /// An archive member refused before it could fill memory, disk or time (a decompression bomb).
        case refused = "refused"
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
    /// Equality compares the code only, so tests need not match wording.
    public static func == (a: CaptureError, b: CaptureError) -> Bool { a.code == b.code }
}
