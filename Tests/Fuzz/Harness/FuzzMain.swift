#if canImport(Glibc)
import Glibc
#endif
#if FUZZING
import CFuzzerDriver
#endif
import BTTrack
import TestSupport

/// The fuzz harness: by default (the `pipeline` target) each input goes through everything btlens does to a capture
/// (`PipelineExercise`), and is tracked on one thread and on two, which must give the same reports and issues; the
/// other targets (`LayerTarget`) fuzz a layer each from memory.
///
/// Built by `make fuzz` with `-sanitize=fuzzer,address -D FUZZING`, it runs libFuzzer (its options and corpus
/// directories on the command line). Built as usual, it replays the files and directories it is given, so an
/// input that crashed the fuzzer can be run again under a debugger or in the plain build.
@main
enum FuzzMain {
    /// The target this run fuzzes or replays (`LayerTarget`, from `BTLENS_FUZZ_TARGET`).
    nonisolated(unsafe) static var target = LayerTarget.pipeline

    static func main() {
        atexit {
            unlink(FuzzMain.scratch)
            unlink(AnonymizerTarget.copyPath)
        }
        if CommandLine.arguments.dropFirst().first == "--frames" {
            exit(FrameSeeds.write(Array(CommandLine.arguments.dropFirst(2))))
        }
        if CommandLine.arguments.dropFirst().first == "--mutator-check", CommandLine.arguments.count > 3,
           let rounds = Int(CommandLine.arguments[2]) {
            exit(MutatorCheck.run(rounds: rounds, paths: CommandLine.arguments.dropFirst(3).flatMap(files)))
        }
        target = LayerTarget.selected
        #if FUZZING
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv, fuzzOneInput))
        #else
        var inputs = 0
        for argument in CommandLine.arguments.dropFirst() {
            for path in files(argument) {
                guard let bytes = read(path) else {
                    var message = "btlens-fuzz: \(path): cannot read\n"
                    message.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
                    exit(2)
                }
                bytes.withUnsafeBytes { target.run($0) }
                inputs += 1
            }
        }
        print("btlens-fuzz: \(inputs) inputs replayed\(target == .pipeline ? "" : " through \(target.rawValue)"), none failed")
        #endif
    }

    /// Where an input is written for the readers, which read files: memory-backed where the system has /dev/shm,
    /// one per process.
    static let scratch = scratchDirectory + "/btlens-fuzz-\(getpid()).cap"
    /// Where the scratch file is, and what a target sets aside goes (in unlinked files).
    static let scratchDirectory = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : (getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp")

    /// Traps (for libFuzzer to report) when the pipeline breaks one of its promises on `bytes`.
    static func check(_ bytes: UnsafeRawBufferPointer) {
        let fd = open(scratch, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        require(fd >= 0, "cannot write \(scratch)")
        var written = 0
        while written < bytes.count {
            let n = write(fd, bytes.baseAddress! + written, bytes.count - written)
            require(n > 0, "cannot write \(scratch)")
            written += n
        }
        close(fd)
        // A capture that opens but then fails to read throws an error the CLI reports: no crash, so no finding.
        let (parts, report) = selection(bytes)
        guard let outcome = try? PipelineExercise.run(path: scratch, name: "input", linkThread: .never, parts: parts) else { return }
        // Compressed input expands (refused past 1000-fold beyond 16 MiB; a btsnooz summary past 64 MiB): its records
        // are bounded by what it may expand to, not by its own size.
        let expandable = outcome.expanded ? max(16 << 20, bytes.count * 1000) + (64 << 20) : bytes.count
        require(outcome.records <= expandable / 4 + 1, "\(outcome.records) records from \(bytes.count) bytes")
        require(outcome.keptIssues <= outcome.keepLimit, "issues kept beyond the limit")
        // Both paths must give the same reports, or fail with the same error.
        let one = Result { try PipelineExercise.trackingReports(path: scratch, linkThread: .never, only: report) }
        let two = Result { try PipelineExercise.trackingReports(path: scratch, linkThread: .always, only: report) }
        switch (one, two) {
        case (.success(let a), .success(let b)):
            for (x, y) in zip(a, b) where x != y {
                fatalError("one thread and two differ:\n--- one\n\(x)\n--- two\n\(y)")
            }
        case (.failure(let a), .failure(let b)):
            require("\(a)" == "\(b)", "one thread and two fail differently: \(a) / \(b)")
        default:
            fatalError("one thread and two differ: \(one) / \(two)")
        }
    }

    /// What of the pipeline an input goes through under libFuzzer past reading, tracking on one thread and two
    /// and auditing, chosen by its bytes (so the same input always takes the same path): one part of the rest
    /// (`PipelineExercise.Parts`) and one of the four reports compared between the threads (the issue logs always).
    /// All of it for every input ran at a few dozen inputs a second; this runs several times as many and still
    /// reaches every part. Replayed inputs go through all of it.
    static func selection(_ bytes: UnsafeRawBufferPointer) -> (parts: PipelineExercise.Parts, report: Int?) {
        #if FUZZING
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325  // FNV-1a
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0100_0000_01B3 }
        let each = PipelineExercise.Parts.each
        return (each[Int(hash % UInt64(each.count))], Int(hash / UInt64(each.count) % 4))
        #else
        return (.all, nil)
        #endif
    }

    /// `path`, or the files directly in it when it is a directory.
    static func files(_ path: String) -> [String] {
        guard let dir = opendir(path) else { return [path] }
        defer { closedir(dir) }
        var found: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            // Subdirectories are others' (Regressions/layers): named on their own when wanted.
            if !name.hasPrefix("."), entry.pointee.d_type != UInt8(DT_DIR) { found.append(path + "/" + name) }
        }
        return found.sorted()
    }

    static func read(_ path: String) -> [UInt8]? {
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = fread(&chunk, 1, chunk.count, file)
            if n == 0 { break }
            bytes += chunk.prefix(n)
        }
        return bytes
    }
}

#if FUZZING
/// libFuzzer's entry point for one input, by its conventional name: a build whose link pulls in libFuzzer's own
/// `main` (debug builds do) calls it there; `FuzzMain` hands it to the driver.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    FuzzMain.target.run(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}

/// libFuzzer's mutator hook: the tracker's and the anonymizer's inputs are mutated as HCI packets (`HCIMutator`),
/// the other targets' as bytes, by libFuzzer itself.
@_cdecl("LLVMFuzzerCustomMutator")
func customMutator(_ data: UnsafeMutablePointer<UInt8>?, _ size: Int, _ maximum: Int, _ seed: UInt32) -> Int {
    guard let data, FuzzMain.target.mutatesPackets else { return LLVMFuzzerMutate(data, size, maximum) }
    var mutator = HCIMutator(seed: seed) { LLVMFuzzerMutate($0, $1, $2) }
    return mutator.mutate(data, size: size, maximum: maximum)
}
#endif
