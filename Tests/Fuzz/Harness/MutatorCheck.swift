#if canImport(Glibc)
import Glibc
#endif
import BTScenario

/// `btlens-fuzz --mutator-check ROUNDS FILE...`: the structure-aware mutator (`HCIMutator`) run `ROUNDS` times on
/// each input, chained as libFuzzer chains it, with a deterministic stand-in for libFuzzer's byte mutation. What
/// makes the mutator worth having is measured and printed, and the run fails when it does not hold:
/// - it never writes past the room it is given;
/// - the framing survives: the packets it returns parse back to the same bytes;
/// - most packets keep HCI lengths that match their bytes (byte-level mutation breaks them);
/// - the inputs it makes still open links and carry ATT: the tracker sees connections in most of them.
enum MutatorCheck {
    /// Room the fuzz harness gives the tracker's inputs (`-max_len`).
    static let maximum = 4096

    struct Tally {
        var mutations = 0
        var framed = 0
        var packets = 0
        var lengthsRight = 0
        var tracked = 0
        var withLinks = 0
        var withATT = 0

        func percent(_ a: Int, _ b: Int) -> Int { b == 0 ? 0 : a * 100 / b }

        var line: String {
            "framing intact in \(percent(framed, mutations)) %, HCI lengths right in \(percent(lengthsRight, packets)) % "
                + "of \(packets) packets, links in \(percent(withLinks, tracked)) % and ATT in \(percent(withATT, tracked)) % of the tracked inputs"
        }
    }

    static func run(rounds: Int, paths: [String]) -> Int32 {
        var inputs: [[UInt8]] = []
        for path in paths {
            guard let bytes = FuzzMain.read(path) else {
                var message = "btlens-fuzz: \(path): cannot read\n"
                message.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
                return 2
            }
            inputs.append(bytes)
        }
        guard let structured = measure(inputs, rounds: rounds, structured: true),
              let bytesOnly = measure(inputs, rounds: rounds, structured: false) else { return 1 }
        print("btlens-fuzz: \(structured.mutations) mutations of \(paths.count) inputs: \(structured.line)")
        print("btlens-fuzz: byte mutation alone: \(bytesOnly.line)")
        // The byte mutation the mutator hands to libFuzzer one time in ten may break framing and lengths: the rest
        // must not, and the inputs must go on opening links and carrying ATT.
        return structured.percent(structured.framed, structured.mutations) >= 80
            && structured.percent(structured.lengthsRight, structured.packets) >= 80
            && structured.percent(structured.withLinks, structured.tracked) >= 50
            && structured.percent(structured.withATT, structured.tracked) >= 25 ? 0 : 1
    }

    /// `rounds` chained mutations of each input, by the structure-aware mutator or by bytes alone (as libFuzzer
    /// without it); nil when the mutator wrote past its room.
    static func measure(_ inputs: [[UInt8]], rounds: Int, structured: Bool) -> Tally? {
        var tally = Tally()
        for (n, original) in inputs.enumerated() {
            var input = original
            var flips = SplitMix64(seed: UInt64(n) &+ 1)
            for round in 0..<rounds {
                var buffer = [UInt8](repeating: 0xA5, count: maximum + 64)
                let size = min(input.count, maximum)
                buffer.replaceSubrange(0..<size, with: input.prefix(size))
                // libFuzzer's mutation stood in for by a byte changed or a byte added.
                let byteMutator: HCIMutator.ByteMutator = { data, size, maximum in
                    guard size > 0 else { return 0 }
                    if size < maximum, flips.below(2) == 0 { data[size] = flips.byte(); return size + 1 }
                    data[flips.below(size)] = flips.byte()
                    return size
                }
                var mutator = HCIMutator(seed: UInt32(truncatingIfNeeded: n &* 7919 &+ round), byteMutator: byteMutator)
                let out = buffer.withUnsafeMutableBufferPointer {
                    structured ? mutator.mutate($0.baseAddress!, size: size, maximum: maximum)
                        : byteMutator($0.baseAddress!, size, maximum)
                }
                tally.mutations += 1
                guard out <= maximum, buffer[maximum...].allSatisfy({ $0 == 0xA5 }) else {
                    print("btlens-fuzz: the mutator wrote past its room, input \(n + 1), round \(round)")
                    return nil
                }
                let mutated = Array(buffer.prefix(out))
                let packets = mutated.withUnsafeBytes { HCIMutator.parse($0) }
                if HCIMutator.serialize(packets, maximum: maximum) == mutated { tally.framed += 1 }
                for p in packets {
                    tally.packets += 1
                    var fixed = p
                    HCIMutator.fixLengths(&fixed)
                    if fixed == p { tally.lengthsRight += 1 }
                }
                let (links, att) = mutated.withUnsafeBytes(track)
                tally.tracked += 1
                if links > 0 { tally.withLinks += 1 }
                if att > 0 { tally.withATT += 1 }
                input = mutated.isEmpty ? input : mutated
            }
        }
        return tally
    }

    /// The links the tracker opened on `bytes` and the ATT PDUs it saw on them.
    static func track(_ bytes: UnsafeRawBufferPointer) -> (links: Int, att: Int) {
        let model = LayerTarget.model(bytes)
        return (model.connections.count, model.connections.reduce(0) { $0 + $1.attCounts.values.reduce(0, +) })
    }
}
