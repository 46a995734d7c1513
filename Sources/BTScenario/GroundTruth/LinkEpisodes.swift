import BTWire

/// lingering-connection (BTL006), idle-fast-interval (BTL011), connection-churn (BTL009), att-timeout (BTL010)
/// and invalid-operation (BTL012).
enum LinkEpisodes {
    /// Connects, reads something of Device Information (found by UUID), and returns the link, channel and time of
    /// the last ATT PDU.
    static func shortSession(_ b: TruthBuilder, _ p: TruthPeripheral, interval: UInt16? = nil)
        -> (TruthBuilder.Link, ATTChannel)? {
        let link = b.connect(p.peer, interval: interval)
        let att = b.client(link, p.server())
        guard let info = att.find(.deviceInformation) else { return nil }
        _ = att.discoverCharacteristics(of: info)
        b.wait(0.1...0.4)
        DiscoveryEpisodes.use(att, p, p.service(.deviceInformation))
        return (link, att)
    }

    /// Idle before the disconnect: 45–90 s (planted) or 5–20 s (control).
    static func lingeringIdle(_ b: TruthBuilder, planted: Bool) {
        let p = TruthPeripheral(b, services: [.deviceInformation], extras: b.int(0...2))
        guard let (link, _) = shortSession(b, p) else { return }
        let last = b.t
        b.wait(planted ? 45...90 : 5...20)
        b.s.disconnect(link.connection)
        if planted {
            b.plant("lingering-connection", connection: link.id, from: last, to: b.t,
                    "link kept \(Int((b.t - last).rounded())) s without ATT traffic before the disconnect")
        } else {
            b.control("lingering-connection", connection: link.id, from: last, to: b.t,
                      "\(Int((b.t - last).rounded())) s without ATT traffic before the disconnect")
        }
    }

    /// A heart-rate sensor connected, its measurement found and subscribed to, then `notifications` of them about a
    /// second apart: the start of the subscription episodes. Nil when the database lacks the measurement.
    static func subscribedHeartRate(_ b: TruthBuilder, notifications: ClosedRange<Int>)
        -> (link: TruthBuilder.Link, att: ATTChannel, measurement: DiscoveredCharacteristic, cccd: UInt16)? {
        let p = TruthPeripheral(b, services: [.heartRate], extras: b.int(0...2))
        let link = b.connect(p.peer)
        let att = b.client(link, p.server())
        guard let hr = att.find(.heartRate),
              let m = att.discoverCharacteristics(of: hr).first(where: { $0.uuid == TruthProfiles.heartRateMeasurement }),
              let cccd = PollEpisodes.subscribe(att, m)
        else { return nil }
        for _ in 0..<b.int(notifications) {
            b.wait(0.9...1.1)
            att.notify(handle: m.valueHandle, value: [SampleProfiles.heartRateFlags, UInt8(b.int(60...90))])
        }
        return (link, att, m, cccd)
    }

    /// Subscribed, notified, unsubscribed, then kept 14–20 s (planted) or 1–6 s (control).
    static func lingeringAfterUnsubscribe(_ b: TruthBuilder, planted: Bool) {
        guard let (link, att, _, cccd) = subscribedHeartRate(b, notifications: 5...20) else { return }
        b.wait(0.1...0.5)
        att.unsubscribe(cccd: cccd)
        let off = b.t
        b.wait(planted ? 14...20 : 1...6)
        b.s.disconnect(link.connection)
        if planted {
            b.plant("lingering-connection", connection: link.id, from: off, to: b.t,
                    "link kept \(Int((b.t - off).rounded())) s after its only subscription was turned off")
        } else {
            b.control("lingering-connection", connection: link.id, from: off, to: b.t,
                      "disconnected \(Int((b.t - off).rounded())) s after turning the subscription off")
        }
    }

    /// A 7.5 or 10 ms link idle for 10–25 s (planted), or one relaxed to 30–50 ms before the same idle (control).
    static func idleFast(_ b: TruthBuilder, planted: Bool) {
        let p = TruthPeripheral(b, services: [.deviceInformation, .battery], extras: b.int(0...2))
        let fast = UInt16(b.pick([6, 8]))
        guard let (link, att) = shortSession(b, p, interval: fast) else { return }
        var from = b.t
        if !planted {
            b.wait(0.3...2)
            let relaxed = b.relaxedInterval()
            b.s.updateConnection(link.connection, parameters: ConnectionParameters(
                intervalMin: relaxed, intervalMax: relaxed, supervisionTimeout: TruthBuilder.supervisionTimeout))
            from = b.t
        }
        b.wait(10...25)
        let to = b.t
        if let battery = att.find(.battery), let level = att.discoverCharacteristics(of: battery).first {
            _ = att.read(level.valueHandle)
        }
        b.hangUp(link)
        if planted {
            b.plant("idle-fast-interval", connection: link.id, from: from, to: to,
                    "\(Double(fast) * 1.25) ms interval kept through \(Int((to - from).rounded())) s without ATT traffic")
        } else {
            b.control("idle-fast-interval", connection: link.id, from: from, to: to,
                      "connected at \(Double(fast) * 1.25) ms, relaxed to 30–50 ms before \(Int((to - from).rounded())) s of idle")
        }
    }

