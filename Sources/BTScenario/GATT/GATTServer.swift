import BTWire

/// A GATT server over a `GATTDatabase`: it answers ATT requests as Core Vol 3 Part F §3.4 and Part G §4
/// describe, so the client procedures see real responses (entry sizes, MTU limits, Attribute Not Found at
/// the end of a search) rather than canned ones.
public final class GATTServer {
    public private(set) var database: GATTDatabase
    /// The MTU this server offers in Exchange MTU.
    public var rxMTU: UInt16
    /// The MTU in force on the bearer (set by the channel after the exchange).
    public var mtu = ATTPDU.defaultMTU
    /// Whether the link is encrypted (attributes with `.encrypted` need it).
    public var linkEncrypted = false
    /// Requests the server never answers: an unresponsive device, for ATT-timeout scenarios.
    public var unresponsive = false
    var prepareQueue: [(handle: UInt16, offset: Int, part: [UInt8])] = []

    /// The largest value a Read By Type entry may carry (its length field is one byte, less the handle).
    static let maximumReadByTypeValue = 253

    public init(database: GATTDatabase, rxMTU: UInt16 = UInt16(ATTPDU.defaultMTU)) {
        self.database = database
        self.rxMTU = rxMTU
    }

    public func setValue(_ value: [UInt8], at handle: UInt16) { database.setValue(value, at: handle) }
    public func value(at handle: UInt16) -> [UInt8] { database.attribute(handle)?.value ?? [] }

    /// The response to `request`, or nil for PDUs that get none (commands, confirmations).
    public func respond(to request: [UInt8]) -> [UInt8]? {
        guard !unresponsive else { return nil }
        return request.withUnsafeBytes { raw -> [UInt8]? in
            var r = ByteReader(raw)
            guard let op = r.readU8().map(ATTOpcode.init(rawValue:)) else { return nil }
            switch op {
            case .exchangeMTURequest: return ATTPDU.exchangeMTUResponse(rxMTU)
            case .readByGroupTypeRequest: return readByGroupType(&r)
            case .findByTypeValueRequest: return findByTypeValue(&r)
            case .readByTypeRequest: return readByType(&r)
            case .findInformationRequest: return findInformation(&r)
            case .readRequest: return read(&r, blob: false)
            case .readBlobRequest: return read(&r, blob: true)
            case .writeRequest: return write(&r)
            case .writeCommand:
                _ = write(&r)
                return nil
            case .prepareWriteRequest: return prepareWrite(&r, request: request)
            case .executeWriteRequest: return executeWrite(&r)
            case .handleValueConfirmation: return nil
            default:
                guard op.isRequest else { return nil }
                return ATTPDU.errorResponse(request: op, handle: 0, error: .requestNotSupported)
            }
        }
    }

    func error(_ op: ATTOpcode, _ handle: UInt16, _ code: ATTErrorCode) -> [UInt8] {
        ATTPDU.errorResponse(request: op, handle: handle, error: code)
    }

    func readUUID(_ r: inout ByteReader) -> BluetoothUUID? {
        BluetoothUUID(littleEndianBytes: r.readRest())
    }

    func readByGroupType(_ r: inout ByteReader) -> [UInt8] {
        let op = ATTOpcode.readByGroupTypeRequest
        guard let start = r.readU16(), let end = r.readU16(), let type = readUUID(&r), start != 0, start <= end else {
            return error(op, 0, .invalidHandle)
        }
        guard type == GATTUUID.primaryService || type == GATTUUID.secondaryService else {
            return error(op, start, ScenarioCodes.unsupportedGroupType)
        }
        let matches = database.services.filter {
            $0.startHandle >= start && $0.startHandle <= end && ($0.isPrimary == (type == GATTUUID.primaryService))
        }
        guard let first = matches.first else { return error(op, start, .attributeNotFound) }
        let uuidLength = first.uuid.uuid16 == nil ? 16 : 2
        let entryLength = 4 + uuidLength
        let fit = (mtu - 2) / entryLength
        return ByteWriter.build { w in
            w.u8(ATTOpcode.readByGroupTypeResponse.rawValue)
            w.u8(UInt8(entryLength))
            for s in matches.prefix(while: { ($0.uuid.uuid16 == nil ? 16 : 2) == uuidLength }).prefix(fit) {
                w.u16(s.startHandle)
                w.u16(s.endHandle)
                w.uuid(s.uuid)
            }
        }
    }

    func findByTypeValue(_ r: inout ByteReader) -> [UInt8] {
        let op = ATTOpcode.findByTypeValueRequest
        guard let start = r.readU16(), let end = r.readU16(), let type16 = r.readU16(), start != 0, start <= end else {
            return error(op, 0, .invalidHandle)
        }
        let value = Array(r.readRest())
        let type = BluetoothUUID(uuid16: type16)
        let fit = (mtu - 1) / 4
        var entries: [(UInt16, UInt16)] = []
        for a in database.attributes(in: start, end) where a.type == type && a.value == value {
            let groupEnd = database.services.first { $0.startHandle == a.handle }?.endHandle ?? a.handle
            entries.append((a.handle, groupEnd))
            if entries.count == fit { break }
        }
        guard !entries.isEmpty else { return error(op, start, .attributeNotFound) }
        return ByteWriter.build { w in
            w.u8(ATTOpcode.findByTypeValueResponse.rawValue)
            for (h, e) in entries {
                w.u16(h)
                w.u16(e)
            }
        }
    }

