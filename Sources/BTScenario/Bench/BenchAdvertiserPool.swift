import BTWire

/// The advertisers the benchmark capture hears: thousands of devices with varied addresses and AD data,
/// legacy and extended, prebuilt once into report templates in one arena. The hot loop copies a template
/// and patches its RSSI, and now and then rotates a device's resolvable address, without allocating.
final class BenchAdvertiserPool {
    /// One report as it appears inside an advertising report event.
    struct Template {
        var offset: Int
        var length: Int
        var rssiOffset: Int
        var addressOffset: Int
        var extended: Bool
    }

    struct Advertiser {
        var first: Int
        /// Legacy: the advertisement and, for scannable devices, the scan response. Extended: the fragments
        /// of one chained advertisement.
        var count: Int
        var extended: Bool
        var rssi: Int8
    }

    let arena: UnsafeMutableRawPointer
    private(set) var templates: [Template] = []
    private(set) var advertisers: [Advertiser] = []

    static let advertiserCount = 2_048
    /// Percent of advertisers that use extended advertising.
    static let extendedPercent: UInt64 = 30
    /// Percent of extended advertisers whose data is chained over two reports.
    static let chainedPercent: UInt64 = 20
    static let names = ["Band", "Tag", "Sensor", "Watch", "Buds", "Lock", "Scale", "Bulb", "Beacon", "Thermo",
                        "Pen", "Tracker", "Remote", "Speaker", "Mouse", "Keyboard"]
    static let companies: [CompanyID] = [CompanyID.apple, SampleCompany.microsoft, SampleCompany.samsung,
                                         SampleCompany.google, SampleCompany.nordic, SampleCompany.garmin]
    /// Heart Rate, Battery, Device Information, HID, Environmental Sensing, Cycling Speed and Cadence, Health
    /// Thermometer, Blood Pressure: services whose service data no dissector expects a fixed layout for.
    static let services: [UInt16] = [GATTUUID.heartRate, GATTUUID.battery, GATTUUID.deviceInformation, 0x1812, 0x181A,
                                     0x1816, 0x1809, 0x1810]
    static let legacyTypes = [LegacyReportType.advInd, LegacyReportType.advInd, LegacyReportType.nonconnInd,
                              LegacyReportType.scanInd]
    /// Top two bits of a resolvable private address are 01.
    static let resolvableMask: UInt64 = 0x3F_FF_FF_FF_FF_FF
    static let resolvableTag: UInt64 = 0x40_00_00_00_00_00

    init(rng: inout SplitMix64) {
        var bytes = ByteWriter(capacity: Self.advertiserCount * 160)
        var templates: [Template] = []
        var advertisers: [Advertiser] = []
        for i in 0..<Self.advertiserCount {
            let random = rng.chance(2, in: 3)
            let raw = random ? rng.next() & Self.resolvableMask | Self.resolvableTag : rng.next()
            let peer = PeerAddress(BDAddr(rawValue: raw), type: random ? LEParameter.randomAddress : LEParameter.publicAddress)
            let rssi = Int8(rng.int(in: -98...(-40)))
            let extended = rng.chance(Self.extendedPercent, in: 100)
            let data = Self.advertisingData(index: i, extended: extended, rng: &rng)
            let first = templates.count
            if extended {
                let chained = rng.chance(Self.chainedPercent, in: 100)
                let sid = UInt8(rng.next(below: 16))
                let type = rng.chance(1, in: 2) ? ExtendedReportType.connectable : ExtendedReportType.nonConnectable
                let txPower = Int8(rng.int(in: -20...10))
                // A chained advertisement arrives in two reports, split where an AD structure ends.
                let all = data.bytes
                let split = chained ? (ADStructure.boundaries(all).last { $0 <= all.count / 2 } ?? all.count) : all.count
                let parts = split < all.count ? [all[..<split], all[split...]] : [all[...]]
                let reports = parts.enumerated().map { k, part in
                    let status = k + 1 < parts.count ? ExtendedReportType.dataIncomplete : ExtendedReportType.dataComplete
                    return ExtendedAdvertisingReport(eventType: type | status << ExtendedReportType.dataStatusShift,
                                                     peer: peer, data: Array(part), rssi: rssi,
                                                     secondaryPHY: LEParameter.phy2M, sid: sid, txPower: txPower)
                }
                for r in reports { templates.append(Self.store(r, in: &bytes)) }
            } else {
                let type = rng.element(of: Self.legacyTypes) ?? LegacyReportType.advInd
                templates.append(Self.store(LegacyAdvertisingReport(eventType: type, peer: peer, data: data, rssi: rssi),
                                            in: &bytes))
                if type != LegacyReportType.nonconnInd {
                    let response = AdvertisingData([.completeName("\(Self.names[i % Self.names.count]) \(i)"),
                                                    .txPower(Int8(rng.int(in: -12...8)))])
                    templates.append(Self.store(LegacyAdvertisingReport(eventType: LegacyReportType.scanResponse,
                                                                        peer: peer, data: response, rssi: rssi),
                                                in: &bytes))
                }
            }
            advertisers.append(Advertiser(first: first, count: templates.count - first, extended: extended, rssi: rssi))
        }
        arena = UnsafeMutableRawPointer.allocate(byteCount: max(1, bytes.count), alignment: 16)
        bytes.bytes.withUnsafeBytes { raw in
            if let source = raw.baseAddress { arena.copyMemory(from: source, byteCount: raw.count) }
        }
        self.templates = templates
        self.advertisers = advertisers
    }