    /// 3–5 short connections to one peer within about a minute (planted); sometimes failed attempts to an absent
    /// peer (planted, once per capture) and an attempt the host cancels (control).
    static func churn(_ b: TruthBuilder) {
        let p = TruthPeripheral(b, services: [.battery], extras: b.int(0...2))
        let count = b.int(3...5)
        var links: [TruthBuilder.Link] = []
        var level: UInt16 = 0
        for i in 0..<count {
            if i > 0 { b.wait(3...12) }
            let link = b.connect(p.peer)
            let att = ATTChannel(script: b.s, connection: link.connection, server: p.server(), clientSide: .local)
            if i == 0 {
                guard let battery = att.find(.battery),
                      let c = att.discoverCharacteristics(of: battery).first(where: { $0.uuid == TruthProfiles.batteryLevel })
                else { return }
                level = c.valueHandle
            }
            _ = att.read(level)
            b.hangUp(link)
            links.append(link)
        }
        b.plant("connection-churn", connection: links[0].id, from: links[0].up, to: b.t,
                "\(count) connections to one peer in \(Int((b.t - links[0].up).rounded())) s, each for one battery read")
        if b.chance(60) {
            b.wait(2...6)
            let absent = b.newPeer()
            if b.chance(50) {
                let start = b.t
                b.cancelledAttempt(to: absent)
                b.control("connection-churn", connection: nil, from: start, to: b.t,
                          "connection attempt the host cancelled (Unknown Connection Identifier)")
                b.wait(4...8)
            }
            if !b.failuresPlanted {
                b.failuresPlanted = true
                let start = b.t
                let attempts = b.int(1...2)
                for k in 0..<attempts {
                    if k > 0 { b.wait(1...3) }
                    b.failedAttempt(to: absent)
                }
                b.plant("connection-churn", connection: nil, from: start, to: b.t,
                        "\(attempts) connection attempt(s) to an absent peer failed (0x3E)")
            }
        }
    }

    /// Three connections to one peer, each start 80–100 s after the previous: never three within 120 s.
    static func spreadReconnections(_ b: TruthBuilder) {
        let p = TruthPeripheral(b, services: [.deviceInformation], extras: b.int(0...2))
        var first: TruthBuilder.Link?
        var previousStart = 0.0
        for i in 0..<3 {
            if i > 0 { b.wait(max(0, previousStart + b.uniform(80...100) - b.t)) }
            let link = b.connect(p.peer)
            previousStart = link.up
            let att = ATTChannel(script: b.s, connection: link.connection, server: p.server(), clientSide: .local)
            if let c = p.readOnce(in: p.service(.deviceInformation)) { _ = att.read(c.valueHandle) }
            b.hangUp(link)
            if first == nil { first = link }
        }
        if let first {
            b.control("connection-churn", connection: first.id, from: first.up, to: b.t,
                      "3 connections to one peer, 80–100 s apart (none three within 120 s)")
        }
    }

    /// A Write Request the peer never answers. Silent: nothing else happens until the disconnect 32–45 s later, so
    /// the link also lingers. Otherwise the peer keeps notifying meanwhile and only the request hangs. Control: a
    /// Write Request answered late, after 5–20 s.
    static func attTimeout(_ b: TruthBuilder, variant: Int) {
        let p = TruthPeripheral(b, services: [.vendor], extras: b.int(0...2))
        let link = b.connect(p.peer)
        let att = b.client(link, p.server())
        guard let vendor = att.find(.vendor) else { return }
        let characteristics = att.discoverCharacteristics(of: vendor)
        let config = p.characteristic(TruthProfiles.vendorConfig).valueHandle
        let request = ATTPDU.writeRequest(handle: config, value: [0x02, UInt8(b.int(0...255)), 0x00])
        b.wait(0.2...1)
        _ = att.read(config)  // the service is used whatever happens to the write
        switch variant {
        case 0:
            b.wait(0.5...3)
            let sent = b.t
            att.sendUnanswered(request)
            b.wait(32...45)
            b.s.disconnect(link.connection)
            b.plant("att-timeout", connection: link.id, handle: config, from: sent, to: b.t,
                    "Write Request never answered; the link dropped \(Int((b.t - sent).rounded())) s later")
            b.plant("lingering-connection", connection: link.id, from: sent, to: b.t,
                    "no ATT traffic for \(Int((b.t - sent).rounded())) s while the request hung, until the disconnect")
        case 1:
            guard let status = characteristics.first(where: { $0.uuid == TruthProfiles.vendorStatus }),
                  PollEpisodes.subscribe(att, status) != nil
            else { return }
            b.wait(0.5...3)
            let sent = b.t
            att.sendUnanswered(request)
            let until = b.elapsed + TruthBuilder.micros(b.uniform(32...38))
            while b.elapsed < until - 2_000_000 {
                b.wait(1.5...4)
                att.notify(handle: status.valueHandle, value: b.s.rng.bytes(2))
            }
            b.s.advance(toElapsed: until)
            b.s.disconnect(link.connection)
            b.plant("att-timeout", connection: link.id, handle: config, from: sent, to: b.t,
                    "Write Request never answered while the peer kept notifying; the link dropped \(Int((b.t - sent).rounded())) s later")
        default:
            b.wait(0.5...3)
            let sent = b.t
            att.transmit(request, from: .local)
            b.wait(5...20)
            if let response = att.server.respond(to: request) { att.transmit(response, from: .remote) }
            let answered = b.t
            b.hangUp(link)
            b.control("att-timeout", connection: link.id, handle: config, from: sent, to: answered,
                      "Write Request answered late, after \(Int((answered - sent).rounded())) s")
        }
    }

