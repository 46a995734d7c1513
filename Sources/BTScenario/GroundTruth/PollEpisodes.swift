import BTWire

/// poll-instead-of-notify (BTL005): regular Read Requests of values that can notify, with the characteristic's
/// properties learned in the same connection, an earlier one or a later one to the same peer; and the fine cases
/// beside them (a read-only value polled, two reads, irregular reads).
enum PollEpisodes {
    static let rule = "poll-instead-of-notify"
    /// Regular polls are jittered by at most this share of the period (coefficient of variation ≈ 0.02).
    static let jitter = 0.03

    /// Reads of `handle` at `period` from `start` (microseconds since the script began), `count` of them.
    static func regularTimes(_ b: TruthBuilder, start: Int64, period: Double, count: Int) -> [Int64] {
        (0..<count).map { k in
            start + TruthBuilder.micros(Double(k) * period + b.uniform(-jitter * period...jitter * period))
        }
    }

    /// Read times whose gaps alternate short and long, so the coefficient of variation of the gaps is at least
    /// 0.8 overall and no three reads in a row are evenly spaced.
    static func irregularTimes(_ b: TruthBuilder, start: Int64, count: Int) -> [Int64] {
        while true {
            var gaps: [Double] = []
            var short = b.chance(50)
            for _ in 1..<count {
                gaps.append(short ? b.uniform(0.3...0.9) : b.uniform(9...18))
                short.toggle()
            }
            guard variation(gaps) >= 0.85 else { continue }
            var t = start
            var times = [t]
            for g in gaps {
                t += TruthBuilder.micros(g)
                times.append(t)
            }
            return times
        }
    }

    /// Population coefficient of variation, as the tracker computes it.
    static func variation(_ gaps: [Double]) -> Double {
        let mean = gaps.reduce(0, +) / Double(gaps.count)
        let variance = gaps.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(gaps.count)
        return variance.squareRoot() / mean
    }

    /// The times an action ran (Read Requests sent).
    final class Span {
        private(set) var times: [Double] = []
        var first: Double? { times.first }
        var last: Double? { times.last }
        var count: Int { times.count }
        func mark(_ t: Double) { times.append(t) }

        /// The coefficient of variation of the gaps between the requests as the capture has them.
        var variation: Double {
            guard times.count > 2 else { return 0 }
            return PollEpisodes.variation(zip(times.dropFirst(), times).map { $0 - $1 })
        }

        /// " (gaps' coefficient of variation 0.03)", for notes.
        var variationText: String {
            let hundredths = Int((variation * 100).rounded())
            return " (gaps' coefficient of variation \(hundredths / 100).\(hundredths % 100 < 10 ? "0" : "")\(hundredths % 100))"
        }
    }

    /// Plants a regular poll; the capture's own timing must keep it clearly regular (CV ≤ 0.2, the rule's limit
    /// being 0.35).
    static func plantPoll(_ b: TruthBuilder, _ connection: Int, _ handle: UInt16, _ span: Span, _ note: String) {
        guard let first = span.first, let last = span.last else { return }
        assert(span.count >= 5 && span.variation <= 0.2, "ground truth: poll of \(handle) not clearly regular")
        b.plant(rule, connection: connection, handle: handle, from: first, to: last, note + span.variationText)
    }

    /// A schedule of reads of `handle` at `times`, each marking `span`.
    static func reads(_ b: TruthBuilder, _ att: ATTChannel, _ handle: UInt16, _ times: [Int64], _ span: Span)
        -> [(at: Int64, action: () -> Void)] {
        times.map { at in
            (at, {
                span.mark(b.t)
                if b.chance(50), let type = att.server.database.attribute(handle)?.type {
                    att.server.setValue(TruthProfiles.reading(b, type), at: handle)
                }
                _ = att.read(handle)
            })
        }
    }

    /// Subscribes to `characteristic` after discovering its descriptors; returns the CCCD.
    static func subscribe(_ att: ATTChannel, _ characteristic: DiscoveredCharacteristic, indications: Bool = false) -> UInt16? {
        guard let cccd = att.discoverDescriptors(of: characteristic).first(where: { $0.uuid == GATTUUID.cccd }) else { return nil }
        att.subscribe(cccd: cccd.handle, indications: indications)
        return cccd.handle
    }

