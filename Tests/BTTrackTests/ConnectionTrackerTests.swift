import Testing
import BTWire
import BTCapture
import BTDecode
import BTTrack
import TestSupport

@Suite("connection tracking on scenarios")
struct ScenarioConnectionTests {
    @Test("heart-rate-session: one well-behaved link, discovery by UUID, subscription, 60 notifications at 1 Hz")
    func heartRate() throws {
        let model = try track(try writeScenario("heart-rate-session"))
        #expect(model.connections.count == 1)
        let c = try #require(model.connections.first)
        #expect(c.handle == 0x0040)
        #expect(c.peerAddress == BDAddr("D4:3A:2C:81:5E:07"))
        #expect(c.peerAddressType == .random)
        #expect(c.role == .central)
        #expect(c.transport == .le)
        #expect(!c.implicitStart)
        #expect(c.disconnectReason == HCIStatus(rawValue: 0x16))
        #expect(c.disconnectRequestedLocally)
        #expect(c.mtu == 185)
        #expect(c.initialParameters?.interval == 36)
        #expect(c.parameters == ConnectionParameters(interval: 120, latency: 4, supervisionTimeout: 600))
        #expect(c.discoveries.map(\.kind) == [.primaryServiceByUUID, .characteristics, .descriptors])
        #expect(c.discoveries[0].uuid == BluetoothUUID(uuid16: 0x180D))
        #expect(c.discoveries.filter { !$0.completed }.isEmpty)
        #expect(c.discoveries.filter(\.isFullRange).isEmpty)
        #expect(c.gatt.services.map(\.uuid) == [BluetoothUUID(uuid16: 0x180D)])
        #expect(c.gatt.characteristic(valueHandle: 0x000E)?.uuid == BluetoothUUID(uuid16: 0x2A37))
        #expect(c.gatt.isCCCD(0x000F))
        #expect(c.usage[0x000E]?.notifications == 60)
        let run = try #require(c.runs.first { $0.kind == .notification })
        #expect(run.count == 60)
        #expect(abs((run.rate ?? 0) - 1.0) < 0.1)
        let subscriptions = c.events.compactMap { e -> UInt16? in
            if case .subscription(let cccd, _, let value, _) = e.kind, cccd == 0x000F { return value }
            return nil
        }
        #expect(subscriptions == [1, 0])
        // Both parameter-update paths: the sensor's L2CAP request, then the host's HCI command and the result.
        let sources = c.events.compactMap { e -> TimelineEvent.ParameterSource? in
            if case .parametersRequested(_, let source) = e.kind { return source }
            return nil
        }
        #expect(sources == [.l2capRequest, .host])
        #expect(c.transactions.timeouts == 0)
        #expect(c.transactions.unansweredAtEnd == 0)
    }

    @Test("wasteful-central: full discovery twice, polling reads, idle link, an ATT timeout")
    func wasteful() throws {
        let model = try track(try writeScenario("wasteful-central"))
        #expect(model.connections.count == 2)
        let (first, second) = (model.connections[0], model.connections[1])
        #expect(first.peerAddress == second.peerAddress)
        #expect(first.handle == 0x0040 && second.handle == 0x0041)
        #expect(first.discoveries.first?.kind == .allPrimaryServices)
        #expect(first.discoveries.first?.isFullRange == true)
        #expect(second.discoveries.first?.isFullRange == true)
        #expect(first.gatt.services.count == 5)
        #expect(second.gatt.inheritedFrom == nil)  // it discovered again
        let poll = try #require(first.runs.first { $0.kind == .read && $0.handle == 0x0019 })
        #expect(poll.count == 9)
        #expect(first.gatt.characteristic(valueHandle: 0x0019)?.canNotify == true)
        let idle = first.events.contains { e in
            if case .idle(let until) = e.kind { return (until.timestamp - e.at.timestamp) >= .seconds(30) }
            return false
        }
        #expect(idle)
        #expect(second.transactions.timeouts == 1)
        let timeout = second.events.contains { e in
            if case .attTimeout(let request, let handle, _, let timedOut) = e.kind {
                return request == .writeRequest && handle == 0x001D && timedOut
            }
            return false
        }
        #expect(timeout)
        #expect(first.transactions.errors == 2)  // Read Not Permitted twice
        #expect(first.parameters?.interval == 6)
    }

