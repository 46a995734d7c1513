import BTWire
import BTCapture

/// Makes a capture safe to share: rewrites HCI packets in place, keeping every length, handle, UUID, opcode and
/// time, so the anonymised capture gives the same structure (connections, discovery, the GATT tree, the
/// findings) without who or what:
///
/// - device addresses become stable pseudonyms (`x0:00:00:00:00:01`, …) that keep the two bits that tell a
///   random address's kind (static, resolvable, non-resolvable);
/// - names (advertised, local, remote) become `name-1`, `name-2`, … (one per distinct name, cut or padded with
///   spaces to the original length);
/// - manufacturer data (after its company identifier), service data (after its UUID), URIs and attribute values
///   (reads, writes, notifications, indications; Read By Type values except declarations) become zeros of the
///   same length, except writes of a 2-byte 0–3 (Client Characteristic Configuration: who subscribed to what);
/// - keys and pairing values are zeroed: SMP confirm/random/keys/public keys/DHKey checks, LTKs, EDIV and Rand,
///   IRKs, link keys, PINs, passkeys and numeric comparison values;
/// - Enhanced ATT bearers (LE credit-based channels opened for PSM 0x0027) are rewritten as ATT, keeping their
///   K-frames' SDU lengths; payloads of other L2CAP dynamic channels (RFCOMM, AVDTP, other credit-based channels)
///   are zeroed whole, since their protocols are not rewritten field by field.
///
/// Works per packet on the packet's own bytes (ACL fragments: the continuation of a rewritten PDU is zeroed), with
/// fixed per-handle state: no allocation per packet; the pseudonym tables grow with distinct addresses (8 to 16
/// bytes each, `AddressTable`) and names only, up to `tableLimit` (then a hash stands in, still stable).
///
/// That is the field-aware pass: it rewrites the fields it knows. `btlens anonymize` adds a pass by value: a first
/// reading with `collectIdentifiers()` gathers every identifier the fields hold (addresses, names, keys, serial
/// numbers: `CapturedIdentifiers`), then `byValueScanner()` gives their bytes and replacements, which the copy's
/// second reading puts in place wherever they appear (vendor events and commands, logs, fields not known here).
public final class Anonymizer {
    public static let tableLimit = 1 << 20

    /// Every address met, in order of appearance: without a key, its pseudonym is numbered by that order.
    let addresses: AddressTable
    /// Pseudonyms given anew: ones that equalled an original address (`avoidCollisions`), by original.
    @exclusivity(unchecked) private var renumbered: [UInt64: UInt64] = [:]
    /// Each distinct name's replacement, `name-N` as bytes, made once (not a String per advertising report).
    @exclusivity(unchecked) private var names: [UInt64: [UInt8]] = [:]
    /// Per ACL handle: zero the continuation fragments of the PDU in progress.
    @exclusivity(unchecked) private var zeroContinuation = [Bool](repeating: false, count: 4096)
    /// Per ACL handle: the last Read By Type Request asked for declarations (its response is structure).
    @exclusivity(unchecked) private var declarationsAsked = [Bool](repeating: false, count: 4096)

    /// Enhanced ATT channels (handle << 16 | CID), learned from credit-based connection signalling, and per
    /// channel the bytes of the SDU in progress still to come and whether they are zeroed.
    @exclusivity(unchecked) private var eattChannels: [UInt32: (remaining: Int, zeroRest: Bool)] = [:]
    /// Per ACL handle: the last credit-based connection request asked for Enhanced ATT.
    @exclusivity(unchecked) private var eattAsked = [Bool](repeating: false, count: 4096)
    static let eattPSM: UInt16 = 0x0027
    static let channelLimit = 4096

    @exclusivity(unchecked) public private(set) var addressesReplaced = 0
    @exclusivity(unchecked) public private(set) var namesReplaced = 0
    /// While collecting (the first pass of `btlens anonymize`, `--check`; until `byValueScanner()`): the
    /// identifiers met so far.
    @exclusivity(unchecked) public private(set) var identifiers: CapturedIdentifiers?
    /// While collecting: which attributes hold a GAP Device Name or a Serial Number String, and reads in flight.
    @exclusivity(unchecked) var attributes: AttributeWatch?
    /// The direction of the packet being rewritten (reads and their responses go opposite ways).
    @exclusivity(unchecked) var direction: Direction = .unknown
    /// With a key, an address's pseudonym is a keyed hash of it: the same in every run and capture given the
    /// same key. Without, pseudonyms are numbered in order of appearance (stable within one run).
    let key: UInt64?
    /// Keep attribute values (ATT payloads) as they are: addresses, names, advertising data and keys are still
    /// rewritten.
    public let keepValues: Bool

