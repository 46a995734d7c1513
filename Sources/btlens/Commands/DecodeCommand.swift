import ArgumentParser
import BTWire
import BTCapture
import BTDecode
import BTReport

struct DecodeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decode",
        abstract: "Print one line per record: number, time, direction, controller and a decoded summary.",
        discussion: """
            Direction: '<' host to controller (sent), '>' controller to host (received), as btmon prints them. \
            L2CAP PDUs are reassembled from ACL fragments; the record that completes a PDU shows it. \
            Filters combine with AND; repeated values of one filter combine with OR.

            Kinds: \(FrameFilter.kindNames.joined(separator: ", ")).

            Examples:
              btlens decode samples/heart-rate-session.btsnoop
              btlens decode -v --kind att --handle 0x0040 btsnoop_hci.log
              btlens decode --opcode 0x200c --opcode 0x2042 capture.pklg   # scan enable commands
              btlens decode --cid 4 --time absolute capture.pcapng
              btlens decode --access-address 0x50654d3a --direction c2p --pdu-type data sniffer.pcapng
              btlens decode --pdu-type LL_CONNECTION_UPDATE_IND --pdu-type CONNECT_IND nrf-sniffer.pcapng
            """
    )

    enum TimeStyle: String, ExpressibleByArgument, CaseIterable {
        case relative, absolute, unix
    }

    enum ColorMode: String, ExpressibleByArgument, CaseIterable {
        case auto, always, never
    }

    @Argument(help: "Capture files, archives or bug reports (each capture in turn, under a '# name' line when there are several; rotated logs given together are one); - reads standard input.")
    var files: [String]

    @OptionGroup var anonymizing: AnonymizeOptions

    @Flag(name: .shortAndLong, help: "Show the decoded fields of each record.")
    var verbose = false

    @Option(name: .long, parsing: .singleValue, help: "Only records of this kind (repeatable; see Kinds).")
    var kind: [String] = []

    @Option(name: .long, parsing: .singleValue, help: "Only records of this connection handle, e.g. 0x0040 (repeatable; hex with 0x, else decimal).")
    var handle: [String] = []

    @Option(name: .long, parsing: .singleValue, help: "Only L2CAP PDUs on this channel ID, e.g. 4 for ATT (repeatable).")
    var cid: [String] = []

    @Option(name: .long, parsing: .singleValue, help: "Only records with this opcode at any layer: HCI command opcode, event code, LE subevent, ATT/SMP/signalling code (repeatable).")
    var opcode: [String] = []

    @Option(name: .long, parsing: .singleValue, help: "Air captures: only packets of this access address, e.g. 0x50654d3a, and the CONNECT_IND that assigned it (repeatable).")
    var accessAddress: [String] = []

    @Option(name: .long, parsing: .singleValue, help: "Air captures: only PDUs of this type: ADV_IND, SCAN_REQ, CONNECT_IND, AUX_ADV_IND, …, an LL control PDU (LL_CONNECTION_UPDATE_IND, …), empty or data (repeatable).")
    var pduType: [String] = []

    @Option(name: .long, parsing: .singleValue, help: "Air captures: only data PDUs sent c2p (central to peripheral) or p2c (repeatable).")
    var direction: [String] = []

    @Option(name: .long, help: "Time column: relative (seconds since the first record), absolute (UTC), unix.")
    var time: TimeStyle = .relative

    @Option(name: .long, help: "Stop after printing this many records.")
    var limit: Int?

    @Option(name: .long, help: "Colour: auto (only on a terminal), always, never.")
    var color: ColorMode = .auto

    func makeFilter() throws -> FrameFilter {
        var filter = FrameFilter()
        for k in kind.flatMap({ $0.split(separator: ",").map(String.init) }) {
            guard filter.addKind(k) else {
                throw ValidationError("unknown kind '\(k)'; kinds are \(FrameFilter.kindNames.joined(separator: ", "))")
            }
        }
        func numbers(_ values: [String], _ what: String, max: UInt64) throws -> [UInt64] {
            try values.flatMap { $0.split(separator: ",").map(String.init) }.map {
                guard let v = Hex.parse($0), v <= max else { throw ValidationError("invalid \(what) '\($0)' (hex needs 0x, e.g. 0x0040)") }
                return v
            }
        }
        filter.handles = Set(try numbers(handle, "handle", max: 0x0FFF).map { UInt16($0) })
        filter.channelIDs = Set(try numbers(cid, "CID", max: 0xFFFF).map { UInt16($0) })
        filter.opcodes = Set(try numbers(opcode, "opcode", max: 0xFFFF).map { UInt32($0) })
        filter.accessAddresses = Set(try numbers(accessAddress, "access address", max: 0xFFFF_FFFF).map { UInt32($0) })
        for t in pduType.flatMap({ $0.split(separator: ",").map(String.init) }) {
            guard filter.addPDUType(t) else {
                throw ValidationError("unknown PDU type '\(t)'; give a name as decode prints it (ADV_IND, CONNECT_IND, LL_TERMINATE_IND, …), empty or data")
            }
        }
        for d in direction.flatMap({ $0.split(separator: ",").map(String.init) }) {
            guard filter.addDirection(d) else { throw ValidationError("unknown direction '\(d)'; use c2p or p2c") }
        }
        return filter
    }

    func validate() throws {
        _ = try makeFilter()
        if let limit, limit < 0 { throw ValidationError("--limit must not be negative") }
        if files.isEmpty { throw ValidationError("give a capture file (or - for standard input)") }
    }

    func run() throws {
        let filter = try makeFilter()
        var (inputs, failed) = InputFiles.resolve(files)
        // Only while the lines go elsewhere: on the terminal they show the progress themselves.
        let progress = Progress(label: "decode", inputs: inputs, when: !Output.standardOutputIsTerminal)
        defer { progress.finish() }
        for (index, input) in inputs.enumerated() {
            let reading = progress.start(index)
            defer { reading.finish() }
            guard let capture = InputFiles.open(input) else {
                failed = true
                continue
            }
            if inputs.count > 1 || files.count > 1 { Output.line("# \(input.path)") }
            let colored = color == .always || (color == .auto && Output.standardOutputIsTerminal)
            var printer = DecodePrinter(filter: filter, verbose: verbose, time: time, limit: limit, colored: colored,
                                        digits: capture.info.timestampDigits, progress: reading.update)
            try capture.accept(&printer, anonymizer: anonymizing.makeAnonymizer())
            Output.flushStandardOutput()
            for notice in capture.issues.notices where !input.notices.contains(notice) && !notice.hasPrefix("read as one capture") {
                Diagnostics.printRaw("btlens: \(input.path): note: \(notice)")
            }
            if !InputFiles.finish(input, capture) { failed = true }
        }
        if failed { throw ExitStatus.inputUnreadable }
    }
}

