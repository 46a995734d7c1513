import Foundation
import Testing
import BTWire
import BTCapture
@testable import BTDecode
import BTTrack
import BTRules
import BTScenario
import TestSupport

/// `btlens anonymize` by value: every identifier the capture shows anywhere (addresses in both byte orders and as
/// text, names, keys, serial numbers) is replaced wherever else its bytes are, the controller's debug log is left
/// out, and `anonymize --check` finds nothing of the original in the copy; the copy audits the same.
@Suite("anonymize by value")
struct AnonymizeByValueTests {
    /// Both readings into a btsnoop (or pcap) copy at `output`.
    static func anonymize(_ path: String, to output: String, keepVendorLogs: Bool = false, keepValues: Bool = false,
                          pcap: Bool = false) throws -> (result: AnonymizingCopier.Result, identifiers: CapturedIdentifiers) {
        let writer: any HCIRecordWriter = pcap ? try PcapWriter(path: output, linktype: Linktype.bluetoothHCIH4WithPHDR)
                                               : try BTSnoopWriter(path: output, datalink: BTSnoopDatalink.h4)
        return try AnonymizingCopier.copy(reading: { try OpenedCapture.open(path: path) }, to: writer,
                                          anonymizer: Anonymizer(keepValues: keepValues), keepVendorLogs: keepVendorLogs)
    }

    /// The field pass alone, in one reading (what `anonymize` did before the pass by value).
    static func anonymizeByField(_ path: String, to output: String) throws {
        let writer = try BTSnoopWriter(path: output, datalink: BTSnoopDatalink.h4)
        var copier = AnonymizingCopier(writer: writer, keepVendorLogs: true)
        _ = try OpenedCapture.open(path: path).accept(&copier)
        try writer.finish()
    }

    /// `anonymize --check ORIGINAL COPY`.
    static func check(_ original: String, _ copy: String) throws -> AnonymizeCheck.Report {
        var collector = IdentifierCollector(anonymizer: Anonymizer())
        let identifiers = try OpenedCapture.open(path: original).accept(&collector)
        var checker = AnonymizeCheck(identifiers: identifiers)
        return try OpenedCapture.open(path: copy).accept(&checker)
    }

    static func findingsPerRule(_ path: String) throws -> [String: Int] {
        var collector = TrackingCollector()
        let model = try OpenedCapture.open(path: path).accept(&collector)
        var counts: [String: Int] = [:]
        for finding in Auditor().audit(model, file: "x") { counts[finding.id, default: 0] += 1 }
        return counts
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, needle.count <= haystack.count else { return false }
        for i in 0...(haystack.count - needle.count) where haystack[i] == needle[0] {
            if haystack[i..<(i + needle.count)].elementsEqual(needle) { return true }
        }
        return false
    }

    // MARK: - Real captures