    /// `directory`: where the addresses beyond the latest `addressesInMemory` are set aside (`AddressTable`); nil
    /// keeps them all in memory.
    public convenience init(key: String? = nil, keepValues: Bool = false, directory: String? = nil,
                            addressesInMemory: Int = AddressTable.defaultSegmentLength) {
        self.init(key: key, keepValues: keepValues,
                  addresses: AddressTable(limit: Self.tableLimit, directory: directory, segmentLength: addressesInMemory))
    }

    /// Why the addresses past the latest are held in memory rather than set aside in the directory given, and what
    /// went wrong reading them back (a full disk: then addresses may be missed), if anything (`AddressTable`).
    public var addressesKeptInMemory: String? { addresses.keptInMemory }
    public var addressesSetAsideFailure: String? { addresses.failure }

    /// With the table of addresses another reading collected (`checkScanner`).
    init(key: String? = nil, keepValues: Bool = false, addresses: AddressTable) {
        self.addresses = addresses
        self.key = key.map { text in
            var hash: UInt64 = 0xCBF2_9CE4_8422_2325  // FNV-1a
            for byte in text.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3 }
            return hash
        }
        self.keepValues = keepValues
    }

    /// Rewrites one record's payload in place.
    public func anonymize(kind: RecordKind, direction: Direction = .unknown, payload p: UnsafeMutableRawBufferPointer) {
        self.direction = direction
        switch kind {
        case .command: command(p)
        case .event: event(p)
        case .acl: acl(p)
        case .sco, .iso: zero(p, from: kind == .sco ? 3 : 4)  // audio
        default: break
        }
    }

    // MARK: - Fields

    /// Replaces the address at `at` by its pseudonym.
    func address(_ p: UnsafeMutableRawBufferPointer, at: Int) {
        guard at >= 0, at + 6 <= p.count else { return }
        var value: UInt64 = 0
        for i in 0..<6 { value |= UInt64(p[at + i]) << (8 * UInt64(i)) }
        if value == 0 || value == 0xFFFF_FFFF_FFFF { return }  // "none" and "any" are not addresses
        let pseudonym = pseudonym(value)
        for i in 0..<6 { p[at + i] = UInt8(truncatingIfNeeded: pseudonym >> (8 * UInt64(i))) }
        addressesReplaced += 1
    }

    /// The pseudonym of `value`, which is added to `addresses` (and so to the identifiers collected) when new.
    func pseudonym(_ value: UInt64) -> UInt64 {
        if !renumbered.isEmpty, let given = renumbered[value] { return given }
        return pseudonym(value, position: addresses.insert(value).position)
    }

    /// Bits 47–46: a random address's kind (11 static, 01 resolvable, 00 non-resolvable); kept.
    static let kindBits: UInt64 = 0xC000_0000_0000
    static let numberBits: UInt64 = 0x3FFF_FFFF_FFFF

    /// The pseudonym first given to the address at `position` of `addresses` (nil: past `tableLimit`): a keyed
    /// hash with a key, else its number in order of appearance (past the table, a hash).
    func pseudonym(_ value: UInt64, position: Int?) -> UInt64 {
        let number: UInt64
        if let key {
            number = max(1, Self.mix(value ^ key) & Self.numberBits)
        } else if let position {
            number = UInt64(position + 1)
        } else {
            number = (value &* 0x9E37_79B9_7F4A_7C15) >> 20 & Self.numberBits
        }
        return value & Self.kindBits | (number & Self.numberBits)
    }

    /// Every bit of the input reaches every bit of the output (`SplitMixHash`).
    static func mix(_ v: UInt64) -> UInt64 { SplitMixHash.hash(v) }

    /// Replaces a name of `length` bytes at `at` (up to a NUL) by `name-N`.
    func name(_ p: UnsafeMutableRawBufferPointer, at: Int, length: Int) {
        guard at >= 0, at < p.count else { return }
        let end = min(p.count, at + length)
        var used = at
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325  // FNV-1a
        while used < end, p[used] != 0 {
            hash = (hash ^ UInt64(p[used])) &* 0x100_0000_01B3
            used += 1
        }
        guard used > at else { return }
        identifiers?.name(hash: hash, p, from: at, to: used)
        let replacement = nameReplacement(hash: hash)
        for i in at..<used { p[i] = i - at < replacement.count ? replacement[i - at] : 0x20 }
        namesReplaced += 1
    }

    /// `name-N` for the name of this FNV-1a hash: a new number for a new name.
    func nameReplacement(hash: UInt64) -> [UInt8] {
        if let known = names[hash] { return known }
        let replacement = Array("name-\(names.count + 1)".utf8)
        if names.count < Self.tableLimit { names[hash] = replacement }
        return replacement
    }

    static func nameHash<C: Collection>(_ bytes: C) -> UInt64 where C.Element == UInt8 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325  // FNV-1a
        for byte in bytes {
            if byte == 0 { break }
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3
        }
        return hash
    }

    /// A key (`label`: LTK, IRK, link key, …) of `count` bytes at `at`: collected, then zeroed.
    func secret(_ p: UnsafeMutableRawBufferPointer, at: Int, count: Int = 16, label: String) {
        identifiers?.key(p, at: at, count: count, label: label)
        zero(p, from: at, count: count)
    }

    func zero(_ p: UnsafeMutableRawBufferPointer, from: Int, count: Int = .max) {
        guard from >= 0, from < p.count else { return }
        let end = count == .max ? p.count : min(p.count, from + max(0, count))
        guard end > from else { return }
        for i in from..<end { p[i] = 0 }
    }

    /// Advertising or EIR data: `len type data` structures in `p[from ..< from + length]`.
    func advertisingData(_ p: UnsafeMutableRawBufferPointer, from: Int, length: Int) {
        var at = from
        let end = min(p.count, from + length)
        while at < end {
            let l = Int(p[at])
            guard l > 0, at + 1 + l <= end else { break }
            let type = p[at + 1], data = at + 2, dataLength = l - 1
            switch type {
            case 0x08, 0x09: name(p, at: data, length: dataLength)                   // shortened, complete local name
            case 0xFF: zero(p, from: data + 2, count: dataLength - 2)               // manufacturer data after the company
            case 0x16: zero(p, from: data + 2, count: dataLength - 2)               // service data, 16-bit UUID
            case 0x20: zero(p, from: data + 4, count: dataLength - 4)               // 32-bit UUID
            case 0x21: zero(p, from: data + 16, count: dataLength - 16)             // 128-bit UUID
            case 0x24, 0x2A, 0x2B, 0x2C, 0x2E, 0x2F: zero(p, from: data, count: dataLength)  // URI, mesh, BIGInfo, RSI
            case 0x17, 0x18:                                                         // target addresses
                var a = data
                while a + 6 <= data + dataLength { address(p, at: a); a += 6 }
            case 0x1B: address(p, at: data)                                          // LE Bluetooth Device Address
            case 0x0E, 0x0F, 0x22, 0x23: zero(p, from: data, count: dataLength)     // pairing hash and randomizer values
            default: break
            }
            at += 1 + l
        }
    }

    // MARK: - HCI commands (opcode 2, length 1, parameters from 3)

    func command(_ p: UnsafeMutableRawBufferPointer) {
        guard p.count >= 3 else { return }
        let opcode = UInt16(p[0]) | UInt16(p[1]) << 8
        switch opcode {
        case 0x0405, 0x0408, 0x0409, 0x040A, 0x040C, 0x040E, 0x0419, 0x041A, 0x0429, 0x042A, 0x042B, 0x042C, 0x042D,
             0x042F, 0x0433, 0x0434, 0x043E, 0x0C0D, 0x0C12:
            address(p, at: 3)  // BR/EDR commands naming the peer; Read and Delete Stored Link Key
        case 0x0445: address(p, at: 3); zero(p, from: 9, count: 64)    // Remote OOB Extended Data Request Reply
        case 0x0C11:                                                    // Write Stored Link Key: (address, key) each
            let n = p.count > 3 ? Int(p[3]) : 0
            for i in 0..<n { address(p, at: 4 + 22 * i); secret(p, at: 10 + 22 * i, label: "link key") }
        case 0x040B: address(p, at: 3); secret(p, at: 9, label: "link key")  // Link Key Request Reply
        case 0x040D: address(p, at: 3); zero(p, from: 10, count: 16)   // PIN Code Request Reply
        case 0x042E: address(p, at: 3); zero(p, from: 9, count: 4)     // User Passkey Request Reply
        case 0x0430: address(p, at: 3); zero(p, from: 9, count: 32)    // Remote OOB Data Request Reply
        case 0x0C13: name(p, at: 3, length: 248)                        // Write Local Name
        case 0x0C52: advertisingData(p, from: 4, length: 240)           // Write Extended Inquiry Response
        case 0x2005: address(p, at: 3)                                  // LE Set Random Address
        case 0x2006: address(p, at: 10)                                 // LE Set Advertising Parameters
        case 0x2008, 0x2009: advertisingData(p, from: 4, length: Int(p.count > 3 ? p[3] : 0))
        case 0x200D: address(p, at: 9)                                  // LE Create Connection
        case 0x2011, 0x2012, 0x2028, 0x202B, 0x202C: address(p, at: 4)  // accept and resolving lists, peer RPAs
        case 0x2019: zero(p, from: 5, count: 10); secret(p, at: 15, label: "LTK")  // LE Enable Encryption: Rand, EDIV, LTK
        case 0x201A: secret(p, at: 5, label: "LTK")                        // LE Long Term Key Request Reply
        case 0x2027:                                                    // LE Add Device To Resolving List: IRKs
            address(p, at: 4); secret(p, at: 10, label: "IRK"); secret(p, at: 26, label: "IRK")
        case 0x204E, 0x2047, 0x2048: address(p, at: 4)                  // LE Set Privacy Mode, periodic advertiser list
        case 0xFD57: apcf(p)                                            // Android's scan filters (vendor APCF)
        case 0x2035: address(p, at: 4)                                  // LE Set Advertising Set Random Address
        case 0x2036: address(p, at: 15)                                 // LE Set Extended Advertising Parameters
        case 0x2037, 0x2038: advertisingData(p, from: 7, length: Int(p.count > 6 ? p[6] : 0))
        case 0x2043, 0x2044: address(p, at: 6)                          // LE Extended Create Connection, Periodic Create Sync
        case 0x203F: advertisingData(p, from: 6, length: Int(p.count > 5 ? p[5] : 0))  // LE Set Periodic Advertising Data
        default: break
        }
    }

    /// Android's vendor APCF command (`0xFD57`): sub-command, action, filter index, then the condition; the
    /// broadcaster address filter (0x02) holds an address, the local name filter (0x05) a name.
    func apcf(_ p: UnsafeMutableRawBufferPointer) {
        guard p.count >= 7, p[4] == 0x00 else { return }  // an add: delete and clear carry no condition
        switch p[3] {
        case 0x02: address(p, at: 6)
        case 0x05: name(p, at: 6, length: p.count - 6)
        default: break
        }
    }

    // MARK: - HCI events (code 1, length 1, parameters from 2)

    func event(_ p: UnsafeMutableRawBufferPointer) {
        guard p.count >= 2 else { return }
        switch p[0] {
        case 0x03, 0x2C: address(p, at: 5)                              // (Synchronous) Connection Complete
        case 0x05: attributes?.linkClosed(handle: p.count >= 5 ? Int(UInt16(p[3]) | UInt16(p[4] & 0x0F) << 8) : -1)
        case 0x12, 0x36: address(p, at: 3)                              // Role Change, Simple Pairing Complete
        case 0x04, 0x16, 0x17, 0x31, 0x32, 0x34, 0x3C, 0x3D, 0x35: address(p, at: 2)
        case 0x18: address(p, at: 2); secret(p, at: 8, label: "link key")  // Link Key Notification
        case 0x15:                                                      // Return Link Keys: (address, key) each
            let n = p.count > 2 ? Int(p[2]) : 0
            for i in 0..<n { address(p, at: 3 + 22 * i); secret(p, at: 9 + 22 * i, label: "link key") }
        case 0x33, 0x3B: address(p, at: 2); zero(p, from: 8, count: 4) // User Confirmation Request, Passkey Notification
        case 0x07: address(p, at: 3); name(p, at: 9, length: 248)     // Remote Name Request Complete
        case 0x02:                                                      // Inquiry Result
            let n = p.count > 2 ? Int(p[2]) : 0
            for i in 0..<n { address(p, at: 3 + 14 * i) }
        case 0x22:                                                      // Inquiry Result with RSSI
            let n = p.count > 2 ? Int(p[2]) : 0
            for i in 0..<n { address(p, at: 3 + 14 * i) }
        case 0x2F: address(p, at: 3); advertisingData(p, from: 17, length: 240)  // Extended Inquiry Result
        case 0x0E: commandComplete(p)
        case 0x3E: leMeta(p)
        default: break
        }
    }

    func commandComplete(_ p: UnsafeMutableRawBufferPointer) {
        guard p.count >= 5 else { return }
        let opcode = UInt16(p[3]) | UInt16(p[4]) << 8
        switch opcode {
        case 0x1009: address(p, at: 6)                   // Read BD_ADDR: status, address
        case 0x0C14: name(p, at: 6, length: 248)         // Read Local Name
        case 0x0C51: advertisingData(p, from: 7, length: 240)  // Read Extended Inquiry Response
        case 0x0408, 0x041A, 0x040B, 0x040C, 0x040D, 0x040E, 0x042B, 0x042C, 0x042D, 0x042E, 0x042F, 0x0430, 0x0433,
             0x0434, 0x0445:
            address(p, at: 6)                             // replies and cancels echo the peer
        case 0x202B, 0x202C: address(p, at: 6)           // Read Peer/Local Resolvable Address
        default: break
        }
    }

    func leMeta(_ p: UnsafeMutableRawBufferPointer) {
        guard p.count >= 3 else { return }
        // Parameters start at 2: subevent, then its fields.
        let s = 2
        switch p[s] {
        case 0x01: address(p, at: s + 6)                                              // Connection Complete
        case 0x0A, 0x29: address(p, at: s + 6); address(p, at: s + 12); address(p, at: s + 18)  // Enhanced
        case 0x02:                                                                    // Advertising Report
            guard p.count > s + 1 else { return }
            var at = s + 2
            for _ in 0..<Int(p[s + 1]) {
                guard at + 9 <= p.count else { return }
                address(p, at: at + 2)
                let length = Int(p[at + 8])
                advertisingData(p, from: at + 9, length: length)
                at += 9 + length + 1
            }
        case 0x0B:                                                                    // Directed Advertising Report
            guard p.count > s + 1 else { return }
            for i in 0..<Int(p[s + 1]) { address(p, at: s + 2 + 16 * i + 2); address(p, at: s + 2 + 16 * i + 9) }
        case 0x0D:                                                                    // Extended Advertising Report
            guard p.count > s + 1 else { return }
            var at = s + 2
            for _ in 0..<Int(p[s + 1]) {
                guard at + 24 <= p.count else { return }
                address(p, at: at + 3)
                address(p, at: at + 17)
                let length = Int(p[at + 23])
                advertisingData(p, from: at + 24, length: length)
                at += 24 + length
            }
        case 0x05: zero(p, from: s + 3, count: 10)                                    // LTK Request: Rand, EDIV
        case 0x13: address(p, at: s + 3)                                              // Scan Request Received
        case 0x0F: advertisingData(p, from: s + 8, length: Int(p.count > s + 7 ? p[s + 7] : 0))  // Periodic Advertising Report
        case 0x0E, 0x24: address(p, at: s + 6)                                        // Periodic Advertising Sync Established
        case 0x18, 0x26: address(p, at: s + 10)                                       // Periodic Advertising Sync Transfer Received
        default: break
        }
    }

    // MARK: - ACL: L2CAP, ATT, SMP

    func acl(_ p: UnsafeMutableRawBufferPointer) {
        guard p.count >= 4 else { return }
        let handle = Int(UInt16(p[0]) | UInt16(p[1] & 0x0F) << 8)
        let boundary = p[1] >> 4 & 0x3
        if boundary == 0x1 {  // continuation
            attributes?.continuation(p, handle: handle, into: identifiers)
            if zeroContinuation[handle] { zero(p, from: 4) }
            return
        }
        zeroContinuation[handle] = false
        guard p.count >= 8 else { return }
        let cid = UInt16(p[6]) | UInt16(p[7]) << 8
        let pdu = 8
        if cid == 0x0004, let attributes {
            attributes.att(p, at: pdu, handle: handle, direction: direction, into: identifiers)
        }
        switch cid {
        case 0x0004: att(p, at: pdu, handle: handle)
        case 0x0006, 0x0007: smp(p, at: pdu, handle: handle)
        case 0x0001: break  // BR/EDR signalling: PSMs, CIDs, MTUs
        case 0x0005: leSignalling(p, at: pdu, handle: handle)
        default:
            let key = UInt32(handle) << 16 | UInt32(cid)
            if var channel = eattChannels[key] {
                kFrame(p, at: pdu, handle: handle, channel: &channel)
                eattChannels[key] = channel
                return
            }
            // Dynamic channels (and unknown fixed ones): their protocols are not rewritten field by field.
            if cid >= 0x0040 || cid == 0x0002 || cid == 0x003F {
                zero(p, from: pdu)
                zeroContinuation[handle] = true
            }
        }
    }

    /// LE signalling: which credit-based channels carry Enhanced ATT (the request names the PSM and its own
    /// CIDs, the response the responder's).
    func leSignalling(_ p: UnsafeMutableRawBufferPointer, at a: Int, handle: Int) {
        guard a + 4 <= p.count else { return }
        let code = p[a]
        let data = a + 4
        func cids(from: Int) {
            var c = from
            while c + 2 <= p.count {
                let cid = UInt16(p[c]) | UInt16(p[c + 1]) << 8
                if cid != 0, eattChannels.count < Self.channelLimit {
                    eattChannels[UInt32(handle) << 16 | UInt32(cid)] = (0, false)
                }
                c += 2
            }
        }
        switch code {
        case 0x17:  // L2CAP_CREDIT_BASED_CONNECTION_REQ: SPSM, MTU, MPS, credits, source CIDs
            guard data + 2 <= p.count else { return }
            eattAsked[handle] = (UInt16(p[data]) | UInt16(p[data + 1]) << 8) == Self.eattPSM
            if eattAsked[handle] { cids(from: data + 8) }
        case 0x18:  // L2CAP_CREDIT_BASED_CONNECTION_RSP: MTU, MPS, credits, result, destination CIDs
            if eattAsked[handle] { cids(from: data + 8) }
        default: break
        }
    }

    /// A K-frame of an Enhanced ATT bearer: the first of an SDU has its length, then the ATT PDU.
    func kFrame(_ p: UnsafeMutableRawBufferPointer, at a: Int, handle: Int, channel: inout (remaining: Int, zeroRest: Bool)) {
        let payload = max(0, p.count - a)
        if channel.remaining > 0 {
            if channel.zeroRest { zero(p, from: a) }
            zeroContinuation[handle] = channel.zeroRest
            channel.remaining = max(0, channel.remaining - payload)
            return
        }
        guard a + 2 <= p.count else { return }
        let sduLength = Int(p[a]) | Int(p[a + 1]) << 8
        zeroContinuation[handle] = false
        att(p, at: a + 2, handle: handle)
        channel.zeroRest = zeroContinuation[handle]
        channel.remaining = max(0, sduLength - (payload - 2))
    }

    func att(_ p: UnsafeMutableRawBufferPointer, at a: Int, handle: Int) {
        guard a < p.count, !keepValues else { return }
        let opcode = p[a]
        var from: Int?
        switch opcode {
        case 0x0B, 0x0D, 0x0F: from = a + 1                     // Read, Read Blob, Read Multiple responses
        case 0x12, 0x52:                                        // Write Request, Write Command
            // A 2-byte value of 0 to 3 is a Client Characteristic Configuration (subscribing or not): structure.
            let isConfiguration = p.count - a == 5 && p[a + 4] == 0 && p[a + 3] <= 3
            if !isConfiguration { from = a + 3 }
        case 0xD2, 0x1B, 0x1D: from = a + 3                     // signed writes, notifications, indications
        case 0x16, 0x17: from = a + 5                           // Prepare Write request and response
        case 0x08:                                              // Read By Type Request: declarations asked?
            let type = a + 5 + 2 <= p.count ? UInt16(p[a + 5]) | UInt16(p[a + 6]) << 8 : 0
            declarationsAsked[handle] = p.count - a == 7 && (type == 0x2803 || type == 0x2802)
        case 0x09:                                              // Read By Type Response
            guard !declarationsAsked[handle], a + 2 <= p.count else { return }
            let element = Int(p[a + 1])
            guard element > 2 else { return }
            var e = a + 2
            while e + element <= p.count { zero(p, from: e + 2, count: element - 2); e += element }
            if e < p.count { zero(p, from: e); zeroContinuation[handle] = true }
            return
        case 0x21, 0x23:                                        // Read Multiple Variable, Multiple Handle Value Ntf
            var e = a + 1 + (opcode == 0x23 ? 2 : 0)
            while e + 2 <= p.count {
                let length = Int(p[e]) | Int(p[e + 1]) << 8
                zero(p, from: e + 2, count: length)
                e += 2 + length + (opcode == 0x23 ? 2 : 0)
            }
            zeroContinuation[handle] = true
            return
        default: break
        }
        if let from {
            zero(p, from: from)
            zeroContinuation[handle] = true
        }
    }

    func smp(_ p: UnsafeMutableRawBufferPointer, at a: Int, handle: Int) {
        guard a < p.count else { return }
        switch p[a] {
        case 0x06: identifiers?.key(p, at: a + 1, count: 16, label: "LTK")    // Encryption Information
        case 0x08: identifiers?.key(p, at: a + 1, count: 16, label: "IRK")    // Identity Information
        case 0x0A: identifiers?.key(p, at: a + 1, count: 16, label: "CSRK")   // Signing Information
        default: break
        }
        switch p[a] {
        case 0x03, 0x04, 0x06, 0x07, 0x08, 0x0A, 0x0C, 0x0D:   // confirm, random, keys, public key, DHKey check
            zero(p, from: a + 1)
            zeroContinuation[handle] = true
        case 0x09: address(p, at: a + 2)                        // Identity Address Information
        default: break
        }
    }
}