    /// Two or three notifiable values polled interleaved in one connection that discovered them, beside
    /// notifications of another characteristic and writes; sometimes a read-only value polled too (a control).
    static func interleaved(_ b: TruthBuilder) {
        let p = TruthPeripheral(b, services: [.environmental, .battery, .vendor], extras: b.int(0...2))
        let link = b.connect(p.peer)
        let att = b.client(link, p.server())
        let discoveryStart = b.t
        guard let env = att.find(.environmental) else { return }
        _ = att.discoverCharacteristics(of: env)
        let battery = att.find(.battery)
        let batteryCharacteristics = battery.map { att.discoverCharacteristics(of: $0) } ?? []
        let vendor = b.chance(60) ? att.find(.vendor) : nil
        _ = vendor.map { att.discoverCharacteristics(of: $0) }
        b.control("discover-all-services", connection: link.id, from: discoveryStart, to: b.t,
                  "services discovered by UUID (Find By Type Value), each of them used")
        let level = batteryCharacteristics.first { $0.uuid == TruthProfiles.batteryLevel }
        var notifying = false
        var polled = [TruthProfiles.temperature, TruthProfiles.humidity].map { p.characteristic($0).valueHandle }
        if let level, b.chance(50) {
            notifying = subscribe(att, level) != nil
        } else if let level {
            polled.append(level.valueHandle)
        }
        let readOnly = b.chance(60) ? p.characteristic(TruthProfiles.pressure).valueHandle : nil
        let period = b.uniform(2...12)
        let count = b.chance(25) ? b.int(20...200) : b.int(20...60)
        let start = b.elapsed + TruthBuilder.micros(b.uniform(0.5...2))
        var schedule: [(at: Int64, action: () -> Void)] = []
        var spans: [(UInt16, Span)] = []
        for (i, handle) in b.shuffled(polled).enumerated() {
            let span = Span()
            let phase = period * Double(i) / Double(polled.count)
            schedule += reads(b, att, handle, regularTimes(b, start: start + TruthBuilder.micros(phase), period: period, count: count), span)
            spans.append((handle, span))
        }
        var readOnlySpan: Span?
        if let readOnly {
            let span = Span()
            let own = b.uniform(2...10)
            schedule += reads(b, att, readOnly, regularTimes(b, start: start + TruthBuilder.micros(period * 0.27), period: own,
                                                             count: max(3, Int(period * Double(count) / own) - 1)), span)
            readOnlySpan = span
        }
        let end = start + TruthBuilder.micros(period * Double(count - 1))
        if notifying, let level {
            var t = start + TruthBuilder.micros(b.uniform(0.2...2))
            while t < end {
                let at = t
                schedule.append((at, { att.notify(handle: level.valueHandle, value: [UInt8(b.int(20...100))]) }))
                t += TruthBuilder.micros(b.uniform(1.5...6))
            }
        }
        if vendor != nil {
            let config = p.characteristic(TruthProfiles.vendorConfig).valueHandle
            var t = start + TruthBuilder.micros(b.uniform(1...5))
            while t < end {
                schedule.append((t, { att.write(config, value: [0x01, UInt8(b.int(0...255)), 0x00]) }))
                t += TruthBuilder.micros(b.uniform(5...25))
            }
        }
        b.run(schedule: schedule)
        for (handle, span) in spans {
            plantPoll(b, link.id, handle, span,
                      "\(span.count) reads of a notifiable value every \(Int(period.rounded())) s, interleaved with \(polled.count - 1) other polled value(s)\(notifying ? ", notifications" : "")\(vendor != nil ? ", writes" : ""); properties discovered in the same connection")
        }
        if let readOnly, let span = readOnlySpan, let first = span.first, let last = span.last {
            b.control(rule, connection: link.id, handle: readOnly, from: first, to: last,
                      "\(span.count) regular reads of a read-only value (no Notify or Indicate)")
        }
        b.hangUp(link)
    }

