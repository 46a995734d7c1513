import Foundation
import BTReport
#if canImport(Glibc)
import Glibc
#endif

/// The JSON Lines files of an export directory, one per table, written by several workers: each capture's rows
/// go in one locked write per table, so a capture's rows stay together and lines never interleave.
final class FactsTableFiles: @unchecked Sendable {
    struct WriteError: Error, CustomStringConvertible {
        var path: String
        var cause: String
        var description: String { "\(path): \(cause)" }
    }

    private var handles: [FactsTable: UnsafeMutablePointer<FILE>] = [:]
    private let lock = NSLock()
    let directory: String

    /// Truncates the tables, or appends to them (`--incremental`).
    init(directory: String, append: Bool) throws {
        self.directory = directory
        for table in FactsTable.allCases {
            let path = directory + "/" + table.fileName
            guard let handle = fopen(path, append ? "a" : "w") else {
                for h in handles.values { fclose(h) }
                throw WriteError(path: path, cause: String(cString: strerror(errno)))
            }
            handles[table] = handle
        }
    }

    /// A capture's rows, those set aside included (`FactsRows`), after the rows already written.
    func write(_ rows: FactsRows) throws {
        lock.lock()
        defer { lock.unlock() }
        for table in FactsTable.allCases {
            guard rows.count(table) > 0, let handle = handles[table] else { continue }
            let path = directory + "/" + table.fileName
            do {
                try rows.write(table) { bytes in
                    if fwrite(bytes.baseAddress, 1, bytes.count, handle) != bytes.count {
                        throw WriteError(path: path, cause: String(cString: strerror(errno)))
                    }
                }
            } catch let error as WriteError {
                throw error
            } catch {
                throw WriteError(path: path, cause: "\(error)")
            }
        }
    }

    func close() throws {
        lock.lock()
        defer { lock.unlock() }
        var failed: String?
        for (table, handle) in handles where fclose(handle) != 0 { failed = table.fileName }
        handles = [:]
        if let failed { throw WriteError(path: directory + "/" + failed, cause: String(cString: strerror(errno))) }
    }

    /// The sha256 of every capture already in the directory's captures table (`--incremental`).
    static func exportedHashes(in directory: String) -> Set<String> {
        guard let data = FileManager.default.contents(atPath: directory + "/" + FactsTable.captures.fileName) else { return [] }
        var hashes = Set<String>()
        for line in data.split(separator: UInt8(ascii: "\n")) {
            guard let row = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any],
                  let sha256 = row["sha256"] as? String else { continue }
            hashes.insert(sha256)
        }
        return hashes
    }

    /// Lines per table file, for the manifest (after an incremental run, the rows of every run).
    static func rowCounts(in directory: String) throws -> [FactsTable: Int] {
        var counts: [FactsTable: Int] = [:]
        for table in FactsTable.allCases {
            let path = directory + "/" + table.fileName
            guard let handle = fopen(path, "r") else { throw WriteError(path: path, cause: String(cString: strerror(errno))) }
            defer { fclose(handle) }
            var buffer = [UInt8](repeating: 0, count: 1 << 16)
            var lines = 0
            while true {
                let n = buffer.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, handle) }
                if n == 0 { break }
                for i in 0..<n where buffer[i] == UInt8(ascii: "\n") { lines += 1 }
            }
            counts[table] = lines
        }
        return counts
    }
}
