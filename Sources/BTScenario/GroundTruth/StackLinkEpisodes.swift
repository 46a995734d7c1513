import BTWire

/// Links as phone stacks really run them, beside the app's own: the phone's GATT server read by the peer
/// (ANCS-like), links waiting on a subscription at a relaxed interval, a bonded accessory's short encrypted OS
/// connections, an HID link whose interval the OS owns, and a request pending when the link is lost.
enum StackLinkEpisodes {
    /// ATT's transaction timeout (Core Vol 3 Part F §3.3.3): the stack drops the link this long after an
    /// unconfirmed indication.
    static let transactionTimeout = 30.0

    /// The peer, as GATT client, discovers the phone's whole database (every service, characteristic and
    /// descriptor), polls the phone's Battery Level, subscribes to the phone's Temperature Measurement
    /// indications and confirms the first ones; then one indication is never confirmed and the phone's stack
    /// drops the link 30 s later. Controls: the discovery and poll rules must not judge the peer's requests.
    /// Planted: att-timeout for the unconfirmed indication (the peer's fault, and said so).
    static func phoneServer(_ b: TruthBuilder) {
        let phone = TruthPeripheral(b, services: [.thermometer, .battery], extras: b.int(1...2))
        let peer = b.newPeer()
        let link = b.chance(50) ? b.connect(peer) : b.accept(peer)
        let att = ATTChannel(script: b.s, connection: link.connection, server: phone.server(), clientSide: .remote)
        if b.chance(50) { att.exchangeMTU(b.pick([185, 247, 517])) }
        let start = b.t
        let everything = att.discoverEverything()
        let discovered = b.t
        b.control("discover-all-services", connection: link.id, from: start, to: discovered,
                  "the peer (GATT client) discovered all \(everything.count) services of the phone's own database; the app's client did not")
        b.control("discover-all-characteristics", connection: link.id, from: start, to: discovered,
                  "the peer discovered every characteristic and descriptor of the phone's database")
        let level = phone.characteristic(TruthProfiles.batteryLevel).valueHandle
        let polls = PollEpisodes.Span()
        b.run(schedule: PollEpisodes.reads(b, att, level, PollEpisodes.regularTimes(b, start: b.elapsed + 500_000,
                                                                                    period: b.uniform(1...2),
                                                                                    count: b.int(6...9)), polls))
        b.control(PollEpisodes.rule, connection: link.id, handle: level, from: polls.first ?? start, to: polls.last ?? b.t,
                  "the peer polled the phone's own Battery Level \(polls.count) times (the peer's client, not the app's)")
        let measurement = phone.characteristic(TruthProfiles.temperatureMeasurement).valueHandle
        guard let cccd = everything.flatMap(\.characteristics).first(where: { $0.0.valueHandle == measurement })?.1
            .first(where: { $0.uuid == GATTUUID.cccd })
        else { return }
        b.wait(0.2...1)
        att.subscribe(cccd: cccd.handle, indications: true)
        for _ in 0..<b.int(1...3) {
            b.wait(1...3)
            att.indicate(handle: measurement, value: TruthProfiles.reading(b, TruthProfiles.temperatureMeasurement))
        }
        b.wait(1...3)
        let sent = b.t
        let sentAt = b.elapsed
        att.transmit(ATTPDU.indication(handle: measurement, value: TruthProfiles.reading(b, TruthProfiles.temperatureMeasurement)),
                     from: .local)
        b.s.advance(toElapsed: sentAt + TruthBuilder.micros(transactionTimeout + b.uniform(0...0.2)))
        b.s.disconnect(link.connection)
        b.plant("att-timeout", connection: link.id, handle: measurement, from: sent, to: b.t,
                "indication from the phone's own GATT server never confirmed by the peer; the phone's stack dropped the link \(Int((b.t - sent).rounded())) s later")
    }

