import Foundation
import BTReport

/// `export --format parquet`: the JSON Lines tables converted to Parquet by the duckdb command when it is
/// installed (btlens takes no Parquet library of its own).
enum ParquetConversion {
    /// What to run by hand without the duckdb command (DuckDB's Python package does the same).
    static let oneLiner = #"duckdb -c "COPY (SELECT * FROM read_json_auto('OUT/findings.jsonl')) TO 'OUT/findings.parquet' (FORMAT parquet)""#

    /// The duckdb executable on PATH.
    static func duckdb() -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = String(directory) + "/duckdb"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// TABLE.parquet beside each non-empty TABLE.jsonl.
    static func convert(_ directory: String) throws {
        guard let duckdb = duckdb() else { throw ExitStatus.usage }
        for table in FactsTable.allCases {
            let source = directory + "/" + table.fileName
            guard let size = try? FileManager.default.attributesOfItem(atPath: source)[.size] as? Int, size > 0 else { continue }
            let target = directory + "/" + table.rawValue + ".parquet"
            let quoted = { (s: String) in "'" + s.replacingOccurrences(of: "'", with: "''") + "'" }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: duckdb)
            process.arguments = ["-c", "COPY (SELECT * FROM read_json_auto(\(quoted(source)), format = 'newline_delimited')) TO \(quoted(target)) (FORMAT parquet)"]
            try process.run()
            process.waitUntilExit()
            if process.terminationStatus != 0 {
                Diagnostics.error(file: target, "duckdb could not convert \(table.fileName) (exit \(process.terminationStatus))")
                throw ExitStatus.inputUnreadable
            }
        }
    }
}
