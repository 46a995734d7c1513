#if canImport(Glibc)
import Glibc
#endif
import BTCapture

/// `btlens-fuzz --frames CAPTURE... DIRECTORY`: the records of the project's own captures (samples, scenario
/// output) framed as the decoder, tracker and anonymizer targets read them (`RecordFrames`), in pieces of at most
/// `pieceLength` bytes: their seeds, plausible traffic from the start. A packet longer than a frame holds is cut
/// and its lengths set to match (`HCIMutator.fixLengths`).
enum FrameSeeds {
    static let pieceLength = 4096
    /// Pieces kept of one capture: enough to hold its scans, connections and exchanges, not its repetitions.
    static let piecesPerCapture = 12

    static func write(_ arguments: [String]) -> Int32 {
        guard arguments.count >= 2, let directory = arguments.last else {
            FrameSeeds.error("usage: btlens-fuzz --frames CAPTURE... DIRECTORY\n")
            return 2
        }
        for path in arguments.dropLast() {
            guard let capture = try? OpenedCapture.open(path: path) else {
                FrameSeeds.error("btlens-fuzz: \(path): not a capture\n")
                return 2
            }
            var pieces: [[UInt8]] = [[]]
            while let record = capture.nextRecord() {
                guard let packet = packet(record) else { continue }
                let framed = HCIMutator.serialize([packet], maximum: .max)
                if pieces[pieces.count - 1].count + framed.count > pieceLength { pieces.append([]) }
                pieces[pieces.count - 1] += framed
            }
            // Spread over the capture: its beginning, middle and end.
            let step = max(1, pieces.count / piecesPerCapture)
            let name = path.split(separator: "/").last.map(String.init) ?? path
            for (n, index) in stride(from: 0, to: pieces.count, by: step).prefix(piecesPerCapture).enumerated() where !pieces[index].isEmpty {
                let out = "\(directory)/\(name).\(n).frames"
                guard let file = fopen(out, "wb") else {
                    FrameSeeds.error("btlens-fuzz: \(out): cannot write\n")
                    return 2
                }
                _ = pieces[index].withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
                fclose(file)
            }
        }
        return 0
    }

    static func error(_ message: String) {
        var message = message
        message.withUTF8 { _ = Glibc.write(2, $0.baseAddress, $0.count) }
    }

    /// A record as a frame; nil for records the targets do not frame (notes, monitor records).
    static func packet(_ record: CaptureRecord) -> HCIMutator.Packet? {
        let direction: UInt8 = record.direction == .received ? 1 : 0
        var packet: HCIMutator.Packet
        switch record.kind {
        case .command: packet = .init(kind: 0, aux: direction, bytes: [])
        case .event: packet = .init(kind: 1, aux: direction, bytes: [])
        case .acl: packet = .init(kind: 2, aux: direction, bytes: [])
        case .sco: packet = .init(kind: 6, aux: direction, bytes: [])
        case .iso: packet = .init(kind: 7, aux: direction, bytes: [])
        case .linkLayer:
            let container = RecordFrames.airLinktypes.firstIndex(of: UInt32(record.sourceType)) ?? 0
            packet = .init(kind: 8, aux: direction | UInt8(container) << 1, bytes: [])
        default: return nil
        }
        packet.bytes = Array(record.payload.prefix(HCIMutator.maximumPacket))
        if record.payload.count > HCIMutator.maximumPacket { HCIMutator.fixLengths(&packet) }
        return packet
    }
}