    /// A link subscribed to heart-rate notifications, relaxed to 100–250 ms (latency 0–4) while it waits 45–90 s
    /// for the next one. Control: the peer ends the link while the subscription is still on — waiting, not
    /// lingering, and no fast interval. Planted: after a 40–60 s wait (control) a notification comes, the app
    /// turns the subscription off and keeps the idle link 45–90 s before it disconnects.
    static func subscribedIdle(_ b: TruthBuilder, planted: Bool) {
        guard let (link, att, m, cccd) = LinkEpisodes.subscribedHeartRate(b, notifications: 3...8) else { return }
        b.wait(0.2...1)
        // 100–250 ms: with latency 4 still well inside the 5 s supervision timeout.
        let relaxed = UInt16(b.int(80...200))
        let latency = UInt16(b.int(0...4))
        b.s.updateConnection(link.connection, parameters: ConnectionParameters(
            intervalMin: relaxed, intervalMax: relaxed, latency: latency, supervisionTimeout: TruthBuilder.supervisionTimeout))
        let waitFrom = b.t
        let parameters = "\(Double(relaxed) * 1.25) ms, latency \(latency)"
        if !planted {
            b.wait(45...90)
            b.s.peerDisconnects(link.connection)
            b.control("lingering-connection", connection: link.id, from: waitFrom, to: b.t,
                      "subscribed and waiting \(Int((b.t - waitFrom).rounded())) s for a notification at \(parameters), until the peer left")
            b.control("idle-fast-interval", connection: link.id, from: waitFrom, to: b.t,
                      "subscribed link waiting at a relaxed \(parameters)")
            return
        }
        b.wait(40...60)
        let event = b.t
        att.notify(handle: m.valueHandle, value: [SampleProfiles.heartRateFlags, UInt8(b.int(60...90))])
        b.wait(0.5...1)
        att.unsubscribe(cccd: cccd)
        let off = b.t
        b.wait(45...90)
        b.s.disconnect(link.connection)
        // The control ends 3 s before the notification, so a finding from the unsubscribe on cannot touch it (±2 s).
        b.control("lingering-connection", connection: link.id, from: waitFrom, to: event - 3,
                  "subscribed and waiting \(Int((event - waitFrom).rounded())) s for a notification at \(parameters)")
        b.plant("lingering-connection", connection: link.id, from: off, to: b.t,
                "link kept \(Int((b.t - off).rounded())) s idle after its only subscription was turned off")
        b.control("idle-fast-interval", connection: link.id, from: waitFrom, to: b.t,
                  "idle at a relaxed \(parameters)")
    }

    /// A bonded accessory the OS connects to in the background (LE Create Connection on the accept list) 3–5
    /// times in about a minute: each time the link is encrypted with the stored key before any ATT, carries no
    /// ATT at all and ends after 1–5 s. Not the app's doing: no connection rule may judge it.
    static func bondedReconnects(_ b: TruthBuilder) {
        let peer = b.newPeer()
        let ltk = b.s.rng.bytes(16)
        let random = b.s.rng.next()
        let ediv = UInt16(b.int(0...0xFFFF))
        var first: TruthBuilder.Link?
        let count = b.int(3...5)
        for i in 0..<count {
            if i > 0 { b.wait(5...12) }
            let link = b.connect(peer, acceptList: true)
            b.s.startEncryption(link.connection, ltk: ltk, random: random, ediv: ediv)
            b.wait(1...5)
            if b.chance(70) { b.s.peerDisconnects(link.connection) } else { b.s.disconnect(link.connection) }
            if first == nil { first = link }
        }
        guard let first else { return }
        let note = "\(count) OS connections to a bonded accessory (accept list), each encrypted before any ATT and carrying none"
        b.control("connection-churn", connection: first.id, from: first.up, to: b.t, note)
        b.control("lingering-connection", connection: first.id, from: first.up, to: b.t, note)
        b.control("idle-fast-interval", connection: first.id, from: first.up, to: b.t, note)
    }

    /// An HID mouse the OS connects to (accept list, encrypted) at the standard HID setting, 15 ms with
    /// latency 4: the OS's HID host discovers the HID service and turns input reports on, the mouse sends
    /// bursts of reports with 10–25 s of stillness between, then sleeps (disconnects). The OS owns this
    /// interval: idle-fast-interval must stay silent.
    static func hidLink(_ b: TruthBuilder) {
        let p = TruthPeripheral(peer: b.newPeer(), database: hidDatabase(b))
        let hidInterval: UInt16 = 12
        let hidLatency: UInt16 = 4
        let link = b.connect(p.peer, interval: hidInterval, latency: hidLatency, acceptList: true)
        b.s.startEncryption(link.connection, ltk: b.s.rng.bytes(16), random: b.s.rng.next(), ediv: UInt16(b.int(0...0xFFFF)))
        let att = ATTChannel(script: b.s, connection: link.connection, server: p.server(), clientSide: .local)
        guard let hid = att.discoverPrimaryServices(uuid: BluetoothUUID(uuid16: hidService)).first else { return }
        let characteristics = att.discoverCharacteristics(of: hid)
        guard let report = characteristics.first(where: { $0.uuid == BluetoothUUID(uuid16: hidReport) }),
              PollEpisodes.subscribe(att, report) != nil
        else { return }
        if let map = characteristics.first(where: { $0.uuid == BluetoothUUID(uuid16: hidReportMap) }) { _ = att.read(map.valueHandle) }
        func burst() {
            for _ in 0..<b.int(20...60) {
                b.wait(0.015...0.03)
                att.notify(handle: report.valueHandle, value: [0x00] + b.s.rng.bytes(3))
            }
        }
        for _ in 0..<b.int(2...3) {
            burst()
            let still = b.t
            b.wait(10...25)
            b.control("idle-fast-interval", connection: link.id, from: still, to: b.t,
                      "HID link at 15 ms, latency 4 (the OS's standard HID setting) still for \(Int((b.t - still).rounded())) s")
        }
        burst()
        b.wait(0.5...2)
        b.s.peerDisconnects(link.connection)
    }

