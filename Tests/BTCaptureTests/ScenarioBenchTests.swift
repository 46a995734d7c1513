import BTCapture
import BTScenario
import BTWire
import Testing
import TestSupport

/// The benchmark generator at a small size: the requested size, the advertising/ATT/HCI mix, and a capture a
/// strict reader and reassembler accept.
@Suite struct ScenarioBenchTests {
    static let size: Int64 = 2 << 20

    static func generate() throws -> (stats: BenchmarkStatistics, capture: LoadedCapture, bytes: Int, dir: TemporaryDirectory) {
        let dir = try TemporaryDirectory()
        let stats = try BenchmarkGenerator.write(to: dir.file("bench.btsnoop"), targetBytes: size)
        let bytes = try TemporaryDirectory.contents(of: dir.file("bench.btsnoop")).count
        return (stats, try LoadedCapture.load(dir.file("bench.btsnoop")), bytes, dir)
    }

    @Test func sizeAndMix() throws {
        let (stats, capture, bytes, _) = try Self.generate()
        #expect(Int64(bytes) == stats.bytes)
        #expect(stats.bytes >= Self.size)
        #expect(stats.bytes < Self.size + Int64(BTSnoopReader.recordHeaderLength + 300))
        #expect(capture.info.format == .btsnoop(datalink: BTSnoopDatalink.h4))
        #expect(capture.issueCount == 0)
        #expect(capture.records.count == stats.records)

        let advertising = capture.records.filter { r in
            guard let le = Wire.le(r) else { return false }
            return le.subevent == LESubevent.advertisingReport.rawValue
                || le.subevent == LESubevent.extendedAdvertisingReport.rawValue
        }
        let acl = capture.records.filter { $0.kind == .acl }
        #expect(advertising.count == stats.advertisingRecords)
        #expect(acl.count == stats.attRecords)
        let total = Double(capture.records.count)
        #expect(abs(Double(advertising.count) / total - 0.60) < 0.03)
        #expect(abs(Double(acl.count) / total - 0.35) < 0.03)
        // Both kinds of report, and legacy events with several reports.
        #expect(advertising.contains { Wire.le($0)?.subevent == LESubevent.extendedAdvertisingReport.rawValue })
        #expect(advertising.contains { Wire.le($0)?.params.first ?? 0 > 1 })
        #expect(stats.connectionsOpened > 10)
        #expect(stats.connectionsClosed > 5)
    }

    @Test func aclReassemblesAndCarriesATT() throws {
        let (_, capture, _, _) = try Self.generate()
        let (frames, problems) = reassemble(capture.records)
        #expect(problems.isEmpty, "\(problems.prefix(5))")
        #expect(frames.count > 1_000)
        #expect(frames.allSatisfy { $0.cid == L2CAPChannelID.att.rawValue })
        let opcodes = Set(frames.compactMap(\.attOpcode))
        for op: ATTOpcode in [.handleValueNotification, .writeRequest, .writeResponse, .writeCommand, .readRequest,
                              .readResponse, .exchangeMTURequest] {
            #expect(opcodes.contains(op.rawValue))
        }
        // Long values cross HCI in several fragments; hosts start with PB 00, controllers with PB 10.
        let acl = capture.records.compactMap { r in Wire.acl(r).map { (r.direction, $0.pb) } }
        #expect(acl.contains { $0.1 == PacketBoundary.continuation.rawValue })
        #expect(acl.filter { $0.1 != PacketBoundary.continuation.rawValue }.allSatisfy {
            $0.1 == ($0.0 == .sent ? PacketBoundary.firstNonFlushable : PacketBoundary.firstFlushable).rawValue
        })
    }

    @Test func linksComeAndGo() throws {
        let (_, capture, _, _) = try Self.generate()
        var open = Set<UInt16>()
        var everOpened = 0
        for r in capture.records {
            if let le = Wire.le(r), le.subevent == LESubevent.connectionComplete.rawValue, let h = Wire.u16(le.params, 1) {
                open.insert(h)
                everOpened += 1
            } else if let e = Wire.event(r), e.code == HCIEventCode.disconnectionComplete.rawValue,
                      let h = Wire.u16(e.params, 1) {
                #expect(open.remove(h) != nil)
            } else if let acl = Wire.acl(r) {
                #expect(open.contains(acl.handle))
            }
        }
        #expect(everOpened > open.count)
        #expect((2...4).contains(open.count))
    }

    @Test func sizesParse() {
        #expect(ByteCount.parse("1G") == 1 << 30)
        #expect(ByteCount.parse("100M") == 100 << 20)
        #expect(ByteCount.parse("2MB") == 2 << 20)
        #expect(ByteCount.parse("512k") == 512 << 10)
        #expect(ByteCount.parse("1.5G") == 3 << 29)
        #expect(ByteCount.parse("4096") == 4096)
        #expect(ByteCount.parse("abc") == nil)
        #expect(ByteCount.parse("-1M") == nil)
        #expect(ByteCount.parse("") == nil)
        #expect(ByteCount.describe(1 << 30) == "1.0 GiB")
    }
}