    /// A cached reconnection polls a value whose properties the earlier connection discovered.
    static func cachedEarlier(_ b: TruthBuilder) {
        let p = TruthPeripheral(b, services: [.environmental], extras: b.int(0...3))
        let first = b.connect(p.peer)
        let att = b.client(first, p.server())
        guard let env = att.find(.environmental) else { return }
        let characteristics = att.discoverCharacteristics(of: env)
        let target = b.pick([TruthProfiles.temperature, TruthProfiles.humidity])
        guard let c = characteristics.first(where: { $0.uuid == target }), let cccd = subscribe(att, c) else { return }
        for _ in 0..<b.int(2...4) {
            b.wait(0.8...1.2)
            att.notify(handle: c.valueHandle, value: TruthProfiles.reading(b, c.uuid))
        }
        att.unsubscribe(cccd: cccd)
        b.hangUp(first)
        let firstEnd = b.t
        b.wait(2...20)
        let second = b.connect(p.peer)
        b.control("reconnect-by-scan", connection: second.id, from: firstEnd, to: second.up,
                  "reconnected directly, no scan in between")
        let again = ATTChannel(script: b.s, connection: second.connection, server: p.server(), clientSide: .local)
        let span = Span()
        let period = b.uniform(2...12)
        let count = b.int(5...30)
        b.run(schedule: reads(b, again, c.valueHandle, regularTimes(b, start: b.elapsed + 300_000, period: period, count: count), span))
        b.control("redundant-discovery", connection: second.id, from: second.up, to: b.t,
                  "reconnection used the cached database: no discovery")
        plantPoll(b, second.id, c.valueHandle, span,
                  "\(count) reads every \(Int(period.rounded())) s on a cached reconnection; Notify was discovered in connection \(first.id)")
        b.hangUp(second)
    }

    /// A connection polls without discovery (a cached database); a later connection to the same peer discovers
    /// that the value can notify.
    static func cachedLater(_ b: TruthBuilder) {
        let p = TruthPeripheral(b, services: [.environmental], extras: b.int(0...3))
        let first = b.connect(p.peer)
        let att = ATTChannel(script: b.s, connection: first.connection, server: p.server(), clientSide: .local)
        let target = p.characteristic(b.pick([TruthProfiles.temperature, TruthProfiles.humidity]))
        let span = Span()
        let period = b.uniform(2...12)
        let count = b.int(5...30)
        b.run(schedule: reads(b, att, target.valueHandle, regularTimes(b, start: b.elapsed + 300_000, period: period, count: count), span))
        b.hangUp(first)
        b.wait(2...30)
        let second = b.connect(p.peer)
        let again = b.client(second, p.server())
        guard let env = again.find(.environmental),
              let c = again.discoverCharacteristics(of: env).first(where: { $0.valueHandle == target.valueHandle }),
              let cccd = subscribe(again, c)
        else { return }
        for _ in 0..<b.int(2...5) {
            b.wait(0.8...1.5)
            again.notify(handle: c.valueHandle, value: TruthProfiles.reading(b, c.uuid))
        }
        again.unsubscribe(cccd: cccd)
        b.hangUp(second)
        plantPoll(b, first.id, target.valueHandle, span,
                  "\(count) reads every \(Int(period.rounded())) s without discovery (cached); Notify is discovered only later, in connection \(second.id)")
    }

