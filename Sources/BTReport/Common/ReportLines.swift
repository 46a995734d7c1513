/// A report's lines written as they are made, one newline between each (none after the last, as `joined` makes
/// them): a long capture's report is never held whole.
struct ReportLines {
    private let write: (String) -> Void
    private var started = false

    init(_ write: @escaping (String) -> Void) { self.write = write }

    mutating func append(_ line: String) {
        write(started ? "\n" + line : line)
        started = true
    }
}
