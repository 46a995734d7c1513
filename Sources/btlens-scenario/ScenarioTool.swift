import ArgumentParser
import BTCapture
import BTScenario
#if canImport(Glibc)
import Glibc
#endif

/// The root command. `main()` replaces ArgumentParser's own entry point only to keep errors to one line
/// with the project's exit codes; help and parsing are ArgumentParser's.
struct ScenarioTool: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "btlens-scenario",
        abstract: "Write btlens's scripted Bluetooth HCI captures: samples, test fixtures and benchmark input.",
        discussion: "Every capture is deterministic: the same command writes the same bytes.",
        subcommands: [List.self, Write.self, Samples.self, Bench.self, Truth.self, Pcapng.self, BTSnooz.self, BugReport.self])

    static func main() {
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch let error as ToolError {
            fail(error.message, code: error.exitCode)
        } catch let error as CaptureError {
            fail(error.message, code: ToolError.ioExitCode)
        } catch {
            if exitCode(for: error) == .success { exit(withError: error) }  // --help, help SUB
            let text = message(for: error)
            let line = text.split(separator: "\n").first.map(String.init) ?? text
            fail(line.hasPrefix("Error: ") ? String(line.dropFirst("Error: ".count)) : line, code: ToolError.usageExitCode)
        }
    }

    static func fail(_ message: String, code: Int32) -> Never {
        var stderr = StandardError()
        print("btlens-scenario: \(message)", to: &stderr)
        Glibc.exit(code)
    }
}

/// An error with its exit code: 2 usage, 3 input/output.
struct ToolError: Error {
    static let usageExitCode: Int32 = 2
    static let ioExitCode: Int32 = 3

    var message: String
    var exitCode: Int32

    static func usage(_ message: String) -> ToolError { ToolError(message: message, exitCode: usageExitCode) }
    static func io(_ message: String) -> ToolError { ToolError(message: message, exitCode: ioExitCode) }
}

/// Standard error as a `TextOutputStream`; writes straight to descriptor 2 (stdio's `stderr` global is
/// not concurrency-safe in Swift 6).
struct StandardError: TextOutputStream {
    static let descriptor: Int32 = 2

    mutating func write(_ string: String) {
        var bytes = Array(string.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeMutableBytes { raw -> Int in
                guard let base = raw.baseAddress else { return 0 }
                return Glibc.write(Self.descriptor, base + offset, raw.count - offset)
            }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return }
            offset += n
        }
    }
}

extension ScenarioTool {
    /// The scenario called `name`, or a usage error that lists the known ones.
    static func scenario(named name: String) throws -> Scenario {
        guard let s = ScenarioRegistry.named(name) else {
            throw ToolError.usage("unknown scenario '\(name)' (known: \((ScenarioRegistry.names + ScenarioRegistry.features.map(\.name)).joined(separator: ", ")))")
        }
        return s
    }

    static func format(named name: String) throws -> ScenarioFormat {
        guard let f = ScenarioFormat(rawValue: name) else {
            let known = ScenarioFormat.allCases.map(\.rawValue).joined(separator: ", ")
            throw ToolError.usage("unknown format '\(name)' (known: \(known))")
        }
        return f
    }

    /// Writes `bytes` to `path`, failures as I/O errors that name the file.
    static func writeFile(_ bytes: [UInt8], to path: String) throws {
        guard let file = fopen(path, "wb") else { throw ToolError.io("\(path): \(String(cString: strerror(errno)))") }
        let written = fwrite(bytes, 1, bytes.count, file)
        let closed = fclose(file)
        guard written == bytes.count, closed == 0 else { throw ToolError.io("\(path): \(String(cString: strerror(errno)))") }
    }

    /// Writes `scenario`, turning failures into I/O errors that name the file.
    static func write(_ scenario: Scenario, to path: String, format: ScenarioFormat,
                      air: AirOptions = AirOptions()) throws {
        do {
            try scenario.write(to: path, format: format, air: air)
        } catch let error as CaptureError {
            throw ToolError.io("\(path): \(error.message)")
        }
    }
}
