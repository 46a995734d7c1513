import BTWire
import BTCapture
import BTTrack
import BTEnergy

/// A finding as bytes, so that a capture's findings can wait in a spill (`FindingStore`) rather than in memory:
/// every field, integers as varints, strings length-prefixed, doubles as their bits (a report prints them, so
/// they come back exactly). A rule's name, id and advice, which every finding of the rule repeats, are written
/// as the rule's place in `RuleRegistry.all` when they are the registry's.
///
/// Hand-written rather than `Codable`: JSON coding of tens of thousands of findings cost more than the audit.
enum FindingCoding {
    /// Which optional parts follow.
    struct Parts: OptionSet {
        let rawValue: UInt32
        static let connection = Parts(rawValue: 1 << 0)
        static let peerAddress = Parts(rawValue: 1 << 1)
        static let accessAddress = Parts(rawValue: 1 << 2)
        static let attributeHandle = Parts(rawValue: 1 << 3)
        static let cost = Parts(rawValue: 1 << 4)
        static let peripheralCost = Parts(rawValue: 1 << 5)
        static let measuredCap = Parts(rawValue: 1 << 6)
        static let owner = Parts(rawValue: 1 << 7)
        /// Name and id are those of the registry's rule at the written place.
        static let registeredRule = Parts(rawValue: 1 << 8)
        /// The advice is that rule's.
        static let registeredAdvice = Parts(rawValue: 1 << 9)
    }

    /// The rules' names, ids and advice, by their place in the registry.
    static let registry: [RuleDescription] = RuleRegistry.descriptions
    static let registryPlace: [String: Int] = Dictionary(registry.enumerated().map { ($0.element.id, $0.offset) },
                                                         uniquingKeysWith: { first, _ in first })

    /// Appends `f`'s bytes to `out`.
    static func encode(_ f: Finding, into out: inout [UInt8]) {
        var parts: Parts = []
        let place = registryPlace[f.id].flatMap { registry[$0].name == f.rule ? $0 : nil }
        if place != nil { parts.insert(.registeredRule) }
        if let place, registry[place].advice == f.advice { parts.insert(.registeredAdvice) }
        if let c = f.connection {
            parts.insert(.connection)
            if c.peerAddress != nil { parts.insert(.peerAddress) }
            if c.accessAddress != nil { parts.insert(.accessAddress) }
        }
        if f.attributeHandle != nil { parts.insert(.attributeHandle) }
        if let cost = f.cost {
            parts.insert(.cost)
            if cost.peripheral != nil { parts.insert(.peripheralCost) }
            if cost.measuredCap { parts.insert(.measuredCap) }
        }
        if f.owner != nil { parts.insert(.owner) }

        unsigned(UInt64(parts.rawValue), &out)
        if let place { unsigned(UInt64(place), &out) } else {
            string(f.rule, &out)
            string(f.id, &out)
        }
        out.append(f.severity.code)
        unsigned(UInt64(f.controller), &out)
        if let c = f.connection {
            signed(Int64(c.id), &out)
            unsigned(UInt64(c.handle), &out)
            if let peer = c.peerAddress { unsigned(peer.rawValue, &out) }
            signed(Int64(c.peerLink), &out)
            signed(c.start.nanoseconds, &out)
            if let aa = c.accessAddress { unsigned(UInt64(aa), &out) }
        }
        if let h = f.attributeHandle { unsigned(UInt64(h), &out) }
        string(f.discriminator, &out)
        signed(f.start.nanoseconds, &out)
        // The end as the span's length: nearly always a few bytes.
        signed(f.end.nanoseconds &- f.start.nanoseconds, &out)
        unsigned(UInt64(f.records.count), &out)
        for r in f.records {
            signed(Int64(r.number), &out)
            signed(r.offset, &out)
            signed(r.timestamp.nanoseconds, &out)
            unsigned(UInt64(r.controller), &out)
            unsigned(UInt64(r.length), &out)
        }
        string(f.message, &out)
        if !parts.contains(.registeredAdvice) { string(f.advice, &out) }
        string(f.file, &out)
        if let cost = f.cost {
            radio(cost.phone, &out)
            if let p = cost.peripheral { radio(p, &out) }
            double(cost.hostMC, &out)
        }
        if let owner = f.owner {
            out.append(owner.kind.code)
            unsigned(UInt64(owner.apps.count), &out)
            for app in owner.apps { string(app, &out) }
            string(owner.evidence, &out)
        }
        string(f.fingerprint, &out)
    }

