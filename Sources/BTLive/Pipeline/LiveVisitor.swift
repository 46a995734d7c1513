import BTCapture

/// Runs a `LiveSession` over any record source, specialised per source type like the other commands' loops.
/// Stops between records once a stop is requested, however fast history is still coming in.
public struct LiveVisitor: RecordSourceVisitor {
    public let session: LiveSession
    public let stop: LiveStop

    public init(session: LiveSession, stop: LiveStop) {
        self.session = session
        self.stop = stop
    }

    public mutating func visit<S: RecordSource>(_ source: S) throws {
        while !stop.isRequested, let record = source.next() {
            // A followed file can be replaced by one of another format, so this is asked per record (a load).
            let fromMonitor = source.info.format == .btsnoop(datalink: BTSnoopDatalink.monitor)
            session.process(record, fromMonitor: fromMonitor)
        }
    }
}