    @Test("fragmented-acl: long reads, a prepared write, and a supervision timeout")
    func fragmented() throws {
        let model = try track(try writeScenario("fragmented-acl"))
        #expect(model.connections.count == 2)
        let reasons = model.connections.map { $0.disconnectReason?.rawValue }
        #expect(reasons == [0x16, 0x08])
        let a = model.connections[0]
        // A 600-byte value at MTU 247: one Read (246 bytes), then Read Blobs at offsets 246 and 492 — one long read.
        #expect(!a.runs.contains { $0.kind == .readBlob })
        let read = try #require(a.runs.first { $0.kind == .read && $0.blobReads > 0 })
        #expect(read.count == 1 && read.blobReads == 2 && read.bytes == 600)
        // The value kept is its start (from the Read Response), not the last blob.
        #expect(a.usage[read.handle]?.lastValue?.first == 0x00 && a.usage[read.handle]?.readBlobs == 2)
        #expect(a.runs.contains { $0.kind == .preparedWrite && $0.count == 3 })
        // The three prepared writes, then Execute Write Request with flags 0x01: a long write of 500 bytes.
        let executed = a.events.compactMap { e -> (Bool, Int, Int, [UInt16])? in
            if case .executeWrite(let done, let prepared, let bytes, let handles) = e.kind { return (done, prepared, bytes, handles) }
            return nil
        }
        #expect(executed.count == 1)
        #expect(executed.first.map { $0.0 && $0.1 == 3 && $0.2 == 500 && $0.3.count == 1 } == true)
        #expect(a.mtu == 247)
        let b = model.connections[1]
        #expect(b.encrypted)
        #expect(b.events.contains { if case .pairing = $0.kind { return true }; return false })
    }

    @Test("peripheral-role: our side is peripheral, pairing, indications answered")
    func peripheral() throws {
        let model = try track(try writeScenario("peripheral-role"))
        let first = try #require(model.connections.first)
        #expect(first.role == .peripheral)
        #expect(first.handle == 0x0002)
        let pairing = first.events.filter { if case .pairing = $0.kind { return true }; return false }
        #expect(pairing.count == 13)
        #expect(first.encrypted)
        #expect(first.transactions.timeouts == 0)
        #expect(model.connections.contains { $0.handle == 0x0003 && $0.peerAddress == BDAddr("48:3C:10:AB:CD:EF") })
    }
}

@Suite("connection lifecycle")
struct LifecycleTests {
    @Test("a handle reused after a disconnect is a new connection")
    func handleReuse() {
        var feed = PacketFeed()
        feed.feed(.event, PacketFeed.leConnectionComplete(handle: 0x40), .received, at: 1)
        feed.feed(.event, PacketFeed.disconnectionComplete(handle: 0x40, reason: 0x13), .received, at: 2)
        feed.feed(.event, PacketFeed.leConnectionComplete(handle: 0x40), .received, at: 3)
        feed.feed(.event, PacketFeed.disconnectionComplete(handle: 0x40, reason: 0x08), .received, at: 4)
        let model = feed.finish()
        #expect(model.connections.count == 2)
        #expect(model.connections.map { $0.disconnectReason?.rawValue } == [0x13, 0x08])
        #expect(model.connections.map(\.id) == [1, 2])
    }

    @Test("links up at once are bounded: traffic for handles past the limit is ignored and counted as dropped")
    func openLinksBounded() {
        var options = TrackerOptions()
        options.maximumOpenConnections = 3
        var feed = PacketFeed(options: options)
        for handle: UInt16 in 0x40...0x44 {
            feed.feed(.acl, PacketFeed.att(handle: handle, [0x0A, 0x03, 0x00]), .sent, at: Double(handle - 0x40))
        }
        // A disconnect frees a place for the next link.
        feed.feed(.event, PacketFeed.disconnectionComplete(handle: 0x40, reason: 0x13), .received, at: 10)
        feed.feed(.acl, PacketFeed.att(handle: 0x45, [0x0A, 0x03, 0x00]), .sent, at: 11)
        let model = feed.finish()
        #expect(model.connections.map(\.handle) == [0x40, 0x41, 0x42, 0x45])
        #expect(model.droppedConnections == 2)
    }

    @Test("a capture that starts mid-connection gets an implicit connection; one still up at the end is open")
    func implicitAndOpen() {
        var feed = PacketFeed()
        // ATT Read Request handle 0x0003 on handle 0x0041 without any Connection Complete.
        feed.feed(.acl, PacketFeed.att(handle: 0x41, [0x0A, 0x03, 0x00]), .sent, at: 5)
        feed.feed(.acl, PacketFeed.att(handle: 0x41, [0x0B, 0x01]), .received, at: 5.1)
        let model = feed.finish()
        let c = model.connections.first
        #expect(c?.implicitStart == true)
        #expect(c?.isOpen == true)
        #expect(c?.end == nil)
        #expect(c?.transport == .le)
        #expect(c?.transactions.completed == 1)
    }

