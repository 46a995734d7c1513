/// What kind of activity a benchmark capture is made of: memory and time are bounded per link, per scan and per
/// finding, so each shape stresses a different part of the model.
public enum BenchShape: String, Sendable, CaseIterable {
    /// Many short links (2–4 up at once, coming and going), reports heard without a scan the host started:
    /// the default, and the capture of `make bench`.
    case links
    /// Scan sessions started and stopped by the host (duplicate filtering often off, links made while still
    /// scanning, known peers reconnected after a scan), the phone's own advertising turned on and off: many
    /// scans, advertising sessions and findings.
    case scans
    /// One link at a time kept up for millions of ATT operations.
    case longLinks = "long-links"
}
