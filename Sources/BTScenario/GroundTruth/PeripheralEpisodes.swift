import BTWire

/// advertising-after-connect (BTL013): the phone advertises as a peripheral and a central connects.
enum PeripheralEpisodes {
    /// Legacy advertising; a central connects (the controller stops advertising), reads and subscribes, the phone
    /// notifies for 8–20 s and the central leaves. Planted: the app turns advertising back on right after the
    /// connection. Control: it does not.
    static func advertising(_ b: TruthBuilder, planted: Bool) {
        let phone = TruthPeripheral(b, services: [.vendor], extras: b.int(0...2))
        let central = b.newPeer()
        let interval = HCIUnits.slots(microseconds: TruthBuilder.micros(b.uniform(0.1...0.5)))
        let data = AdvertisingData([.flags(AdvertisingData.generalDiscoverableLEOnly),
                                    .uuid128([TruthProfiles.vendorService], complete: true)])
        b.s.startLegacyAdvertising(intervalMin: interval, intervalMax: interval, data: data,
                                   scanResponse: AdvertisingData([.completeName("GT phone")]))
        b.wait(1...4)
        let link = b.accept(central)
        var resumed: Double?
        if planted {
            b.wait(0.1...0.5)
            resumed = b.t
            b.s.setAdvertising(enabled: true)
        }
        let server = phone.server()
        let att = ATTChannel(script: b.s, connection: link.connection, server: server, clientSide: .remote)
        b.wait(0.05...0.2)
        guard let vendor = att.find(.vendor),
              let status = att.discoverCharacteristics(of: vendor).first(where: { $0.uuid == TruthProfiles.vendorStatus }),
              PollEpisodes.subscribe(att, status) != nil
        else { return }
        let until = b.elapsed + TruthBuilder.micros(b.uniform(8...20))
        while b.elapsed < until {
            b.wait(1...3)
            att.notify(handle: status.valueHandle, value: b.s.rng.bytes(2))
        }
        b.wait(0.2...1)
        b.s.peerDisconnects(link.connection)
        let down = b.t
        if let resumed {
            b.wait(0.5...2)
            b.s.setAdvertising(enabled: false)
            b.plant("advertising-after-connect", connection: link.id, from: resumed, to: down,
                    "advertising turned back on \(Int(((resumed - link.up) * 1000).rounded())) ms after a central connected, on for the whole \(Int((down - link.up).rounded())) s connection")
        } else {
            b.control("advertising-after-connect", connection: link.id, from: link.up, to: down,
                      "legacy advertising stopped by the connection and not turned back on")
        }
    }
}