    @Test("failed attempts: a Connection Complete with an error status")
    func failedAttempt() {
        var feed = PacketFeed()
        feed.feed(.event, PacketFeed.leConnectionComplete(handle: 0, status: 0x3E), .received, at: 1)
        let model = feed.finish()
        #expect(model.connections.isEmpty)
        #expect(model.failedConnections.map(\.status.rawValue) == [0x3E])
    }

    /// LE Create Connection (0x200d): scan interval, window, initiator filter policy, peer type, peer, own type,
    /// interval min/max, latency, timeout, CE lengths.
    static func leCreateConnection(acceptList: Bool, peer: [UInt8]) -> [UInt8] {
        let p: [UInt8] = PacketFeed.le16(0x60) + PacketFeed.le16(0x30) + [acceptList ? 1 : 0, 0x00] + peer + [0x00]
            + PacketFeed.le16(24) + PacketFeed.le16(40) + PacketFeed.le16(0) + PacketFeed.le16(500) + PacketFeed.le16(0) + PacketFeed.le16(0)
        return [0x0D, 0x20, UInt8(p.count)] + p
    }

    @Test("an attempt to the accept list withdrawn by LE Create Connection Cancel is cancelled, without a peer")
    func cancelledAttempt() throws {
        var feed = PacketFeed()
        feed.feed(.command, Self.leCreateConnection(acceptList: true, peer: [0, 0, 0, 0, 0, 0]), .sent, at: 1)
        feed.feed(.command, [0x0E, 0x20, 0x00], .sent, at: 2)  // LE Create Connection Cancel
        // The controller completes the attempt with Unknown Connection Identifier (0x02) and a zero address.
        feed.feed(.event, PacketFeed.leConnectionComplete(handle: 0, peer: [0, 0, 0, 0, 0, 0], status: 0x02), .received, at: 2.01)
        let f = try #require(feed.finish().failedConnections.first)
        #expect(f.cancelledByHost)
        #expect(f.toAcceptList)
        #expect(f.peerAddress == nil)
    }

    @Test("a failed attempt names the peer the create command asked for; an earlier attempt's peer is not reused")
    func failedAttemptPeer() throws {
        var feed = PacketFeed()
        let peer: [UInt8] = [0x75, 0x19, 0x1A, 0xBF, 0xC0, 0x60]
        feed.feed(.command, Self.leCreateConnection(acceptList: false, peer: peer), .sent, at: 1)
        feed.feed(.event, PacketFeed.leConnectionComplete(handle: 0, peer: [0, 0, 0, 0, 0, 0], status: 0x3E), .received, at: 2)
        // A second failure without a create command in the capture: the zero address names nobody.
        feed.feed(.event, PacketFeed.leConnectionComplete(handle: 0, peer: [0, 0, 0, 0, 0, 0], status: 0x3E), .received, at: 3)
        let failed = feed.finish().failedConnections
        #expect(failed.map(\.peerAddress) == [BDAddr("60:C0:BF:1A:19:75"), nil])
        #expect(failed.map(\.cancelledByHost) == [false, false])
        #expect(failed.map(\.toAcceptList) == [false, false])
    }

    /// BR/EDR Create Connection (0x0405): address, packet types, page scan repetition mode, reserved, clock
    /// offset, allow role switch.
    static func createConnection(_ peer: [UInt8]) -> [UInt8] {
        let p: [UInt8] = peer + PacketFeed.le16(0xCC18) + [0x01, 0x00] + PacketFeed.le16(0) + [0x01]
        return [0x05, 0x04, UInt8(p.count)] + p
    }

    /// Connection Complete (0x03): status, handle, address, link type (1 ACL), encryption.
    static func connectionComplete(status: UInt8, handle: UInt16, peer: [UInt8]) -> [UInt8] {
        [0x03, 11, status] + PacketFeed.le16(handle) + peer + [0x01, 0x00]
    }