    /// The finding `encode` wrote in `bytes`; `FindingStoreError.corrupt` when they are not one.
    static func decode(_ bytes: UnsafeRawBufferPointer) throws(FindingStoreError) -> Finding {
        var r = Reader(bytes: bytes)
        let parts = Parts(rawValue: UInt32(truncatingIfNeeded: try r.unsigned()))
        let rule: String, id: String
        var registered: RuleDescription?
        if parts.contains(.registeredRule) {
            let place = Int(try r.unsigned())
            guard place < registry.count else { throw .corrupt("no rule at \(place)") }
            registered = registry[place]
            rule = registry[place].name
            id = registry[place].id
        } else {
            rule = try r.string()
            id = try r.string()
        }
        guard let severity = Severity(code: try r.byte()) else { throw .corrupt("severity") }
        let controller = UInt16(truncatingIfNeeded: try r.unsigned())
        var connection: FindingConnection?
        if parts.contains(.connection) {
            let cid = Int(try r.signed())
            let handle = UInt16(truncatingIfNeeded: try r.unsigned())
            let peer = parts.contains(.peerAddress) ? BDAddr(rawValue: try r.unsigned()) : nil
            let peerLink = Int(try r.signed())
            let start = Timestamp(nanoseconds: try r.signed())
            let aa = parts.contains(.accessAddress) ? UInt32(truncatingIfNeeded: try r.unsigned()) : nil
            connection = FindingConnection(id: cid, handle: handle, peerAddress: peer, peerLink: peerLink, start: start,
                                           accessAddress: aa)
        }
        let attributeHandle = parts.contains(.attributeHandle) ? UInt16(truncatingIfNeeded: try r.unsigned()) : nil
        let discriminator = try r.string()
        let start = try r.signed()
        let end = start &+ (try r.signed())
        let recordCount = Int(try r.unsigned())
        guard recordCount <= bytes.count else { throw .corrupt("records") }
        var records: [RecordRef] = []
        records.reserveCapacity(recordCount)
        for _ in 0..<recordCount {
            let number = Int(try r.signed())
            let offset = try r.signed()
            let time = Timestamp(nanoseconds: try r.signed())
            let controller = UInt16(truncatingIfNeeded: try r.unsigned())
            let length = Int(try r.unsigned())
            records.append(RecordRef(number: number, offset: offset, timestamp: time, controller: controller, length: length))
        }
        let message = try r.string()
        let advice = parts.contains(.registeredAdvice) ? registered?.advice ?? "" : try r.string()
        let file = try r.string()
        var cost: FindingCost?
        if parts.contains(.cost) {
            // Fields set as written: the initialiser's clamping was applied when the cost was made.
            var c = FindingCost(phone: .zero)
            c.phone = try r.radio()
            c.peripheral = parts.contains(.peripheralCost) ? try r.radio() : nil
            c.hostMC = try r.double()
            c.measuredCap = parts.contains(.measuredCap)
            cost = c
        }
        var owner: Owner?
        if parts.contains(.owner) {
            guard let kind = Owner.Kind(code: try r.byte()) else { throw .corrupt("owner") }
            let count = Int(try r.unsigned())
            guard count <= bytes.count else { throw .corrupt("owner apps") }
            var apps: [String] = []
            for _ in 0..<count { apps.append(try r.string()) }
            owner = Owner(kind: kind, apps: apps, evidence: try r.string())
        }
        let fingerprint = try r.string()
        guard r.position == bytes.count else { throw .corrupt("\(bytes.count - r.position) bytes left over") }
        return Finding(rule: rule, id: id, severity: severity, controller: controller, connection: connection,
                       attributeHandle: attributeHandle, discriminator: discriminator, start: Timestamp(nanoseconds: start),
                       end: Timestamp(nanoseconds: end), records: records, message: message, advice: advice, file: file,
                       cost: cost, owner: owner, fingerprint: fingerprint)
    }