    deinit { arena.deallocate() }

    static func advertisingData(index: Int, extended: Bool, rng: inout SplitMix64) -> AdvertisingData {
        var structures: [ADStructure] = [.flags(AdvertisingData.generalDiscoverableLEOnly)]
        switch rng.next(below: 5) {
        case 0:
            structures.append(.iBeacon(uuid: BluetoothUUID(high: rng.next(), low: rng.next()),
                                       major: UInt16(truncatingIfNeeded: rng.next()),
                                       minor: UInt16(truncatingIfNeeded: rng.next()), measuredPower: -59))
        case 1:
            structures.append(.uuid16([rng.element(of: services) ?? GATTUUID.battery], complete: true))
            structures.append(.shortName("\(names[index % names.count])\(index % 100)"))
        case 2:
            structures.append(.manufacturer(company: rng.element(of: companies) ?? CompanyID.apple,
                                            data: rng.bytes(rng.int(in: 4...18))))
        case 3:
            structures.append(.serviceData16(uuid: rng.element(of: services) ?? GATTUUID.battery,
                                             data: rng.bytes(rng.int(in: 2...12))))
            structures.append(.txPower(Int8(rng.int(in: -20...8))))
        default:
            structures.append(.uuid128([BluetoothUUID(high: rng.next(), low: rng.next())], complete: false))
        }
        if extended {
            structures.append(.completeName("\(names[index % names.count]) extended \(index)"))
            structures.append(.manufacturer(company: rng.element(of: companies) ?? CompanyID.apple,
                                            data: rng.bytes(rng.int(in: 20...150))))
        }
        return AdvertisingData(structures)
    }

    static func store(_ r: LegacyAdvertisingReport, in w: inout ByteWriter) -> Template {
        let offset = w.count
        r.write(to: &w)
        let length = w.count - offset
        return Template(offset: offset, length: length, rssiOffset: length - 1, addressOffset: 2, extended: false)
    }

    /// Extended report layout: evt_type u16, addr_type, addr[6], prim_phy, sec_phy, sid, tx_power, rssi, …
    static let extendedRSSIOffset = 13
    static let extendedAddressOffset = 3

    static func store(_ r: ExtendedAdvertisingReport, in w: inout ByteWriter) -> Template {
        let offset = w.count
        r.write(to: &w)
        return Template(offset: offset, length: w.count - offset, rssiOffset: extendedRSSIOffset,
                        addressOffset: extendedAddressOffset, extended: true)
    }

    /// A resolvable private address changes every 15 minutes or so; the generator rotates one now and then.
    func rotateAddress(of index: Int, rng: inout SplitMix64) {
        let a = advertisers[index]
        let typeOffset = templates[a.first].offset + templates[a.first].addressOffset - 1
        guard arena.load(fromByteOffset: typeOffset, as: UInt8.self) == LEParameter.randomAddress else { return }
        let fresh = rng.next() & Self.resolvableMask | Self.resolvableTag
        for t in templates[a.first..<(a.first + a.count)] {
            for i in 0..<6 {
                arena.storeBytes(of: UInt8(truncatingIfNeeded: fresh >> (8 * UInt64(i))),
                                 toByteOffset: t.offset + t.addressOffset + i, as: UInt8.self)
            }
        }
    }
}
