import BTWire

/// discover-all-services (BTL003), discover-all-characteristics (BTL004) and redundant-discovery (BTL008).
enum DiscoveryEpisodes {
    /// Uses a service once: reads one of its characteristics (a plain readable one when there is one).
    static func use(_ att: ATTChannel, _ p: TruthPeripheral, _ service: GATTServiceLayout) {
        if let c = p.readOnce(in: service) ?? p.database.characteristics.first(where: {
            $0.valueHandle > service.startHandle && $0.valueHandle <= service.endHandle && $0.properties.contains(.read)
        }) {
            _ = att.read(c.valueHandle)
        }
    }

    /// Discovers every primary service over the whole range, then uses some (planted: at least one app service
    /// left unused) or all of them (control). Characteristics are discovered only for the services used.
    static func allServices(_ b: TruthBuilder, leaveUnused: Bool) {
        let p = TruthPeripheral(b, services: [.battery, .deviceInformation], extras: b.int(1...3))
        let link = b.connect(p.peer)
        let att = b.client(link, p.server())
        let start = b.t
        let found = att.discoverAllPrimaryServices()
        let end = b.t
        let app = p.appServices
        let used = leaveUnused ? Array(b.shuffled(app).prefix(b.int(1...app.count - 1))) : app
        let characteristicsStart = b.t
        for s in app where used.contains(where: { $0.startHandle == s.startHandle }) {
            _ = att.discoverCharacteristics(of: DiscoveredService(uuid: s.uuid, startHandle: s.startHandle, endHandle: s.endHandle))
            b.wait(0.05...0.4)
            use(att, p, s)
        }
        let characteristicsEnd = b.t
        let names = "\(found.count) services, \(app.count) of them the app's"
        if leaveUnused {
            b.plant("discover-all-services", connection: link.id, from: start, to: end,
                    "all primary services discovered over 0x0001–0xFFFF (\(names)); \(app.count - used.count) app service(s) never used")
        } else {
            b.control("discover-all-services", connection: link.id, from: start, to: end,
                      "all primary services discovered over 0x0001–0xFFFF (\(names)); every app service used afterwards")
        }
        b.control("discover-all-characteristics", connection: link.id, from: characteristicsStart, to: characteristicsEnd,
                  "characteristics discovered only of the \(used.count) service(s) used")
        b.hangUp(link)
    }

    /// Characteristic discovery of services found by UUID. Planted: characteristics of services never used, or
    /// descriptors of characteristics never used. Control: only what is used.
    static func characteristics(_ b: TruthBuilder, planted: Bool) {
        let p = TruthPeripheral(b, services: [.environmental, .battery, .deviceInformation, .vendor], extras: b.int(0...2))
        let link = b.connect(p.peer)
        let att = b.client(link, p.server())
        let servicesStart = b.t
        let descriptorsOfUnused = planted && b.chance(40)
        let order = descriptorsOfUnused ? [TruthProfiles.Service.environmental]
            : b.shuffled([TruthProfiles.Service.environmental, .battery, .deviceInformation, .vendor])
        let count = descriptorsOfUnused ? 1 : planted ? b.int(2...3) : b.int(1...2)
        let found = order.prefix(count).compactMap { att.find($0) }
        b.control("discover-all-services", connection: link.id, from: servicesStart, to: b.t,
                  "\(found.count) service(s) discovered by UUID (Find By Type Value)")
        let start = b.t
        var note = ""
        if descriptorsOfUnused {
            // One service, all its characteristics' descriptors discovered, only one plain characteristic used.
            guard let env = found.first else { return }
            let characteristics = att.discoverCharacteristics(of: env)
            for c in characteristics { _ = att.discoverDescriptors(of: c) }
            let end = b.t
            b.wait(0.1...0.5)
            _ = att.read(p.characteristic(TruthProfiles.pressure).valueHandle)
            note = "descriptors of Temperature and Humidity discovered; only Pressure is read"
            b.plant("discover-all-characteristics", connection: link.id, from: start, to: end, note)
        } else {
            var discovered: [(DiscoveredService, [DiscoveredCharacteristic])] = []
            for s in found { discovered.append((s, att.discoverCharacteristics(of: s))) }
            // Descriptors only of a characteristic that is then subscribed to.
            var subscribed: (DiscoveredCharacteristic, UInt16)?
            if let (_, cs) = discovered.first, let n = cs.first(where: { !$0.properties.isDisjoint(with: [.notify]) }),
               let cccd = PollEpisodes.subscribe(att, n) {
                subscribed = (n, cccd)
            }
            let end = b.t
            let used = planted ? 1 : discovered.count
            for (i, (s, _)) in discovered.enumerated() where i < used {
                if let (n, _) = subscribed, i == 0, n.valueHandle > s.startHandle, n.valueHandle <= s.endHandle {
                    continue  // used by its notifications
                }
                guard let layout = p.database.services.first(where: { $0.startHandle == s.startHandle }) else { continue }
                b.wait(0.1...0.5)
                use(att, p, layout)
            }
            if let (n, cccd) = subscribed {
                for _ in 0..<b.int(2...4) {
                    b.wait(0.5...1.5)
                    att.notify(handle: n.valueHandle, value: TruthProfiles.reading(b, n.uuid))
                }
                att.unsubscribe(cccd: cccd)
            }
            if planted {
                b.plant("discover-all-characteristics", connection: link.id, from: start, to: end,
                        "characteristics of \(discovered.count) services discovered; only 1 used")
            } else {
                b.control("discover-all-characteristics", connection: link.id, from: start, to: end,
                          "characteristics of \(discovered.count) service(s) discovered, every one used\(subscribed != nil ? "; descriptors only of the subscribed characteristic" : "")")
            }
        }
        b.hangUp(link)
    }

    /// Two connections to one peer, both running service discovery (by UUID): the second is redundant.
    static func redundant(_ b: TruthBuilder) {
        let p = TruthPeripheral(b, services: [.battery, .deviceInformation], extras: b.int(0...2))
        let service = b.pick([TruthProfiles.Service.battery, .deviceInformation])
        var links: [(TruthBuilder.Link, Double, Double, Double)] = []
        for round in 0..<2 {
            if round == 1 { b.wait(2...25) }
            let link = b.connect(p.peer)
            let att = b.client(link, p.server())
            let start = b.t
            guard let s = att.find(service) else { return }
            _ = att.discoverCharacteristics(of: s)
            let end = b.t
            b.wait(0.1...0.6)
            use(att, p, p.service(service))
            b.hangUp(link)
            links.append((link, start, end, b.t))
        }
        let (second, start, end, _) = links[1]
        b.plant("redundant-discovery", connection: second.id, from: start, to: end,
                "connection \(second.id) discovers the same service again although connection \(links[0].0.id) did")
        b.control("reconnect-by-scan", connection: second.id, from: links[0].3, to: second.up, "reconnected directly, no scan")
    }
}