    @Test("an attempt runs from its create command: the link's connect time, a page timeout's duration")
    func attemptTiming() throws {
        var feed = PacketFeed()
        let lock: [UInt8] = [0x75, 0x19, 0x1A, 0xBF, 0xC0, 0x60]
        feed.feed(.command, Self.leCreateConnection(acceptList: false, peer: lock), .sent, at: 1)
        feed.feed(.event, PacketFeed.leConnectionComplete(handle: 0x40, peer: lock), .received, at: 1.25)
        let headset: [UInt8] = [0x66, 0xDB, 0x72, 0x6B, 0x18, 0x00], phone: [UInt8] = [1, 2, 3, 4, 5, 6]
        feed.feed(.command, Self.createConnection(headset), .sent, at: 2)
        // Meanwhile another device pages us: its link does not end our attempt.
        feed.feed(.event, Self.connectionComplete(status: 0, handle: 0x0C, peer: phone), .received, at: 3)
        feed.feed(.event, Self.connectionComplete(status: 0x04, handle: 0, peer: headset), .received, at: 7.12)
        let model = feed.finish()
        #expect(model.connections.map { $0.connectRequested?.timestamp.nanoseconds } == [1_000_000_000, nil])
        let f = try #require(model.failedConnections.first)
        #expect(f.status == .pageTimeout && f.peerAddress == BDAddr("00:18:6B:72:DB:66"))
        #expect(f.attemptDuration == .milliseconds(5120))
    }

    @Test("a Qualcomm controller's debug log (ACL handle 0x0edc from the controller) opens no implicit link")
    func controllerDebugLog() {
        var feed = PacketFeed()
        // `att` sets packet boundary 0b10: header 0x2EDC, as the controller's log arrives.
        feed.feed(.acl, PacketFeed.att(handle: 0x0EDC, [0x0A, 0x00, 0xF0]), .received, at: 1)
        feed.feed(.acl, PacketFeed.att(handle: 0x0EDC, [0x0A, 0x00, 0xF0]), .received, at: 2)
        let model = feed.finish()
        #expect(model.connections.isEmpty)
        #expect(model.controllerDebugLogPackets == 2)
    }

    @Test("Read Blob continues a read only at the offset where its value ended; Execute Write with 0x00 cancels")
    func longReadsAndQueuedWrites() throws {
        var feed = PacketFeed()
        feed.feed(.event, PacketFeed.leConnectionComplete(handle: 0x40), .received, at: 0)
        let part = [UInt8](repeating: 0x41, count: 22)  // a full PDU at the default MTU 23
        feed.feed(.acl, PacketFeed.att(handle: 0x40, [0x0A, 0x03, 0x00]), .sent, at: 1)              // Read 0x0003
        feed.feed(.acl, PacketFeed.att(handle: 0x40, [0x0B] + part), .received, at: 1.01)
        feed.feed(.acl, PacketFeed.att(handle: 0x40, [0x0C, 0x03, 0x00, 22, 0x00]), .sent, at: 1.02)  // Blob at 22
        feed.feed(.acl, PacketFeed.att(handle: 0x40, [0x0D, 0x42, 0x42]), .received, at: 1.03)
        // A Read Blob at offset 5 of another handle is a blob read of its own.
        feed.feed(.acl, PacketFeed.att(handle: 0x40, [0x0C, 0x05, 0x00, 5, 0x00]), .sent, at: 2)
        feed.feed(.acl, PacketFeed.att(handle: 0x40, [0x0D, 0x43]), .received, at: 2.01)
        // Two prepared writes to two attributes, then Execute Write Request 0x00: cancelled.
        feed.feed(.acl, PacketFeed.att(handle: 0x40, [0x16, 0x07, 0x00, 0x00, 0x00, 1, 2]), .sent, at: 3)
        feed.feed(.acl, PacketFeed.att(handle: 0x40, [0x17, 0x07, 0x00, 0x00, 0x00, 1, 2]), .received, at: 3.01)
        feed.feed(.acl, PacketFeed.att(handle: 0x40, [0x16, 0x09, 0x00, 0x00, 0x00, 3]), .sent, at: 3.02)
        feed.feed(.acl, PacketFeed.att(handle: 0x40, [0x17, 0x09, 0x00, 0x00, 0x00, 3]), .received, at: 3.03)
        feed.feed(.acl, PacketFeed.att(handle: 0x40, [0x18, 0x00]), .sent, at: 3.04)
        feed.feed(.acl, PacketFeed.att(handle: 0x40, [0x19]), .received, at: 3.05)
        let c = try #require(feed.finish().connections.first)
        let read = try #require(c.runs.first { $0.kind == .read })
        #expect(read.count == 1 && read.blobReads == 1 && read.bytes == 24)
        let blob = try #require(c.runs.first { $0.kind == .readBlob })
        #expect(blob.handle == 0x0005 && blob.count == 1 && blob.bytes == 1 && blob.blobReads == 0)
        let execute = c.events.compactMap { e -> String? in
            if case .executeWrite(let done, let prepared, let bytes, let handles) = e.kind { return "\(done) \(prepared) \(bytes) \(handles)" }
            return nil
        }
        #expect(execute == ["false 2 3 [7, 9]"])
        #expect(c.transactions.completed == 6)
    }

