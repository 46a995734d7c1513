import BTCapture
import BTScenario
import CArchive
import CZlib
import Foundation

/// Archives, compressed files, bug reports and sysdiagnoses built in the tests from scenario captures, with
/// libarchive's writer and zlib (nothing binary is committed): the same captures btlens must read back.
public enum ArchiveFixtures {
    public enum Container: String, Sendable, CaseIterable {
        case gzip, xz, zstd, bzip2, zip, tar, tarGzip = "tar.gz", tarXz = "tar.xz"
    }

    public struct WriteError: Error, CustomStringConvertible {
        public var description: String
    }

    /// Writes `members` (path inside, bytes) as `container` to `path`. The compressed single-file containers
    /// (gzip, xz, zstd, bzip2) take exactly one member, whose name they do not keep.
    public static func write(_ path: String, _ container: Container, members: [(String, [UInt8])], options: String? = nil) throws {
        guard let a = archive_write_new() else { throw WriteError(description: "archive_write_new") }
        defer { archive_write_free(a) }
        switch container {
        case .gzip: archive_write_add_filter_gzip(a); archive_write_set_format_raw(a)
        case .xz: archive_write_add_filter_xz(a); archive_write_set_format_raw(a)
        case .zstd: archive_write_add_filter_zstd(a); archive_write_set_format_raw(a)
        case .bzip2: archive_write_add_filter_bzip2(a); archive_write_set_format_raw(a)
        case .zip: archive_write_set_format_zip(a)
        case .tar: archive_write_set_format_pax_restricted(a)
        case .tarGzip: archive_write_add_filter_gzip(a); archive_write_set_format_pax_restricted(a)
        case .tarXz: archive_write_add_filter_xz(a); archive_write_set_format_pax_restricted(a)
        }
        if let options { archive_write_set_options(a, options) }
        try check(a, archive_write_open_filename(a, path))
        for (name, bytes) in members {
            guard let entry = archive_entry_new() else { throw WriteError(description: "archive_entry_new") }
            defer { archive_entry_free(entry) }
            archive_entry_set_pathname(entry, name)
            archive_entry_set_size(entry, Int64(bytes.count))
            archive_entry_set_filetype(entry, 0o100000)
            archive_entry_set_perm(entry, 0o644)
            archive_entry_set_mtime(entry, 1_768_471_200, 0)
            try check(a, archive_write_header(a, entry))
            var written = 0
            while written < bytes.count {
                let n = bytes.withUnsafeBytes { archive_write_data(a, $0.baseAddress! + written, $0.count - written) }
                guard n > 0 else { throw WriteError(description: "archive_write_data: \(String(cString: archive_error_string(a)))") }
                written += n
            }
        }
        try check(a, archive_write_close(a))
    }

    static func check(_ a: OpaquePointer, _ status: Int32) throws {
        guard status == ARCHIVE_OK || status == ARCHIVE_WARN else {
            throw WriteError(description: archive_error_string(a).map { String(cString: $0) } ?? "libarchive status \(status)")
        }
    }

    // MARK: - btsnoop records

    /// The records of a btsnoop file: (flags, timestamp, H4 packet with its indicator, original length).
    public struct BTSnoopRecord: Sendable {
        public var originalLength: UInt32
        public var flags: UInt32
        public var timestamp: Int64
        public var data: [UInt8]
    }

    public static func btsnoopRecords(_ bytes: [UInt8]) -> (header: [UInt8], records: [BTSnoopRecord]) {
        func be32(_ at: Int) -> UInt32 { bytes[at..<at + 4].reduce(0) { $0 << 8 | UInt32($1) } }
        var records: [BTSnoopRecord] = []
        var at = 16
        while at + 24 <= bytes.count {
            let included = Int(be32(at + 4))
            let time = Int64(bitPattern: UInt64(be32(at + 16)) << 32 | UInt64(be32(at + 20)))
            records.append(BTSnoopRecord(originalLength: be32(at), flags: be32(at + 8), timestamp: time,
                                         data: Array(bytes[at + 24..<at + 24 + included])))
            at += 24 + included
        }
        return (Array(bytes.prefix(16)), records)
    }

