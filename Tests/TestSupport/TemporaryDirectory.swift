import Foundation

/// A fresh directory under the system temporary directory (mkdtemp), removed with everything in it when the
/// value is released. Tests that write captures use one each, so parallel tests never share files.
public final class TemporaryDirectory: Sendable {
    public let path: String

    public init(prefix: String = "btlens-test") throws {
        var template = Array((NSTemporaryDirectory() + "/\(prefix)-XXXXXX").utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ buffer -> UnsafeMutablePointer<CChar>? in
            guard let base = buffer.baseAddress else { return nil }
            return mkdtemp(base)
        }) else {
            throw CocoaError(.fileWriteUnknown)
        }
        path = String(cString: made)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// The path of `name` inside the directory (the file is not created).
    public func file(_ name: String) -> String { path + "/" + name }

    /// The file's bytes.
    public static func contents(of path: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }
}