    @Test("HCI Reset closes the controller's links")
    func reset() {
        var feed = PacketFeed()
        feed.feed(.event, PacketFeed.leConnectionComplete(handle: 0x40), .received, at: 1)
        feed.feed(.command, [0x03, 0x0C, 0x00], .sent, at: 2)
        feed.feed(.event, [0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00], .received, at: 2.1)
        let model = feed.finish()
        #expect(model.connections.first?.isOpen == false)
        #expect(model.connections.first?.disconnectReason == nil)
    }

    @Test("ATT: responses pair with requests per bearer; an unanswered request times out after 30 s")
    func attPairing() {
        var feed = PacketFeed()
        feed.feed(.event, PacketFeed.leConnectionComplete(handle: 0x40), .received, at: 0)
        feed.feed(.acl, PacketFeed.att(handle: 0x40, [0x0A, 0x03, 0x00]), .sent, at: 1)     // Read Request
        feed.feed(.acl, PacketFeed.att(handle: 0x40, [0x01, 0x0A, 0x03, 0x00, 0x02]), .received, at: 1.05)  // Read Not Permitted
        feed.feed(.acl, PacketFeed.att(handle: 0x40, [0x12, 0x05, 0x00, 0x01]), .sent, at: 2)  // Write Request, never answered
        feed.feed(.acl, PacketFeed.att(handle: 0x40, [0x1B, 0x07, 0x00, 0x42]), .received, at: 40)  // notification
        feed.feed(.acl, PacketFeed.att(handle: 0x40, [0x0B, 0x01]), .received, at: 41)  // a response nobody asked for
        let model = feed.finish()
        let c = model.connections[0]
        #expect(c.transactions.errors == 1)
        #expect(c.transactions.timeouts == 1)
        #expect(c.transactions.unsolicitedResponses == 1)
        #expect(c.usage[0x0003]?.errors == 1)
        #expect(c.events.contains { if case .attError(.readRequest, 0x0003, .readNotPermitted) = $0.kind { return true }; return false })
    }

    @Test("a reconnection without discovery inherits the peer's GATT database (cached by the OS)")
    func inheritance() {
        var feed = PacketFeed()
        feed.feed(.event, PacketFeed.leConnectionComplete(handle: 0x40), .received, at: 0)
        // Read By Type 0x2803 over 0x0001-0xffff, response: declaration 0x0002 → value 0x0003, read|notify, 2a19.
        feed.feed(.acl, PacketFeed.att(handle: 0x40, [0x08, 0x01, 0x00, 0xFF, 0xFF, 0x03, 0x28]), .sent, at: 1)
        feed.feed(.acl, PacketFeed.att(handle: 0x40, [0x09, 0x07, 0x02, 0x00, 0x12, 0x03, 0x00, 0x19, 0x2A]), .received, at: 1.1)
        feed.feed(.event, PacketFeed.disconnectionComplete(handle: 0x40, reason: 0x13), .received, at: 2)
        feed.feed(.event, PacketFeed.leConnectionComplete(handle: 0x41), .received, at: 10)
        feed.feed(.acl, PacketFeed.att(handle: 0x41, [0x0A, 0x03, 0x00]), .sent, at: 11)
        feed.feed(.acl, PacketFeed.att(handle: 0x41, [0x0B, 0x55]), .received, at: 11.1)
        let model = feed.finish()
        #expect(model.connections.count == 2)
        #expect(model.connections[0].gatt.characteristics.count == 1)
        #expect(model.connections[1].gatt.inheritedFrom == 1)
        #expect(model.connections[1].gatt.name(of: 0x0003) == "Battery Level (2a19)")
    }
}

@Suite("activity run names")
struct ActivityKindNameTests {
    @Test("each kind names one and several operations")
    func names() {
        #expect(ActivityKind.writeCommand.singular == "write without response")
        #expect(ActivityKind.writeCommand.plural == "writes without response")
        #expect(ActivityKind.readByType.plural == "reads by type")
        #expect(ActivityKind.notification.plural == "notifications")
        #expect(ActivityKind.allCases.allSatisfy { $0.plural != $0.singular && $0.plural.hasPrefix($0.singular.prefix(4)) })
    }
}