// MARK: - The pass by value

extension Anonymizer {
    /// Starts collecting identifiers (`identifiers`): the first reading of a capture, whose rewritten bytes are
    /// thrown away. Pseudonyms are given as they are met, so the second reading gives the same ones.
    public func collectIdentifiers() {
        identifiers = CapturedIdentifiers(addresses: addresses)
        attributes = AttributeWatch()
    }

    /// Ends collecting: GAP Device Names read over ATT get their `name-N` (after the names the fields hold, so
    /// those are numbered as in one pass); no pseudonym is left equal to an original address in either byte
    /// order; per-link state is forgotten for the second reading. Returns the identifiers' bytes (addresses in
    /// both byte orders and as text) with the replacements the field pass gives them: pseudonyms, `name-N` cut
    /// or padded to the name's length, zeros for keys and serial numbers. Identifiers that are not
    /// `CapturedIdentifiers.distinctive` are left out.
    public func byValueScanner() -> ValueScanner {
        let found = identifiers ?? CapturedIdentifiers()
        identifiers = nil  // the second reading meets the same ones
        attributes = nil
        for text in found.attributeNames { _ = nameReplacement(hash: Self.nameHash(text)) }
        avoidCollisions(with: found)
        forgetLinks()
        addressesReplaced = 0
        namesReplaced = 0
        // Addresses are looked up in their table by the scan; the others are patterns.
        var patterns = ValueScanner.Builder()
        for (j, identifier) in found.others.enumerated() where CapturedIdentifiers.distinctive(identifier.bytes, kind: identifier.kind) {
            let bytes = identifier.bytes, index = found.index(ofOther: j)
            switch identifier.kind {
            case .address:
                break  // none among the others: addresses are looked up in `found.addresses`
            case .name:
                let made = nameReplacement(hash: Self.nameHash(bytes))
                let replacement = (0..<bytes.count).map { $0 < made.count ? made[$0] : 0x20 }
                patterns.add(bytes: bytes, replacement: replacement, identifier: index, form: .asCarried)
            case .key:
                let zeros = [UInt8](repeating: 0, count: bytes.count)
                patterns.add(bytes: bytes, replacement: zeros, identifier: index, form: .asCarried)
                patterns.add(bytes: bytes.reversed(), replacement: zeros, identifier: index, form: .reversed)
            case .serialNumber:
                patterns.add(bytes: bytes, replacement: [UInt8](repeating: 0, count: bytes.count), identifier: index, form: .asCarried)
            }
        }
        return patterns.scanner(addresses: ValueScanner.Addresses(identifiers: found, pseudonym: { [unowned self] in self.pseudonym($0) }))
    }