    /// Fine reads of notifiable values: irregular ones, and only two; sometimes a read-only value polled.
    static func controls(_ b: TruthBuilder) {
        let p = TruthPeripheral(b, services: [.environmental, .battery], extras: b.int(0...2))
        let link = b.connect(p.peer)
        let att = b.client(link, p.server())
        let notifiable = Array(b.shuffled([TruthProfiles.temperature, TruthProfiles.humidity, TruthProfiles.batteryLevel]).prefix(2))
        guard let env = att.find(.environmental) else { return }
        _ = att.discoverCharacteristics(of: env)
        if notifiable.contains(TruthProfiles.batteryLevel), let battery = att.find(.battery) {
            _ = att.discoverCharacteristics(of: battery)
        }
        let start = b.elapsed + TruthBuilder.micros(b.uniform(0.5...2))
        var schedule: [(at: Int64, action: () -> Void)] = []
        let irregular = p.characteristic(notifiable[0]).valueHandle
        let irregularSpan = Span()
        let irregularCount = b.int(6...12)
        schedule += reads(b, att, irregular, irregularTimes(b, start: start, count: irregularCount), irregularSpan)
        let twice = p.characteristic(notifiable[1]).valueHandle
        let twiceSpan = Span()
        let twiceStart = start + TruthBuilder.micros(b.uniform(0.3...10))
        schedule += reads(b, att, twice, [twiceStart, twiceStart + TruthBuilder.micros(b.uniform(2...8))], twiceSpan)
        var readOnlySpan: Span?
        if b.chance(50) {
            let span = Span()
            schedule += reads(b, att, p.characteristic(TruthProfiles.pressure).valueHandle,
                              regularTimes(b, start: start + 150_000, period: b.uniform(2...6), count: b.int(5...15)), span)
            readOnlySpan = span
        }
        b.run(schedule: schedule)
        if let s = irregularSpan.first, let e = irregularSpan.last {
            assert(irregularSpan.variation >= 0.8, "ground truth: irregular reads not irregular enough")
            b.control(rule, connection: link.id, handle: irregular, from: s, to: e,
                      "\(irregularCount) reads of a notifiable value at irregular gaps, short and long in turn\(irregularSpan.variationText)")
        }
        if let s = twiceSpan.first, let e = twiceSpan.last {
            b.control(rule, connection: link.id, handle: twice, from: s, to: e, "only 2 reads of a notifiable value")
        }
        if let span = readOnlySpan, let s = span.first, let e = span.last {
            b.control(rule, connection: link.id, handle: p.characteristic(TruthProfiles.pressure).valueHandle, from: s, to: e,
                      "\(span.count) regular reads of a read-only value")
        }
        b.hangUp(link)
    }

    /// A measurement whose specification makes Notify or Indicate mandatory, found without any discovery: a Read
    /// By Type Request for its UUID (Read Using Characteristic UUID) shows its handle; then it is polled.
    static func specMandated(_ b: TruthBuilder) {
        let heartRate = b.chance(50)
        let uuid = heartRate ? TruthProfiles.heartRateMeasurement : TruthProfiles.temperatureMeasurement
        // This device also lets the value be read; its declaration is never read by the app.
        let measurement = GATTCharacteristicDefinition(uuid: uuid, properties: heartRate ? [.read, .notify] : [.read, .indicate],
                                                       value: heartRate ? [0x00, 72] : [0x00, 0x6E, 0x0E, 0x00, 0xFE])
        var services = [TruthProfiles.gap(b, name: "GT spec"), SampleProfiles.battery(level: 80)]
        services.insert(GATTServiceDefinition(uuid: heartRate ? BluetoothUUID(uuid16: GATTUUID.heartRate) : BluetoothUUID(uuid16: 0x1809),
                                              [measurement]), at: b.int(1...2))
        if b.chance(50) { services.insert(SampleProfiles.gatt, at: 1) }
        let database = GATTDatabase(services)
        guard let handle = database.characteristic(uuid: uuid)?.valueHandle else { return }
        let link = b.connect(b.newPeer())
        let att = b.client(link, GATTServer(database: database))
        att.exchange(ATTPDU.readByTypeRequest(start: 0x0001, end: ATTChannel.lastHandle, type: uuid))
        let span = Span()
        let period = b.uniform(2...12)
        let count = b.int(5...30)
        b.run(schedule: reads(b, att, handle, regularTimes(b, start: b.elapsed + 500_000, period: period, count: count), span))
        plantPoll(b, link.id, handle, span,
                  "\(count) reads every \(Int(period.rounded())) s of \(heartRate ? "Heart Rate Measurement (2A37)" : "Temperature Measurement (2A1C)"), found by Read By Type without discovery; its specification makes \(heartRate ? "Notify" : "Indicate") mandatory")
        b.hangUp(link)
    }
}