    public static func btsnoop(header: [UInt8], _ records: ArraySlice<BTSnoopRecord>) -> [UInt8] {
        var out = header
        for r in records {
            out += CaptureBytes.be32(r.originalLength) + CaptureBytes.be32(UInt32(r.data.count)) + CaptureBytes.be32(r.flags)
                + CaptureBytes.be32(0) + CaptureBytes.be64(UInt64(bitPattern: r.timestamp)) + r.data
        }
        return out
    }

    /// An Android btsnoop file cut in two at record `index` (0-based: the first record of the second file), as
    /// Android rotates `btsnoop_hci.log` into `btsnoop_hci.log.last`.
    public static func rotate(_ bytes: [UInt8], at index: Int) -> (last: [UInt8], current: [UInt8]) {
        let (header, records) = btsnoopRecords(bytes)
        return (btsnoop(header: header, records[..<index]), btsnoop(header: header, records[index...]))
    }

    // MARK: - btsnooz

    /// The btsnooz summary (version 1 or 2) of an H4 btsnoop file, as Android's Bluetooth service writes it:
    /// header (version, last time in µs), then zlib of the records; ACL payloads cut to `aclKept` bytes.
    public static func btsnooz(fromBTSnoop bytes: [UInt8], version: Int, aclKept: Int = 14) -> [UInt8] {
        let records = btsnoopRecords(bytes).records
        let epoch: Int64 = 0x00DC_DDB3_0F2F_8000
        var body: [UInt8] = []
        var previous: Int64?
        for r in records {
            // Older Android's summary has no ISO packets.
            guard let indicator = r.data.first, indicator != H4PacketType.iso,
                  let type = BTSnoozLog.btsnoozType(h4: indicator, received: r.flags & 1 == 1)
            else { continue }
            var packet = r.data.dropFirst()
            let full = packet.count
            if indicator == H4PacketType.acl { packet = packet.prefix(aclKept) }
            let micros = r.timestamp - epoch
            let delta = UInt64(max(0, previous.map { micros - $0 } ?? 0))
            previous = micros
            body += BTSnoozLog.btsnoozRecord(type: type, kept: packet, packetLength: full, deltaMicroseconds: delta,
                                             version: version)
        }
        let last = UInt64(previous ?? 0)
        var header: [UInt8] = [UInt8(version)]
        for i in 0..<8 { header.append(UInt8(truncatingIfNeeded: last >> (8 * UInt64(i)))) }
        return header + deflate(body)
    }

    /// zlib (RFC 1950) of `bytes`.
    public static func deflate(_ bytes: [UInt8]) -> [UInt8] {
        var size = compressBound(uLong(bytes.count))
        var out = [UInt8](repeating: 0, count: Int(size))
        let status = out.withUnsafeMutableBufferPointer { o in
            bytes.withUnsafeBufferPointer { i in compress2(o.baseAddress, &size, i.baseAddress, uLong(i.count), 9) }
        }
        precondition(status == Z_OK)
        return Array(out.prefix(Int(size)))
    }

    /// A bug report's text around a btsnooz summary, wrapped in lines as dumpstate prints it.
    public static func bugReportText(summary: [UInt8]?) -> [UInt8] {
        var text = "========================================================\n== dumpstate: 2026-01-15 10:02:00\n"
            + "========================================================\n\nBuild: test\n\nDUMP OF SERVICE bluetooth_manager:\n"
        if let summary {
            let encoded = Data(summary).base64EncodedString()
            text += "--- BEGIN:BTSNOOP_LOG_SUMMARY (\(summary.count) bytes in) ---\n"
            var rest = Substring(encoded)
            while !rest.isEmpty {
                text += rest.prefix(76) + "\n"
                rest = rest.dropFirst(76)
            }
            text += "--- END:BTSNOOP_LOG_SUMMARY ---\n"
        }
        text += "\nDUMP OF SERVICE other:\nnothing here\n"
        return Array(text.utf8)
    }
}