    /// The identifiers' bytes to look for in a copy (`anonymize --check`): as `byValueScanner` finds them.
    public static func checkScanner(_ found: CapturedIdentifiers) -> ValueScanner {
        let anonymizer = Anonymizer(addresses: found.addresses)
        anonymizer.identifiers = found
        return anonymizer.byValueScanner()
    }

    /// Per-link state back to the start, for a second reading.
    func forgetLinks() {
        for i in 0..<zeroContinuation.count {
            zeroContinuation[i] = false
            declarationsAsked[i] = false
            eattAsked[i] = false
        }
        eattChannels.removeAll()
    }

    /// A pseudonym equal to an original address (either byte order) would be read as that address leaking, and
    /// rewriting that address by value would rewrite the pseudonym too: such pseudonyms are given anew.
    func avoidCollisions(with found: CapturedIdentifiers) {
        let originals = found.addresses
        func forbidden(_ value: UInt64) -> Bool { originals.contains(value) || originals.contains(Self.reversed(value)) }
        // In the order of the pseudonyms (of appearance without a key).
        var colliding: [(original: UInt64, made: UInt64)] = []
        addresses.forEach(below: addresses.count) { position, original in
            let made = pseudonym(original, position: position)
            if forbidden(made) { colliding.append((original, made)) }
        }
        guard !colliding.isEmpty else { return }
        colliding.sort { $0.made < $1.made }
        // Whether a pseudonym was given first to an address of the table: without a key, its number says which;
        // with one, the keyed hashes are sorted and searched.
        var keyed: [UInt64] = []
        if key != nil {
            keyed.reserveCapacity(addresses.count)
            addresses.forEach(below: addresses.count) { keyed.append(pseudonym($1, position: $0)) }
            keyed.sort()
        }
        func givenFirst(_ candidate: UInt64) -> Bool {
            if key == nil {
                let number = Int(candidate & Self.numberBits)
                return number >= 1 && number <= addresses.count && addresses[number - 1] & Self.kindBits == candidate & Self.kindBits
            }
            let i = keyed.partitioningIndex { $0 >= candidate }
            return i < keyed.count && keyed[i] == candidate
        }
        var givenAnew = Set<UInt64>()
        var next = UInt64(addresses.count + 1)
        for (original, made) in colliding {
            var candidate = made
            repeat {
                if key != nil {
                    candidate = (made & Self.kindBits) | (Self.mix(candidate) & Self.numberBits)
                } else {
                    candidate = (made & Self.kindBits) | (next & Self.numberBits)
                    next += 1
                }
            } while forbidden(candidate) || givenFirst(candidate) || givenAnew.contains(candidate)
            givenAnew.insert(candidate)
            renumbered[original] = candidate
        }
    }

