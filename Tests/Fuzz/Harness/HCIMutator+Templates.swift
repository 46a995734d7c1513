/// The packets `HCIMutator` inserts: what a central's host and controller exchange (Core Vol 4 Part E §7 commands
/// and events, Vol 3 Part A L2CAP signalling, Part F ATT, Part H SMP), on a handle and peer address the input knows.
extension HCIMutator {
    static func le16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }

    static func command(_ opcode: UInt16, _ parameters: [UInt8]) -> Packet {
        Packet(kind: RecordFrames.commandByte, aux: 0, bytes: le16(opcode) + [UInt8(parameters.count)] + parameters)
    }

    static func event(_ code: UInt8, _ parameters: [UInt8]) -> Packet {
        Packet(kind: RecordFrames.eventByte, aux: 1, bytes: [code, UInt8(parameters.count)] + parameters)
    }

    static func commandComplete(_ opcode: UInt16) -> Packet { event(0x0E, [0x01] + le16(opcode) + [0x00]) }

    /// One L2CAP PDU in one ACL packet (a first fragment, as a controller sends it).
    static func acl(_ handle: UInt16, channel: UInt16, _ payload: [UInt8], received: Bool) -> Packet {
        let l2cap = le16(UInt16(payload.count)) + le16(channel) + payload
        return Packet(kind: RecordFrames.aclByte, aux: received ? 1 : 0,
                      bytes: le16(handle & 0x0FFF | 0x2000) + le16(UInt16(l2cap.count)) + l2cap)
    }

    /// A packet, or a request with its answer, chosen at random.
    mutating func template(_ known: Known) -> [Packet] {
        let h = known.handles[random.below(known.handles.count)]
        let address = known.addresses[random.below(known.addresses.count)]
        let handle = Self.le16(h)
        let attribute = Self.le16(UInt16(1 + random.below(32)))
        // Requests from the central and answers from the peripheral, or the other way round.
        let peer = random.below(4) != 0
        func att(_ request: [UInt8], _ answer: [UInt8]) -> [Packet] {
            [Self.acl(h, channel: 4, request, received: !peer), Self.acl(h, channel: 4, answer, received: peer)]
        }
        let identifier = random.byte() | 1
        switch random.below(26) {
        case 0:
            return [Self.command(0x200B, [0x01, 0x10, 0x00, 0x10, 0x00, 0x00, 0x00]), Self.commandComplete(0x200B)]
        case 1:
            let enable = random.byte() & 1
            return [Self.command(0x200C, [enable, 0x01]), Self.commandComplete(0x200C)]
        case 2:
            // An advertising report: ADV_IND … SCAN_RSP, flags and a name.
            let type = UInt8(random.below(5))
            let data: [UInt8] = [0x02, 0x01, 0x06, 0x05, 0x09, 0x62, 0x74, 0x6C, 0x7A]
            return [Self.event(0x3E, [0x02, 0x01, type, 0x00] + address + [UInt8(data.count)] + data + [0xC0 | random.byte() & 0x3F])]
        case 3:
            return [Self.command(0x200D, [0x60, 0x00, 0x30, 0x00, 0x00, 0x00] + address
                                 + [0x00, 0x18, 0x00, 0x28, 0x00, 0x00, 0x00, 0xC8, 0x00, 0x00, 0x00, 0x00, 0x00]),
                    Self.event(0x0F, [0x00, 0x01] + Self.le16(0x200D))]
        case 4:
            return [Self.event(0x3E, [0x01, 0x00] + handle + [random.byte() & 1, 0x00] + address + [0x18, 0x00, 0x00, 0x00, 0xC8, 0x00, 0x00])]
        case 5:
            return [Self.event(0x3E, [0x0A, 0x00] + handle + [random.byte() & 1, 0x00] + address + [UInt8](repeating: 0, count: 12)
                               + [0x18, 0x00, 0x00, 0x00, 0xC8, 0x00, 0x00])]
        case 6:
            return [Self.command(0x0406, handle + [0x13]), Self.event(0x0F, [0x00, 0x01] + Self.le16(0x0406)),
                    Self.event(0x05, [0x00] + handle + [0x16])]
        case 7:
            return [Self.event(0x05, [0x00] + handle + [[0x08, 0x13, 0x16, 0x3E][random.below(4)]])]
        case 8:
            return [Self.event(0x13, [0x01] + handle + [UInt8(1 + random.below(4)), 0x00])]
        case 9:
            return [Self.command(0x2013, handle + [0x06, 0x00, 0x0C, 0x00, 0x00, 0x00, 0xC8, 0x00, 0x00, 0x00, 0x00, 0x00]),
                    Self.event(0x0F, [0x00, 0x01] + Self.le16(0x2013)),
                    Self.event(0x3E, [0x03, 0x00] + handle + [0x06 + random.byte() & 0x3F, 0x00, 0x00, 0x00, 0xC8, 0x00])]
        case 10:
            return [Self.event(0x3E, [0x07] + handle + [0xFB, 0x00, 0x48, 0x08, 0xFB, 0x00, 0x48, 0x08])]
        case 11:
            return [Self.event(0x3E, [0x0C, 0x00] + handle + [0x02, 0x02])]
        case 12:
            return [Self.event(0x08, [0x00] + handle + [0x01])]
        case 13:
            return att([0x02, 0xF7, 0x00], [0x03, 0x17 + random.byte() & 0x7F, 0x00])
        case 14:
            return att([0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28], [0x11, 0x06, 0x01, 0x00, 0x05, 0x00, 0x0D, 0x18])
        case 15:
            return att([0x08, 0x01, 0x00, 0xFF, 0xFF, 0x03, 0x28], [0x09, 0x07] + attribute + [0x10] + attribute + [0x37, 0x2A])
        case 16:
            return att([0x04, 0x01, 0x00, 0xFF, 0xFF], [0x05, 0x01] + attribute + [0x02, 0x29])
        case 17:
            return att([0x0A] + attribute, [0x0B, 0x00, 0x48, 0x65])
        case 18:
            return att([0x12] + attribute + [0x01, 0x00], [0x13])
        case 19:
            return att([0x0A] + attribute, [0x01, 0x0A] + attribute + [[0x02, 0x05, 0x0A, 0x0F][random.below(4)]])
        case 20:
            // A notification, or an indication and its confirmation.
            return random.byte() & 1 == 0 ? [Self.acl(h, channel: 4, [0x1B] + attribute + [0x00, 0x48], received: peer)]
                : [Self.acl(h, channel: 4, [0x1D] + attribute + [0x01], received: peer), Self.acl(h, channel: 4, [0x1E], received: !peer)]
        case 21:
            return [Self.acl(h, channel: 4, [0x52] + attribute + [0x01, 0x00], received: !peer)]
        case 22:
            // SMP: pairing request and response, or a security request, or a failure.
            return [[Self.acl(h, channel: 6, [0x01, 0x03, 0x00, 0x0D, 0x10, 0x07, 0x07], received: false),
                     Self.acl(h, channel: 6, [0x02, 0x03, 0x00, 0x0D, 0x10, 0x07, 0x07], received: true)],
                    [Self.acl(h, channel: 6, [0x0B, 0x0D], received: true)],
                    [Self.acl(h, channel: 6, [0x05, 0x08], received: true)]][random.below(3)]
        case 23:
            // Connection parameter update over LE signalling, and the host's answer.
            return [Self.acl(h, channel: 5, [0x12, identifier, 0x08, 0x00, 0x06, 0x00, 0x0C, 0x00, 0x00, 0x00, 0xC8, 0x00], received: true),
                    Self.acl(h, channel: 5, [0x13, identifier, 0x02, 0x00, random.byte() & 1, 0x00], received: false)]
        case 24:
            // An LE credit-based channel for EATT (PSM 0x27), then an ATT request on it (a K-frame: SDU length first).
            let channel = UInt16(0x40 + random.below(4))
            return [Self.acl(h, channel: 5, [0x14, identifier, 0x0A, 0x00, 0x27, 0x00] + Self.le16(channel) + [0x00, 0x02, 0xF7, 0x00, 0x0A, 0x00], received: false),
                    Self.acl(h, channel: 5, [0x15, identifier, 0x0A, 0x00] + Self.le16(channel) + [0x00, 0x02, 0xF7, 0x00, 0x0A, 0x00, 0x00, 0x00], received: true),
                    Self.acl(h, channel: channel, [0x03, 0x00, 0x0A] + attribute, received: false),
                    Self.acl(h, channel: channel, [0x03, 0x00, 0x0B, 0x00, 0x48], received: true)]
        default:
            return [Self.acl(h, channel: 5, [0x16, identifier, 0x04, 0x00, 0x40, 0x00, 0x05, 0x00], received: true)]
        }
    }
}