    // MARK: writing

    static func unsigned(_ v: UInt64, _ out: inout [UInt8]) {
        var v = v
        while v >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        out.append(UInt8(v))
    }

    /// Zig-zag: small negative numbers stay short.
    static func signed(_ v: Int64, _ out: inout [UInt8]) {
        unsigned(UInt64(bitPattern: (v << 1) ^ (v >> 63)), &out)
    }

    static func string(_ s: String, _ out: inout [UInt8]) {
        let utf8 = s.utf8
        unsigned(UInt64(utf8.count), &out)
        out.append(contentsOf: utf8)
    }

    static func double(_ d: Double, _ out: inout [UInt8]) {
        withUnsafeBytes(of: d.bitPattern.littleEndian) { out.append(contentsOf: $0) }
    }

    static func radio(_ c: RadioCost, _ out: inout [UInt8]) {
        double(c.radioSeconds, &out)
        double(c.chargeMC, &out)
        double(c.lowMC, &out)
        double(c.highMC, &out)
    }

    // MARK: reading

    struct Reader {
        let bytes: UnsafeRawBufferPointer
        var position = 0

        mutating func byte() throws(FindingStoreError) -> UInt8 {
            guard position < bytes.count else { throw .corrupt("ends early") }
            defer { position += 1 }
            return bytes[position]
        }

        mutating func unsigned() throws(FindingStoreError) -> UInt64 {
            var v: UInt64 = 0, shift: UInt64 = 0
            while true {
                let b = try byte()
                guard shift < 64 else { throw .corrupt("varint too long") }
                v |= UInt64(b & 0x7F) << shift
                if b < 0x80 { return v }
                shift += 7
            }
        }

        mutating func signed() throws(FindingStoreError) -> Int64 {
            let u = try unsigned()
            return Int64(bitPattern: (u >> 1) ^ (0 &- (u & 1)))
        }

        mutating func string() throws(FindingStoreError) -> String {
            let count = Int(clamping: try unsigned())
            guard count <= bytes.count - position else { throw .corrupt("string ends early") }
            defer { position += count }
            return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[position..<position + count]), as: UTF8.self)
        }

        mutating func double() throws(FindingStoreError) -> Double {
            guard bytes.count - position >= 8 else { throw .corrupt("ends early") }
            var bits: UInt64 = 0
            for i in 0..<8 { bits |= UInt64(bytes[position + i]) << (8 * UInt64(i)) }
            position += 8
            return Double(bitPattern: bits)
        }

        mutating func radio() throws(FindingStoreError) -> RadioCost {
            var c = RadioCost()
            c.radioSeconds = try double()
            c.chargeMC = try double()
            c.lowMC = try double()
            c.highMC = try double()
            return c
        }
    }
}

extension Severity {
    /// Its byte in a spilled finding.
    var code: UInt8 { UInt8(rank) }

    init?(code: UInt8) {
        switch code {
        case 0: self = .info
        case 1: self = .warning
        case 2: self = .error
        default: return nil
        }
    }
}

extension Owner.Kind {
    /// Its byte in a spilled finding.
    var code: UInt8 {
        switch self {
        case .app: 0
        case .os: 1
        case .unknown: 2
        }
    }

    init?(code: UInt8) {
        switch code {
        case 0: self = .app
        case 1: self = .os
        case 2: self = .unknown
        default: return nil
        }
    }
}