    static func reversed(_ value: UInt64) -> UInt64 {
        var r: UInt64 = 0
        for i in 0..<6 { r |= (value >> (8 * UInt64(i)) & 0xFF) << (8 * UInt64(5 - i)) }
        return r
    }
}

/// While collecting: the attributes whose values are identifiers (GAP Device Name 0x2A00, Serial Number String
/// 0x2A25), learnt from characteristic declarations, and the values read from them (Read, Read By Type), across
/// ACL fragments. Requests and their responses are paired per link and direction.
final class AttributeWatch {
    static let deviceName: UInt16 = 0x2A00
    static let serialNumber: UInt16 = 0x2A25
    static let limit = 4096

    /// (ACL handle << 2 | request direction) → the attribute of the last Read Request, the type of the last Read
    /// By Type Request.
    @exclusivity(unchecked) var reads: [Int: UInt16] = [:]
    @exclusivity(unchecked) var types: [Int: UInt16] = [:]
    /// ACL handle → value handle → what its value is.
    @exclusivity(unchecked) var valueHandles: [Int: [UInt16: CapturedIdentifiers.Kind]] = [:]
    /// ACL handle → a value arriving in fragments: what it is, its bytes so far, bytes still to come.
    @exclusivity(unchecked) var partial: [Int: (kind: CapturedIdentifiers.Kind, bytes: [UInt8], remaining: Int)] = [:]