    /// Operations the characteristic's properties rule out (planted) beside errors that are not about that
    /// (control: Insufficient Authentication) and operations that are allowed (control).
    static func invalidOperation(_ b: TruthBuilder) {
        let p = TruthPeripheral(b, services: [.vendor], extras: b.int(0...2))
        let link = b.connect(p.peer)
        let att = b.client(link, p.server())
        guard let vendor = att.find(.vendor) else { return }
        _ = att.discoverCharacteristics(of: vendor)
        let command = p.characteristic(TruthProfiles.vendorCommand).valueHandle
        let status = p.characteristic(TruthProfiles.vendorStatus).valueHandle
        let config = p.characteristic(TruthProfiles.vendorConfig).valueHandle
        let secret = p.characteristic(TruthProfiles.vendorSecret).valueHandle
        let readCommand = b.chance(50)
        var steps: [() -> Void] = []
        steps.append {
            b.wait(0.2...2)
            let at = b.t
            if readCommand {
                _ = att.read(command)
                b.plant("invalid-operation", connection: link.id, handle: command, from: at, to: b.t,
                        "Read Request to a write-only characteristic: Read Not Permitted")
            } else {
                att.write(status, value: [0x01, 0x00])
                b.plant("invalid-operation", connection: link.id, handle: status, from: at, to: b.t,
                        "Write Request to a read/notify characteristic: Write Not Permitted")
            }
        }
        steps.append {
            b.wait(0.2...2)
            let at = b.t
            _ = att.read(secret)
            b.control("invalid-operation", connection: link.id, handle: secret, from: at, to: b.t,
                      "read of a characteristic that needs encryption: Insufficient Authentication, not a forbidden operation")
        }
        steps.append {
            b.wait(0.2...2)
            let at = b.t
            att.write(config, value: [0x01, 0x1E, 0x00])
            _ = att.read(config)
            b.control("invalid-operation", connection: link.id, handle: config, from: at, to: b.t,
                      "write and read of a read/write characteristic")
        }
        if !readCommand {
            steps.append {
                b.wait(0.2...2)
                let at = b.t
                att.write(command, value: [0x07])
                b.control("invalid-operation", connection: link.id, handle: command, from: at, to: b.t,
                          "write of a write-only characteristic")
            }
        }
        for step in b.shuffled(steps) { step() }
        b.hangUp(link)
    }

    /// A 7.5 or 10 ms link kept busy: the peer notifies every 0.5–2 s for 10–25 s, then unsubscribe and disconnect
    /// (control: a fast interval that is used).
    static func busyFast(_ b: TruthBuilder) {
        let p = TruthPeripheral(b, services: [.heartRate], extras: b.int(0...2))
        let fast = UInt16(b.pick([6, 8]))
        let link = b.connect(p.peer, interval: fast)
        let att = b.client(link, p.server())
        guard let hr = att.find(.heartRate),
              let m = att.discoverCharacteristics(of: hr).first(where: { $0.uuid == TruthProfiles.heartRateMeasurement }),
              let cccd = PollEpisodes.subscribe(att, m)
        else { return }
        let start = b.t
        let until = b.elapsed + TruthBuilder.micros(b.uniform(10...25))
        while b.elapsed < until {
            b.wait(0.5...2)
            att.notify(handle: m.valueHandle, value: [SampleProfiles.heartRateFlags, UInt8(b.int(60...90))])
        }
        att.unsubscribe(cccd: cccd)
        b.hangUp(link)
        b.control("idle-fast-interval", connection: link.id, from: start, to: b.t,
                  "\(Double(fast) * 1.25) ms interval with notifications every 0.5–2 s: never idle")
    }
}