    static let hidService: UInt16 = 0x1812
    static let hidInformation: UInt16 = 0x2A4A
    static let hidReportMap: UInt16 = 0x2A4B
    static let hidControlPoint: UInt16 = 0x2A4C
    static let hidReport: UInt16 = 0x2A4D
    static let hidProtocolMode: UInt16 = 0x2A4E
    /// A boot-compatible mouse report map (Usage Page Generic Desktop, Usage Mouse, …), abridged.
    static let mouseReportMap: [UInt8] = [0x05, 0x01, 0x09, 0x02, 0xA1, 0x01, 0x09, 0x01, 0xA1, 0x00, 0x05, 0x09, 0x19, 0x01,
                                          0x29, 0x03, 0x15, 0x00, 0x25, 0x01, 0x95, 0x03, 0x75, 0x01, 0x81, 0x02, 0xC0, 0xC0]

    /// GAP, HID (Information, Report Map, an input Report, Protocol Mode, Control Point), Battery and sometimes
    /// Device Information.
    static func hidDatabase(_ b: TruthBuilder) -> GATTDatabase {
        var definitions = [TruthProfiles.gap(b, name: "GT Mouse"),
                           GATTServiceDefinition(hidService, [
                               GATTCharacteristicDefinition(hidInformation, .read, value: [0x11, 0x01, 0x00, 0x02]),
                               GATTCharacteristicDefinition(hidReportMap, .read, value: mouseReportMap),
                               GATTCharacteristicDefinition(hidReport, [.read, .notify], value: [0, 0, 0, 0]),
                               GATTCharacteristicDefinition(hidProtocolMode, [.read, .writeWithoutResponse], value: [0x01]),
                               GATTCharacteristicDefinition(hidControlPoint, .writeWithoutResponse),
                           ]),
                           TruthProfiles.definition(.battery, b)]
        if b.chance(50) { definitions.append(TruthProfiles.definition(.deviceInformation, b)) }
        return GATTDatabase(definitions)
    }

    /// The link is lost (Disconnection Complete, reason 0x08 connection timeout) 1–4 s after a Write Request the
    /// peer never answered. Planted: att-timeout (a request pending when the link was lost). Control: the
    /// request was answered before the link was lost.
    static func supervisionTimeout(_ b: TruthBuilder, planted: Bool) {
        let p = TruthPeripheral(b, services: [.vendor], extras: b.int(0...2))
        let link = b.connect(p.peer)
        let att = b.client(link, p.server())
        guard let vendor = att.find(.vendor) else { return }
        _ = att.discoverCharacteristics(of: vendor)
        let config = p.characteristic(TruthProfiles.vendorConfig).valueHandle
        b.wait(0.2...1)
        _ = att.read(config)
        b.wait(0.5...3)
        let sent = b.t
        let request = ATTPDU.writeRequest(handle: config, value: [0x02, UInt8(b.int(0...255)), 0x00])
        if planted {
            att.sendUnanswered(request)
        } else {
            _ = att.exchange(request)
        }
        b.wait(1...4)
        b.s.peerDisconnects(link.connection, reason: .connectionTimeout)
        if planted {
            b.plant("att-timeout", connection: link.id, handle: config, from: sent, to: b.t,
                    "Write Request still unanswered when the link was lost by supervision timeout (0x08) \(Int((b.t - sent).rounded())) s later")
        } else {
            b.control("att-timeout", connection: link.id, handle: config, from: sent, to: b.t,
                      "Write Request answered; the link was lost by supervision timeout (0x08) afterwards with nothing pending")
        }
    }
}

extension TruthPeripheral {
    /// A peripheral with a database of its own making (not one of `TruthProfiles`' layouts).
    init(peer: PeerAddress, database: GATTDatabase) {
        self.peer = peer
        self.database = database
    }
}