    static func code(_ d: Direction) -> Int { Int(d.rawValue) & 3 }
    /// The direction of the request a response in direction `d` answers.
    static func requestCode(answeredIn d: Direction) -> Int {
        switch d {
        case .sent: code(.received)
        case .received: code(.sent)
        case .unknown: code(.unknown)
        }
    }

    func linkClosed(handle: Int) {
        guard handle >= 0 else { return }
        valueHandles[handle] = nil
        partial[handle] = nil
        for d in 0..<3 { reads[handle << 2 | d] = nil; types[handle << 2 | d] = nil }
    }

    func kind(of uuid: UInt16) -> CapturedIdentifiers.Kind? {
        uuid == Self.deviceName ? .name : uuid == Self.serialNumber ? .serialNumber : nil
    }

    /// The first fragment of an ATT PDU at `a` (the L2CAP header before it).
    func att(_ p: UnsafeMutableRawBufferPointer, at a: Int, handle: Int, direction: Direction, into found: CapturedIdentifiers?) {
        guard a < p.count, let found else { return }
        partial[handle] = nil
        let pduLength = Int(p[4]) | Int(p[5]) << 8
        let end = min(p.count, a + pduLength)
        func u16(_ at: Int) -> UInt16 { at + 1 < end ? UInt16(p[at]) | UInt16(p[at + 1]) << 8 : 0 }
        let own = handle << 2 | Self.code(direction), asked = handle << 2 | Self.requestCode(answeredIn: direction)
        switch p[a] {
        case 0x0A:  // Read Request
            if reads.count < Self.limit || reads[own] != nil { reads[own] = u16(a + 1) }
        case 0x08:  // Read By Type Request: a 16-bit type
            if types.count < Self.limit || types[own] != nil { types[own] = pduLength == 7 ? u16(a + 5) : 0 }
        case 0x0B:  // Read Response
            guard let attribute = reads[asked], let kind = valueHandles[handle]?[attribute] else { return }
            reads[asked] = nil
            let bytes = Array(p[(a + 1)..<max(a + 1, end)])
            let remaining = a + pduLength - p.count
            if remaining > 0 {
                partial[handle] = (kind, bytes, remaining)
            } else {
                found.attributeValue(bytes, kind: kind)
            }
        case 0x09:  // Read By Type Response: length, then (handle, value) elements
            guard let type = types[asked], a + 2 <= end else { return }
            let element = Int(p[a + 1])
            guard element > 2 else { return }
            var e = a + 2
            if type == 0x2803 {
                // Characteristic declarations: handle, properties, value handle, 16-bit UUID.
                guard element == 7 else { return }
                while e + element <= end {
                    if let kind = kind(of: u16(e + 5)), (valueHandles[handle]?.count ?? 0) < 64 {
                        valueHandles[handle, default: [:]][u16(e + 3)] = kind
                    }
                    e += element
                }
            } else if let kind = kind(of: type) {
                while e + element <= end {
                    found.attributeValue(Array(p[(e + 2)..<(e + element)]), kind: kind)
                    e += element
                }
            }
        default:
            break
        }
    }

    /// A continuation fragment: more of a value being read.
    func continuation(_ p: UnsafeMutableRawBufferPointer, handle: Int, into found: CapturedIdentifiers?) {
        guard var value = partial[handle], let found else { return }
        let take = min(value.remaining, max(0, p.count - 4))
        if take > 0 { value.bytes += Array(p[4..<(4 + take)]) }
        value.remaining -= take
        if value.remaining <= 0 || value.bytes.count > 512 {
            partial[handle] = nil
            found.attributeValue(value.bytes, kind: value.kind)
        } else {
            partial[handle] = value
        }
    }
}