    func readByType(_ r: inout ByteReader) -> [UInt8] {
        let op = ATTOpcode.readByTypeRequest
        guard let start = r.readU16(), let end = r.readU16(), let type = readUUID(&r), start != 0, start <= end else {
            return error(op, 0, .invalidHandle)
        }
        let matches = database.attributes(in: start, end).filter { $0.type == type }
        guard let first = matches.first else { return error(op, start, .attributeNotFound) }
        if let denied = accessError(first, write: false) { return error(op, first.handle, denied) }
        let valueLength = min(first.value.count, mtu - 4, Self.maximumReadByTypeValue)
        let fit = (mtu - 2) / (2 + valueLength)
        return ByteWriter.build { w in
            w.u8(ATTOpcode.readByTypeResponse.rawValue)
            w.u8(UInt8(2 + valueLength))
            for a in matches.prefix(fit) {
                guard accessError(a, write: false) == nil, min(a.value.count, mtu - 4) == valueLength else { break }
                w.u16(a.handle)
                w.append(a.value.prefix(valueLength))
            }
        }
    }

    func findInformation(_ r: inout ByteReader) -> [UInt8] {
        let op = ATTOpcode.findInformationRequest
        guard let start = r.readU16(), let end = r.readU16(), start != 0, start <= end else {
            return error(op, 0, .invalidHandle)
        }
        let matches = database.attributes(in: start, end)
        guard let first = matches.first else { return error(op, start, .attributeNotFound) }
        let short = first.type.uuid16 != nil
        let entryLength = short ? 4 : 18
        let fit = (mtu - 2) / entryLength
        return ByteWriter.build { w in
            w.u8(ATTOpcode.findInformationResponse.rawValue)
            w.u8(short ? ATTFindInformationFormat.uuid16 : ATTFindInformationFormat.uuid128)
            for a in matches.prefix(while: { ($0.type.uuid16 != nil) == short }).prefix(fit) {
                w.u16(a.handle)
                if short { w.uuid(a.type) } else { w.uuid128(a.type) }
            }
        }
    }

    func read(_ r: inout ByteReader, blob: Bool) -> [UInt8] {
        let op: ATTOpcode = blob ? .readBlobRequest : .readRequest
        guard let handle = r.readU16() else { return error(op, 0, .invalidHandle) }
        let offset = blob ? Int(r.readU16() ?? 0) : 0
        guard let a = database.attribute(handle) else { return error(op, handle, .invalidHandle) }
        if let denied = accessError(a, write: false) { return error(op, handle, denied) }
        guard offset <= a.value.count else { return error(op, handle, ScenarioCodes.invalidOffset) }
        return ByteWriter.build { w in
            w.u8((blob ? ATTOpcode.readBlobResponse : ATTOpcode.readResponse).rawValue)
            w.append(a.value[offset...].prefix(mtu - 1))
        }
    }

    func write(_ r: inout ByteReader) -> [UInt8] {
        let op = ATTOpcode.writeRequest
        guard let handle = r.readU16() else { return error(op, 0, .invalidHandle) }
        guard let a = database.attribute(handle) else { return error(op, handle, .invalidHandle) }
        if let denied = accessError(a, write: true) { return error(op, handle, denied) }
        database.setValue(Array(r.readRest()), at: handle)
        return ATTPDU.writeResponse
    }

    func prepareWrite(_ r: inout ByteReader, request: [UInt8]) -> [UInt8] {
        let op = ATTOpcode.prepareWriteRequest
        guard let handle = r.readU16(), let offset = r.readU16() else { return error(op, 0, .invalidHandle) }
        guard let a = database.attribute(handle) else { return error(op, handle, .invalidHandle) }
        if let denied = accessError(a, write: true) { return error(op, handle, denied) }
        prepareQueue.append((handle, Int(offset), Array(r.readRest())))
        var echo = request
        echo[0] = ATTOpcode.prepareWriteResponse.rawValue
        return echo
    }

    func executeWrite(_ r: inout ByteReader) -> [UInt8] {
        let commit = r.readU8() == ATTPDU.executeWriteCommit
        defer { prepareQueue.removeAll() }
        if commit {
            for item in prepareQueue {
                var value = database.attribute(item.handle)?.value ?? []
                if item.offset > value.count {
                    return error(.executeWriteRequest, item.handle, ScenarioCodes.invalidOffset)
                }
                value.replaceSubrange(item.offset..<min(value.count, item.offset + item.part.count), with: item.part)
                database.setValue(value, at: item.handle)
            }
        }
        return ATTPDU.executeWriteResponse
    }

    func accessError(_ a: GATTAttribute, write: Bool) -> ATTErrorCode? {
        if !a.permissions.contains(write ? .write : .read) {
            return write ? .writeNotPermitted : .readNotPermitted
        }
        if a.permissions.contains(.encrypted) && !linkEncrypted { return ScenarioCodes.insufficientAuthentication }
        return nil
    }
}

/// Find Information Response formats.
public enum ATTFindInformationFormat {
    public static let uuid16: UInt8 = 0x01
    public static let uuid128: UInt8 = 0x02
}