    /// Every file of ../shared/captures/real (not only those with expected output).
    static let realCaptures: [String] = {
        guard RealCaptures.available else {
            FileHandle.standardError.write(Data("""
                NOTE: \(RealCaptures.directory.path) is absent: anonymize by value was NOT checked on real captures.\n
                """.utf8))
            return []
        }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: RealCaptures.directory.path)) ?? []
        return names.filter { name in
            var isDirectory: ObjCBool = false
            let path = RealCaptures.directory.appendingPathComponent(name).path
            return name != "MANIFEST.tsv" && FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && !isDirectory.boolValue
        }.sorted()
    }()

    @Test("real captures: nothing of the original in the copy, and the same findings per rule", arguments: realCaptures)
    func realCapture(name: String) throws {
        let original = RealCaptures.directory.appendingPathComponent(name).path
        let dir = try TemporaryDirectory()
        let copy = dir.file("copy")
        let (result, identifiers) = try Self.anonymize(original, to: copy)
        let report = try Self.check(original, copy)
        #expect(report.hits.isEmpty, "\(name): \(report.lines.prefix(5))")
        #expect(report.records == result.written)
        if result.written > 0 {
            #expect(identifiers.count > 0, "\(name): no identifier collected")
            #expect(try Self.findingsPerRule(copy) == Self.findingsPerRule(original), "\(name)")
        } else {
            // Air captures: the copy holds HCI packets only, so nothing (link-layer frames are not anonymised).
            #expect(result.leftOut > 0 || name.contains("empty"), "\(name)")
        }
    }

    // MARK: - Generated: an identifier in each place the field pass did not rewrite

    static let sensor = PeerAddress(BDAddr(rawValue: 0xD7_5A_13_9C_2E_61), type: LEParameter.randomAddress)
    /// Bonded over BR/EDR once: named only by Delete Stored Link Key and the vendor event.
    static let bonded = BDAddr(rawValue: 0x00_1A_7D_DA_71_13)
    /// The app's scan filter (APCF broadcaster address).
    static let filtered = BDAddr(rawValue: 0x5C_F3_70_8B_12_34)
    static let name = "Secret Sensor 9"
    static let serial = "SN-4417-XQ-88"
    static let ltk: [UInt8] = [0x3A, 0x91, 0x0C, 0x5E, 0x77, 0xD2, 0x18, 0xB4, 0x6F, 0x03, 0xE9, 0x2B, 0x84, 0x51, 0xC6, 0xAD]

    /// The identifiers' bytes as they could show anywhere: addresses little-endian, reversed and as text.
    static var secrets: [(String, [UInt8])] {
        var all: [(String, [UInt8])] = []
        for (label, address) in [("sensor", sensor.address), ("bonded", bonded), ("filtered", filtered)] {
            all.append(("\(label) address", address.bytes))
            all.append(("\(label) address reversed", address.bytes.reversed()))
            all.append(("\(label) address as text", Array(address.description.utf8)))
        }
        all.append(("name", Array(name.utf8)))
        all.append(("serial number", Array(serial.utf8)))
        all.append(("LTK", ltk))
        return all
    }

    /// A phone scans, finds the sensor by its name, filters on another address (APCF), sets the sensor's privacy
    /// mode, deletes a BR/EDR bond, connects, reads the GAP Device Name and the Serial Number String, encrypts;
    /// then a vendor event and a packet of the controller's debug log repeat all of it.
    static func writeIdentifiersCapture(_ path: String) throws -> (vendorEvent: Int, debugLog: Int) {
        let sink = WriterSink(try BTSnoopWriter(path: path, datalink: BTSnoopDatalink.h4))
        let s = HCIScript(sink: sink, controller: SampleDevices.phoneController, seed: 11, title: "identifiers")
        s.setUpController()
        let interval = HCIUnits.slots(microseconds: Micros.ms(10))
        s.startScan(active: true, interval: interval, window: interval, filterDuplicates: false)
        s.report([LegacyAdvertisingReport(eventType: 0, peer: sensor,
                                          data: AdvertisingData([.flags(AdvertisingData.generalDiscoverableLEOnly), .completeName(name)]),
                                          rssi: -60)])
        s.wait(ms: 100)
        s.stopScan()
        s.apcf(.apcfEnable(true))
        s.apcf(HCICommand(APCF.opcode, parameters: [APCF.Subcommand.address.rawValue, APCF.Action.add.rawValue, 1]
                          + filtered.bytes + [LEParameter.publicAddress]))
        s.commandComplete(HCICommand(HCIOpcode(rawValue: 0x204E), parameters: [sensor.type] + sensor.address.bytes + [0x01]))
        s.commandComplete(HCICommand(HCIOpcode(rawValue: 0x0C12), parameters: bonded.bytes + [0x00]), returning: [0x00, 0x01, 0x00])

        let database = GATTDatabase([
            SampleProfiles.gap(name: name, appearance: SampleProfiles.sensorAppearance),
            GATTServiceDefinition(GATTUUID.deviceInformation, [
                GATTCharacteristicDefinition(GATTUUID.serialNumber, .read, value: Array(serial.utf8)),
            ]),
        ])
        let parameters = BTScenario.ConnectionParameters(intervalMin: 24, intervalMax: 24,
                                                         supervisionTimeout: HCIUnits.supervisionTimeout(microseconds: Micros.seconds(2)))
        let link = s.connect(to: sensor, handle: 0x0040, parameters: parameters, scanInterval: interval, scanWindow: interval)
        let att = ATTChannel(script: s, connection: link, server: GATTServer(database: database), clientSide: .local)
        _ = att.discoverEverything()
        _ = att.read(try #require(database.characteristic(GATTUUID.deviceName)).valueHandle)
        _ = att.read(try #require(database.characteristic(GATTUUID.serialNumber)).valueHandle)
        s.startEncryption(link, ltk: ltk, random: 0x1122_3344_5566_7788, ediv: 0x9ABC)
        s.wait(ms: 50)

        // A vendor event (a controller's own report) and the debug log: every identifier, in every form.
        let blob: [UInt8] = secrets.flatMap { (_, bytes) -> [UInt8] in bytes + [0xA5] }
        s.emit(HCIEvent(HCIEventCode(rawValue: 0xFF), parameters: [0x58] + blob))
        let vendorEvent = s.packetCount
        s.wait(ms: 5)
        let log: [UInt8] = [0x07, 0x00] + blob
        s.emitACL([0xDC, 0x2E, UInt8(log.count & 0xFF), UInt8(log.count >> 8)] + log, from: .remote)
        let debugLog = s.packetCount
        s.wait(ms: 50)
        s.disconnect(link)
        try s.finish()
        return (vendorEvent, debugLog)
    }

    @Test("APCF address filter, Set Privacy Mode, Delete Stored Link Key, a vendor event, the debug log: the copy holds none")
    func generated() throws {
        let dir = try TemporaryDirectory()
        let original = dir.file("identifiers.btsnoop")
        let (vendorEvent, debugLog) = try Self.writeIdentifiersCapture(original)
        let originalBytes = try TemporaryDirectory.contents(of: original)
        for (label, bytes) in Self.secrets { #expect(Self.contains(originalBytes, bytes), "the original lacks the \(label)") }

        // The field pass alone leaves them in the vendor event and the debug log; --check says where.
        let byField = dir.file("by-field.btsnoop")
        try Self.anonymizeByField(original, to: byField)
        let before = try Self.check(original, byField)
        #expect(!before.hits.isEmpty)
        let places = Set(before.hits.flatMap(\.records))
        #expect(places == ["\(vendorEvent)", "\(debugLog)"], "\(before.lines)")
        for label in ["address D7:5A:13:9C:2E:61 in HCI byte order", "address D7:5A:13:9C:2E:61 in reversed byte order",
                      "address D7:5A:13:9C:2E:61 as text", "address 00:1A:7D:DA:71:13 in HCI byte order",
                      "address 5C:F3:70:8B:12:34 in HCI byte order", "name \"Secret Sensor 9\" as is",
                      "serial number \"SN-4417-XQ-88\" as is", "LTK 3a91… (16 bytes) as is"] {
            #expect(before.lines.contains { $0.hasPrefix(label + ": records \(vendorEvent), \(debugLog)") }, "\(label): \(before.lines)")
        }
        // One address's forms first found in the same record: listed in one order (it was a dictionary's, which
        // changes from run to run).
        let forms = ["in HCI byte order", "in reversed byte order", "as text"].map { form in
            before.lines.firstIndex { $0.hasPrefix("address D7:5A:13:9C:2E:61 \(form):") } ?? -1
        }
        #expect(forms[0] >= 0 && forms[0] < forms[1] && forms[1] < forms[2], "\(before.lines)")

        // By value: none of them; the debug log left out.
        let copy = dir.file("copy.btsnoop")
        let (result, identifiers) = try Self.anonymize(original, to: copy)
        #expect(result.vendorLogsLeftOut == 1)
        #expect(result.byValue >= Self.secrets.count)
        let described = identifiers.all.map(\.description)
        for expected in ["address D7:5A:13:9C:2E:61", "address 00:1A:7D:DA:71:13", "address 5C:F3:70:8B:12:34",
                         "name \"Secret Sensor 9\"", "serial number \"SN-4417-XQ-88\"", "LTK 3a91… (16 bytes)"] {
            #expect(described.contains(expected), "\(expected) not collected: \(described)")
        }
        let after = try Self.check(original, copy)
        #expect(after.hits.isEmpty, "\(after.lines)")
        let copyBytes = try TemporaryDirectory.contents(of: copy)
        for (label, bytes) in Self.secrets { #expect(!Self.contains(copyBytes, bytes), "the copy holds the \(label)") }
        #expect(!Self.contains(copyBytes, [0xDC, 0x2E]), "the debug log is in the copy")
        #expect(try Self.findingsPerRule(copy) == Self.findingsPerRule(original))

        // Kept on request: then by value too.
        let kept = dir.file("kept.btsnoop")
        let keptResult = try Self.anonymize(original, to: kept, keepVendorLogs: true).result
        #expect(keptResult.vendorLogsLeftOut == 0 && keptResult.written == result.written + 1)
        #expect(try Self.check(original, kept).hits.isEmpty)
        let keptBytes = try TemporaryDirectory.contents(of: kept)
        #expect(Self.contains(keptBytes, [0xDC, 0x2E]))
        for (label, bytes) in Self.secrets { #expect(!Self.contains(keptBytes, bytes), "the kept debug log holds the \(label)") }

        // --keep-values keeps attribute values, but not the GAP Device Name or the serial number read.
        let values = dir.file("values.btsnoop")
        _ = try Self.anonymize(original, to: values, keepValues: true)
        #expect(try Self.check(original, values).hits.isEmpty)
        let valuesBytes = try TemporaryDirectory.contents(of: values)
        #expect(!Self.contains(valuesBytes, Array(Self.name.utf8)) && !Self.contains(valuesBytes, Array(Self.serial.utf8)))
        #expect(Self.contains(valuesBytes, Array("name-1".utf8)))
    }

    @Test("a name split between two ACL fragments is found and replaced across them")
    func acrossRecords() throws {
        // A remote name (Remote Name Request Complete) makes the name known; a notification carries it split.
        var event: [UInt8] = [0x07, 0xFF, 0x00] + [0x11, 0x22, 0x33, 0x44, 0x55, 0x66] + Array(Self.name.utf8)
        event += [UInt8](repeating: 0, count: 248 - Self.name.utf8.count)
        event[1] = UInt8(event.count - 2)
        let text = Array(Self.name.utf8)
        // ACL start: 14 bytes (L2CAP header, Handle Value Notification of 0x000e, 7 bytes of the name of 18), then
        // the continuation with the other 8.
        let first: [UInt8] = [0x40, 0x20, 0x0E, 0x00, 0x12, 0x00, 0x04, 0x00, 0x1B, 0x0E, 0x00] + text[0..<7]
        let second: [UInt8] = [0x40, 0x10, UInt8(text.count - 7), 0x00] + text[7...]
        let dir = try TemporaryDirectory()
        let path = dir.file("split.btsnoop")
        let writer = try BTSnoopWriter(path: path, datalink: BTSnoopDatalink.h4)
        for (i, packet) in [event, first, second].enumerated() {
            try writer.write(kind: i == 0 ? .event : .acl, direction: .received, timestamp: Timestamp(seconds: 1_768_471_200 + Int64(i), nanoseconds: 0),
                             controller: 0, monitorOpcode: nil, bytes: packet)
        }
        try writer.finish()
        let copy = dir.file("copy.btsnoop")
        _ = try Self.anonymize(path, to: copy, keepValues: true)
        let report = try Self.check(path, copy)
        #expect(report.hits.isEmpty, "\(report.lines)")
        let copyBytes = try TemporaryDirectory.contents(of: copy)
        #expect(!Self.contains(copyBytes, Array(text[0..<7])) && !Self.contains(copyBytes, Array(text[7...])))
        // The field pass alone leaves it, and --check finds it across records 2–3.
        let byField = dir.file("by-field.btsnoop")
        let writer2 = try BTSnoopWriter(path: byField, datalink: BTSnoopDatalink.h4)
        var copier = AnonymizingCopier(writer: writer2, anonymizer: Anonymizer(keepValues: true))
        _ = try OpenedCapture.open(path: path).accept(&copier)
        try writer2.finish()
        let split = try Self.check(path, byField)
        #expect(split.lines == ["name \"Secret Sensor 9\" as is: record 2–3"], "\(split.lines)")
    }

    @Test("no pseudonym equals an original address, in either byte order")
    func pseudonymsAvoidOriginals() throws {
        // The first static random address gets C0:00:00:00:00:01 without a key: an original of that value must not
        // keep it (nor may the pseudonym of another be it).
        let anonymizer = Anonymizer()
        anonymizer.collectIdentifiers()
        for value: UInt64 in [0xC1_00_00_00_00_02, 0xC0_00_00_00_00_01, 0xC0_00_00_00_00_03] {
            var command: [UInt8] = [0x05, 0x20, 0x06] + (0..<6).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
            command.withUnsafeMutableBytes { anonymizer.anonymize(kind: .command, payload: $0) }
        }
        let scanner = anonymizer.byValueScanner()
        let originals = Set(scanner.patterns.filter { $0.form == .asCarried }.map(\.bytes))
        let made = scanner.patterns.filter { $0.form == .asCarried }.map(\.replacement)
        #expect(made.count == 3 && Set(made).count == 3)
        for pseudonym in made {
            #expect(!originals.contains(pseudonym) && !originals.contains(pseudonym.reversed()), "\(pseudonym)")
            #expect(pseudonym[5] & 0xC0 == 0xC0)
        }
    }

    @Test("identifiers that overlap are each replaced, even where a replacement keeps the shared byte")
    func overlappingIdentifiers() {
        // A key whose last byte (0x00) is an address's first, as the anonymizer fuzz target found: the key is
        // zeroed (keeping that byte), and the address after it must be replaced too, not skipped with the key.
        let key: [UInt8] = [0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF, 0x00]
        let address: [UInt8] = [0x00, 0x1C, 0x00, 0x00, 0x00, 0x03]
        let pseudonym: [UInt8] = [0x01, 0x00, 0x00, 0x00, 0x00, 0xC0]
        let scanner = ValueScanner(patterns: [
            .init(bytes: key, replacement: [UInt8](repeating: 0, count: 16), identifier: 0, form: .asCarried),
            .init(bytes: address, replacement: pseudonym, identifier: 1, form: .asCarried),
        ])
        var bytes: [UInt8] = [0xAB] + key + Array(address.dropFirst()) + [0xCD]
        let replaced = bytes.withUnsafeMutableBytes { scanner.rewrite($0) }
        #expect(replaced == 2)
        #expect(bytes == [0xAB] + [UInt8](repeating: 0, count: 15) + pseudonym + [0xCD], "\(bytes)")
        var left = 0
        bytes.withUnsafeBytes { scanner.matches(in: $0) { _, _ in left += 1 } }
        #expect(left == 0)
    }
}