/// The decode loop, specialised per reader type.
struct DecodePrinter: RecordSourceVisitor {
    let filter: FrameFilter
    let verbose: Bool
    let time: DecodeCommand.TimeStyle
    let limit: Int?
    let colored: Bool
    let digits: Int
    /// Called with a record's byte offset every 65,536 records (a progress line).
    var progress: ((Int64) -> Void)? = nil

    mutating func visit<S: RecordSource>(_ source: S) throws {
        var decoder = PacketDecoder(issues: source.issues)
        decoder.linksCommands = true  // "answers record" in -v
        var first: Timestamp?
        var printed = 0
        while let record = source.next() {
            if let progress, record.number & 0xFFFF == 0 { progress(record.offset) }
            let frame = decoder.decode(record)
            if first == nil { first = record.timestamp }
            guard filter.isEmpty || filter.matches(frame) else { continue }
            if let limit, printed >= limit { break }
            printed += 1
            Output.line(line(frame, first: first ?? record.timestamp))
            if verbose {
                for field in FrameDescription.fields(frame) { printField(field, depth: 1) }
            }
        }
    }

    func line(_ frame: DecodedFrame, first: Timestamp) -> String {
        let r = frame.record
        let timeText: String
        switch time {
        case .relative: timeText = TimeFormat.seconds(r.timestamp - first, digits: digits == 9 ? 9 : 6)
        case .absolute: timeText = TimeFormat.utc(r.timestamp, digits: digits)
        case .unix: timeText = r.timestamp.decimalString(fractionDigits: digits)
        }
        let direction = r.direction == .sent ? "<" : r.direction == .received ? ">" : " "
        let controller = r.controller == CaptureRecord.noController ? "-" : String(r.controller)
        var summary = FrameDescription.summary(frame)
        if frame.isMalformed { summary += " [malformed]" }
        if colored { summary = paint(summary, frame) }
        return pad(String(r.number), 7) + "  " + pad(timeText, time == .relative ? 14 : 0) + "  " + direction
            + " " + pad(controller, 2) + "  " + summary
    }

    func paint(_ text: String, _ frame: DecodedFrame) -> String {
        let code: String
        if frame.isMalformed { code = "31" }
        else {
            switch frame.record.kind {
            case .command: code = "33"
            case .event: code = "35"
            case .acl: code = frame.l2cap == nil ? "2" : "36"
            case .note: code = "32"
            default: code = "2"
            }
        }
        return "\u{1B}[\(code)m" + text + "\u{1B}[0m"
    }

    func printField(_ field: DecodedField, depth: Int) {
        let indent = String(repeating: "    ", count: depth) + "        "
        Output.line(indent + field.name + (field.value.isEmpty ? "" : ": " + field.value))
        for child in field.children { printField(child, depth: depth + 1) }
    }

    func pad(_ s: String, _ width: Int) -> String {
        s.count >= width ? s : String(repeating: " ", count: width - s.count) + s
    }
}
