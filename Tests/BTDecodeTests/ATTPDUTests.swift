import BTDecode
import BTWire
import Testing

/// Decodes `bytes` as one ATT PDU and hands it to `body` while the bytes are alive (the PDU borrows them).
private func att<R>(_ bytes: [UInt8], _ body: (ATTPDU) throws -> R) rethrows -> R {
    try bytes.withUnsafeBytes { try body(ATTPDU($0)) }
}

/// The value of the field called `name`, searching children too.
private func field(_ fields: [DecodedField], _ name: String) -> String? {
    for f in fields {
        if f.name == name { return f.value }
        if let v = field(f.children, name) { return v }
    }
    return nil
}

private func bytes(_ raw: UnsafeRawBufferPointer) -> [UInt8] { Array(raw) }

@Suite("ATT PDU decoding")
struct ATTPDUTests {
    // MARK: Error and MTU

    @Test func errorResponse() {
        // 01 Error Response | 08 request opcode Read By Type Request | 10 00 handle 0x0010 | 0a Attribute Not Found
        att([0x01, 0x08, 0x10, 0x00, 0x0A]) { pdu in
            guard case .errorResponse(let request, let handle, let error) = pdu else {
                Issue.record("decoded as \(pdu.summary)"); return
            }
            #expect(request == .readByTypeRequest)
            #expect(handle == 0x0010)
            #expect(error == .attributeNotFound)
            #expect(pdu.opcode == .errorResponse)
            #expect(pdu.attributeHandle == 0x0010)
            #expect(pdu.summary == "Error Response to Read By Type Request handle 0x0010: Attribute Not Found (0x0a)")
            #expect(field(pdu.fields, "Request Opcode") == "Read By Type Request (0x08)")
            #expect(field(pdu.fields, "Error Code") == "Attribute Not Found (0x0a)")
        }
    }

    @Test func exchangeMTU() {
        // 02 Exchange MTU Request | 05 02 client rx mtu 517
        att([0x02, 0x05, 0x02]) { pdu in
            guard case .exchangeMTURequest(let mtu) = pdu else { Issue.record("decoded as \(pdu.summary)"); return }
            #expect(mtu == 517)
            #expect(pdu.summary == "Exchange MTU Request client rx mtu 517")
            #expect(field(pdu.fields, "Client Rx MTU") == "517")
            #expect(pdu.attributeHandle == nil)
        }
        // 03 Exchange MTU Response | f7 00 server rx mtu 247
        att([0x03, 0xF7, 0x00]) { pdu in
            guard case .exchangeMTUResponse(let mtu) = pdu else { Issue.record("decoded as \(pdu.summary)"); return }
            #expect(mtu == 247)
            #expect(pdu.summary == "Exchange MTU Response server rx mtu 247")
        }
    }

    // MARK: Discovery

    @Test func findInformationRequest() {
        // 04 Find Information Request | 13 00 start 0x0013 | 15 00 end 0x0015
        att([0x04, 0x13, 0x00, 0x15, 0x00]) { pdu in
            guard case .findInformationRequest(let start, let end) = pdu else {
                Issue.record("decoded as \(pdu.summary)"); return
            }
            #expect(start == 0x0013 && end == 0x0015)
            #expect(pdu.summary == "Find Information Request 0x0013-0x0015")
            #expect(field(pdu.fields, "Starting Handle") == "0x0013")
            #expect(field(pdu.fields, "Ending Handle") == "0x0015")
        }
    }

    @Test func findInformationResponse16() {
        // 05 Find Information Response | 01 format 16-bit
        // 14 00 02 29  handle 0x0014 CCCD (2902)
        // 15 00 01 29  handle 0x0015 User Description (2901)
        att([0x05, 0x01, 0x14, 0x00, 0x02, 0x29, 0x15, 0x00, 0x01, 0x29]) { pdu in
            guard case .findInformationResponse(let data) = pdu else { Issue.record("decoded as \(pdu.summary)"); return }
            #expect(data.format == 1)
            let entries = Array(data)
            #expect(entries.count == 2)
            #expect(entries.map(\.handle) == [0x0014, 0x0015])
            #expect(entries.map(\.uuid) == [.clientCharacteristicConfiguration, BluetoothUUID(uuid16: 0x2901)])
            #expect(data.trailingBytes.isEmpty)
            #expect(pdu.summary == "Find Information Response 2 entries (16-bit)")
            #expect(field(pdu.fields, "Handle 0x0014") == "Client Characteristic Configuration (2902)")
        }
    }

    @Test func findInformationResponse128() {
        // 05 Find Information Response | 02 format 128-bit
        // 20 00 handle 0x0020, then 6e400002-b5a3-f393-e0a9-e50e24dcca9e (Nordic UART RX) byte-reversed
        att([0x05, 0x02, 0x20, 0x00,
             0x9E, 0xCA, 0xDC, 0x24, 0x0E, 0xE5, 0xA9, 0xE0, 0x93, 0xF3, 0xA3, 0xB5, 0x02, 0x00, 0x40, 0x6E]) { pdu in
            guard case .findInformationResponse(let data) = pdu else { Issue.record("decoded as \(pdu.summary)"); return }
            #expect(data.format == 2)
            let entries = Array(data)
            #expect(entries.count == 1)
            #expect(entries.first?.handle == 0x0020)
            #expect(entries.first?.uuid.description == "6e400002-b5a3-f393-e0a9-e50e24dcca9e")
        }
    }

    @Test func findByTypeValue() {
        // 06 Find By Type Value Request | 01 00 start | ff ff end | 00 28 type Primary Service | 0d 18 value 0x180d
        att([0x06, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28, 0x0D, 0x18]) { pdu in
            guard case .findByTypeValueRequest(let start, let end, let type, let value) = pdu else {
                Issue.record("decoded as \(pdu.summary)"); return
            }
            #expect(start == 1 && end == 0xFFFF)
            #expect(type == .primaryService)
            #expect(bytes(value) == [0x0D, 0x18])
            #expect(pdu.summary == "Find By Type Value Request 0x0001-0xffff Primary Service (2800) value Heart Rate (180d)")
            #expect(field(pdu.fields, "Attribute Type") == "Primary Service (2800)")
        }
        // 07 Find By Type Value Response | 10 00 1f 00 found 0x0010 end 0x001f | 20 00 ff ff found 0x0020 end 0xffff
        att([0x07, 0x10, 0x00, 0x1F, 0x00, 0x20, 0x00, 0xFF, 0xFF]) { pdu in
            guard case .findByTypeValueResponse(let list) = pdu else { Issue.record("decoded as \(pdu.summary)"); return }
            let entries = Array(list)
            #expect(entries.map(\.foundAttributeHandle) == [0x0010, 0x0020])
            #expect(entries.map(\.groupEndHandle) == [0x001F, 0xFFFF])
            #expect(pdu.summary == "Find By Type Value Response 0x0010-0x001f,0x0020-0xffff")
            #expect(field(pdu.fields, "Handle 0x0020") == "group end 0xffff")
        }
    }

    @Test func readByTypeRequest() {
        // 08 Read By Type Request | 01 00 start | 05 00 end | 03 28 Characteristic
        att([0x08, 0x01, 0x00, 0x05, 0x00, 0x03, 0x28]) { pdu in
            guard case .readByTypeRequest(let start, let end, let type) = pdu else {
                Issue.record("decoded as \(pdu.summary)"); return
            }
            #expect(start == 1 && end == 5)
            #expect(type == .characteristic)
            #expect(pdu.summary == "Read By Type Request 0x0001-0x0005 Characteristic (2803)")
        }
        // Same with a 128-bit type: 0x2a00 written as a full little-endian UUID
        att([0x08, 0x01, 0x00, 0xFF, 0xFF,
             0xFB, 0x34, 0x9B, 0x5F, 0x80, 0x00, 0x00, 0x80, 0x00, 0x10, 0x00, 0x00, 0x00, 0x2A, 0x00, 0x00]) { pdu in
            guard case .readByTypeRequest(_, _, let type) = pdu else { Issue.record("decoded as \(pdu.summary)"); return }
            #expect(type == BluetoothUUID(uuid16: 0x2A00))
        }
    }

    @Test func readByTypeResponseCharacteristics() {
        // 09 Read By Type Response | 07 entry length
        // 02 00 | 02 03 00 00 2a   decl 0x0002: props read, value 0x0003, Device Name
        // 04 00 | 12 05 00 01 2a   decl 0x0004: props read+notify, value 0x0005, Appearance
        att([0x09, 0x07,
             0x02, 0x00, 0x02, 0x03, 0x00, 0x00, 0x2A,
             0x04, 0x00, 0x12, 0x05, 0x00, 0x01, 0x2A]) { pdu in
            guard case .readByTypeResponse(let list) = pdu else { Issue.record("decoded as \(pdu.summary)"); return }
            #expect(list.length == 7)
            #expect(list.count == 2)
            let entries = Array(list)
            #expect(entries.map(\.handle) == [0x0002, 0x0004])
            let decls = entries.compactMap(\.characteristicDeclaration)
            #expect(decls == [
                CharacteristicDeclaration(properties: .read, valueHandle: 0x0003, uuid: BluetoothUUID(uuid16: 0x2A00)),
                CharacteristicDeclaration(properties: [.read, .notify], valueHandle: 0x0005,
                                          uuid: BluetoothUUID(uuid16: 0x2A01)),
            ])
            #expect(list.looksLikeCharacteristicDeclarations)
            #expect(pdu.summary == "Read By Type Response len 7, 2 entries")
            #expect(field(pdu.fields, "Handle 0x0002") == "Characteristic Device Name (2a00) value 0x0003 props read")
            #expect(field(pdu.fields, "Value Handle") == "0x0003")
            // Told the request was for another type, the entries stay plain values.
            let plain = pdu.fields(readByTypeRequestType: BluetoothUUID(uuid16: 0x2A00))
            #expect(field(plain, "Handle 0x0002") == "020300002a")
        }
    }

    @Test func readByTypeResponseValues() {
        // 09 Read By Type Response | 05 entry length | 03 00 handle 0x0003 | 50 6f 6c 61 "Pol"… cut to 3 bytes
        // then 2 trailing bytes (a partial entry)
        att([0x09, 0x05, 0x03, 0x00, 0x50, 0x6F, 0x6C, 0xAA, 0xBB]) { pdu in
            guard case .readByTypeResponse(let list) = pdu else { Issue.record("decoded as \(pdu.summary)"); return }
            let entries = Array(list)
            #expect(entries.count == 1)
            #expect(bytes(entries[0].value) == [0x50, 0x6F, 0x6C])
            #expect(bytes(list.trailingBytes) == [0xAA, 0xBB])
            #expect(!list.looksLikeCharacteristicDeclarations)
            #expect(field(pdu.fields, "Handle 0x0003") == "506f6c \"Pol\"")
            #expect(field(pdu.fields, "Trailing Bytes") == "aabb")
            #expect(pdu.summary == "Read By Type Response len 5, 1 entry (+2 trailing bytes)")
        }
    }

    // MARK: Reads

    @Test func readRequestAndResponse() {
        // 0a Read Request | 2a 00 handle 0x002a
        att([0x0A, 0x2A, 0x00]) { pdu in
            guard case .readRequest(let handle) = pdu else { Issue.record("decoded as \(pdu.summary)"); return }
            #expect(handle == 0x002A)
            #expect(pdu.attributeHandle == 0x002A)
            #expect(pdu.summary == "Read Request handle 0x002a")
            #expect(field(pdu.fields, "Attribute Handle") == "0x002a")
        }
        // 0b Read Response | "Polar H10"
        att([0x0B, 0x50, 0x6F, 0x6C, 0x61, 0x72, 0x20, 0x48, 0x31, 0x30]) { pdu in
            guard case .readResponse(let value) = pdu else { Issue.record("decoded as \(pdu.summary)"); return }
            #expect(String(decoding: value, as: UTF8.self) == "Polar H10")
            #expect(pdu.attributeValue?.count == 9)
            #expect(pdu.summary == "Read Response len 9")
            #expect(field(pdu.fields, "Attribute Value") == "506f6c617220483130 \"Polar H10\"")
        }
        // 0b Read Response | 64 battery level 100 % (not printable: hex only)
        att([0x0B, 0x05]) { pdu in
            #expect(field(pdu.fields, "Attribute Value") == "05")
        }
    }

    @Test func readBlob() {
        // 0c Read Blob Request | 2a 00 handle | 16 00 offset 22
        att([0x0C, 0x2A, 0x00, 0x16, 0x00]) { pdu in
            guard case .readBlobRequest(let handle, let offset) = pdu else { Issue.record("decoded as \(pdu.summary)"); return }
            #expect(handle == 0x002A && offset == 22)
            #expect(pdu.attributeHandle == 0x002A)
            #expect(pdu.summary == "Read Blob Request handle 0x002a offset 22")
            #expect(field(pdu.fields, "Value Offset") == "22")
        }
        // 0d Read Blob Response | 01 02 03
        att([0x0D, 0x01, 0x02, 0x03]) { pdu in
            guard case .readBlobResponse(let part) = pdu else { Issue.record("decoded as \(pdu.summary)"); return }
            #expect(bytes(part) == [1, 2, 3])
            #expect(field(pdu.fields, "Part Attribute Value") == "010203")
        }
    }

    @Test func readMultiple() {
        // 0e Read Multiple Request | 03 00 | 05 00  handles 0x0003, 0x0005
        att([0x0E, 0x03, 0x00, 0x05, 0x00]) { pdu in
            guard case .readMultipleRequest(let handles) = pdu else { Issue.record("decoded as \(pdu.summary)"); return }
            #expect(Array(handles) == [0x0003, 0x0005])
            #expect(handles.trailingBytes.isEmpty)
            #expect(pdu.attributeHandle == nil)
            #expect(pdu.summary == "Read Multiple Request handles 0x0003,0x0005")
            #expect(field(pdu.fields, "Set Of Handles") == "0x0003, 0x0005")
        }
        // 0f Read Multiple Response | 64 | 01 02  (values back to back, no lengths)
        att([0x0F, 0x64, 0x01, 0x02]) { pdu in
            guard case .readMultipleResponse(let values) = pdu else { Issue.record("decoded as \(pdu.summary)"); return }
            #expect(bytes(values) == [0x64, 0x01, 0x02])
            #expect(pdu.summary == "Read Multiple Response len 3")
        }
    }

    @Test func readByGroupType() {
        // 10 Read By Group Type Request | 01 00 start | ff ff end | 00 28 Primary Service
        att([0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28]) { pdu in
            guard case .readByGroupTypeRequest(let start, let end, let type) = pdu else {
                Issue.record("decoded as \(pdu.summary)"); return
            }
            #expect(start == 0x0001 && end == 0xFFFF)
            #expect(type == .primaryService)
            #expect(pdu.summary == "Read By Group Type Request 0x0001-0xffff Primary Service (2800)")
            #expect(field(pdu.fields, "Attribute Group Type") == "Primary Service (2800)")
        }
        // 11 Read By Group Type Response | 06 entry length
        // 01 00 07 00 00 18  0x0001-0x0007 Generic Access
        // 08 00 0b 00 01 18  0x0008-0x000b Generic Attribute
        att([0x11, 0x06, 0x01, 0x00, 0x07, 0x00, 0x00, 0x18, 0x08, 0x00, 0x0B, 0x00, 0x01, 0x18]) { pdu in
            guard case .readByGroupTypeResponse(let list) = pdu else { Issue.record("decoded as \(pdu.summary)"); return }
            #expect(list.length == 6)
            let entries = Array(list)
            #expect(entries.map(\.handle) == [0x0001, 0x0008])
            #expect(entries.map(\.endGroupHandle) == [0x0007, 0x000B])
            #expect(entries.map(\.uuid) == [BluetoothUUID(uuid16: 0x1800), BluetoothUUID(uuid16: 0x1801)])
            #expect(pdu.summary == "Read By Group Type Response len 6, 2 entries")
            #expect(field(pdu.fields, "Handles 0x0001-0x0007") == "Generic Access (1800)")
        }
    }

    @Test func readByGroupTypeResponse128BitUUIDByteOrder() {
        // 11 Read By Group Type Response | 14 entry length 20
        // 0c 00 ff ff  handles 0x000c-0xffff
        // fb 34 9b 5f 80 00 00 80 00 10 00 00 0d 18 00 00  = 0x180d written as a 128-bit LE UUID
        att([0x11, 0x14, 0x0C, 0x00, 0xFF, 0xFF,
             0xFB, 0x34, 0x9B, 0x5F, 0x80, 0x00, 0x00, 0x80, 0x00, 0x10, 0x00, 0x00, 0x0D, 0x18, 0x00, 0x00]) { pdu in
            guard case .readByGroupTypeResponse(let list) = pdu else { Issue.record("decoded as \(pdu.summary)"); return }
            let uuid = Array(list).first?.uuid
            #expect(uuid?.description == "180d")
            #expect(uuid == BluetoothUUID(uuid16: 0x180D))
            #expect(field(pdu.fields, "Handles 0x000c-0xffff") == "Heart Rate (180d)")
        }
    }

    // MARK: Writes

    @Test func writeRequestToCCCD() {
        // 12 Write Request | 13 00 handle 0x0013 | 01 00 CCCD: notifications on
        att([0x12, 0x13, 0x00, 0x01, 0x00]) { pdu in
            guard case .writeRequest(let handle, let value) = pdu else { Issue.record("decoded as \(pdu.summary)"); return }
            #expect(handle == 0x0013)
            #expect(ClientCharacteristicConfiguration(value) == .notification)
            #expect(pdu.attributeHandle == 0x0013)
            #expect(pdu.summary == "Write Request handle 0x0013 len 2")
            #expect(field(pdu.fields, "Attribute Value") == "0100")
        }
        // 13 Write Response (no parameters)
        att([0x13]) { pdu in
            guard case .writeResponse = pdu else { Issue.record("decoded as \(pdu.summary)"); return }
            #expect(pdu.summary == "Write Response")
            #expect(pdu.fields.count == 1)
        }
    }

    @Test func cccdValues() {
        // 01 00 notify, 02 00 indicate, 00 00 off, 03 00 both; 3 bytes is not a CCCD value
        [UInt8](arrayLiteral: 0x01, 0x00).withUnsafeBytes { #expect(ClientCharacteristicConfiguration($0)?.description == "notify") }
        [UInt8](arrayLiteral: 0x02, 0x00).withUnsafeBytes { #expect(ClientCharacteristicConfiguration($0) == .indication) }
        [UInt8](arrayLiteral: 0x00, 0x00).withUnsafeBytes { #expect(ClientCharacteristicConfiguration($0) == .off) }
        [UInt8](arrayLiteral: 0x00, 0x00).withUnsafeBytes { #expect(ClientCharacteristicConfiguration($0)?.description == "off") }
        [UInt8](arrayLiteral: 0x03, 0x00).withUnsafeBytes {
            #expect(ClientCharacteristicConfiguration($0)?.description == "notify,indicate")
        }
        [UInt8](arrayLiteral: 0x01, 0x00, 0x00).withUnsafeBytes { #expect(ClientCharacteristicConfiguration($0) == nil) }
    }

    @Test func characteristicDeclarationValues() {
        // 1a props read+write+notify | 10 00 value handle 0x0010 | 128-bit UUID 6e400003-b5a3-f393-e0a9-e50e24dcca9e
        let decl: [UInt8] = [0x1A, 0x10, 0x00,
                             0x9E, 0xCA, 0xDC, 0x24, 0x0E, 0xE5, 0xA9, 0xE0, 0x93, 0xF3, 0xA3, 0xB5, 0x03, 0x00, 0x40, 0x6E]
        decl.withUnsafeBytes { raw in
            let d = CharacteristicDeclaration(raw)
            #expect(d?.properties == [.read, .write, .notify])
            #expect(d?.valueHandle == 0x0010)
            #expect(d?.uuid == BluetoothUUID("6e400003-b5a3-f393-e0a9-e50e24dcca9e"))
        }
        // 4 bytes: not a declaration
        [UInt8](arrayLiteral: 0x02, 0x03, 0x00, 0x00).withUnsafeBytes { #expect(CharacteristicDeclaration($0) == nil) }
    }

    @Test func prepareAndExecuteWrite() {
        // 16 Prepare Write Request | 13 00 handle | 00 00 offset 0 | 41 42 "AB"
        att([0x16, 0x13, 0x00, 0x00, 0x00, 0x41, 0x42]) { pdu in
            guard case .prepareWriteRequest(let handle, let offset, let part) = pdu else {
                Issue.record("decoded as \(pdu.summary)"); return
            }
            #expect(handle == 0x0013 && offset == 0 && bytes(part) == [0x41, 0x42])
            #expect(pdu.summary == "Prepare Write Request handle 0x0013 offset 0 len 2")
            #expect(field(pdu.fields, "Part Attribute Value") == "4142 \"AB\"")
        }
        // 17 Prepare Write Response echoing | 13 00 | 12 00 offset 18 | 43
        att([0x17, 0x13, 0x00, 0x12, 0x00, 0x43]) { pdu in
            guard case .prepareWriteResponse(let handle, let offset, let part) = pdu else {
                Issue.record("decoded as \(pdu.summary)"); return
            }
            #expect(handle == 0x0013 && offset == 18 && bytes(part) == [0x43])
            #expect(pdu.attributeHandle == 0x0013)
        }
        // 18 Execute Write Request | 01 write
        att([0x18, 0x01]) { pdu in
            guard case .executeWriteRequest(let flags) = pdu else { Issue.record("decoded as \(pdu.summary)"); return }
            #expect(flags == 1)
            #expect(pdu.summary == "Execute Write Request write")
            #expect(field(pdu.fields, "Flags") == "0x01 write")
        }
        // 18 Execute Write Request | 00 cancel
        att([0x18, 0x00]) { pdu in #expect(pdu.summary == "Execute Write Request cancel") }
        // 19 Execute Write Response
        att([0x19]) { pdu in
            guard case .executeWriteResponse = pdu else { Issue.record("decoded as \(pdu.summary)"); return }
            #expect(pdu.opcode == .executeWriteResponse)
        }
    }

    @Test func writeCommands() {
        // 52 Write Command | 15 00 handle 0x0015 | 68 69 "hi"
        att([0x52, 0x15, 0x00, 0x68, 0x69]) { pdu in
            guard case .writeCommand(let handle, let value) = pdu else { Issue.record("decoded as \(pdu.summary)"); return }
            #expect(handle == 0x0015 && bytes(value) == [0x68, 0x69])
            #expect(pdu.opcode.isCommand)
            #expect(pdu.summary == "Write Command handle 0x0015 len 2")
        }
        // d2 Signed Write Command | 15 00 handle | 01 02 value | 12-byte signature 00…0b
        att([0xD2, 0x15, 0x00, 0x01, 0x02] + (0...11).map(UInt8.init)) { pdu in
            guard case .signedWriteCommand(let handle, let value, let signature) = pdu else {
                Issue.record("decoded as \(pdu.summary)"); return
            }
            #expect(handle == 0x0015)
            #expect(bytes(value) == [0x01, 0x02])
            #expect(bytes(signature) == (0...11).map(UInt8.init))
            #expect(pdu.summary == "Signed Write Command handle 0x0015 len 2")
            #expect(field(pdu.fields, "Authentication Signature") == "000102030405060708090a0b")
        }
    }

    // MARK: Server-initiated

    @Test func notificationsAndIndications() {
        // 1b Handle Value Notification | 12 00 handle 0x0012 | 16 48 00 00 heart rate measurement
        att([0x1B, 0x12, 0x00, 0x16, 0x48, 0x00, 0x00]) { pdu in
            guard case .handleValueNotification(let handle, let value) = pdu else {
                Issue.record("decoded as \(pdu.summary)"); return
            }
            #expect(handle == 0x0012 && value.count == 4)
            #expect(pdu.summary == "Handle Value Notification handle 0x0012 len 4")
        }
        // 1d Handle Value Indication | 03 00 handle 0x0003 (Service Changed) | 01 00 ff ff range
        att([0x1D, 0x03, 0x00, 0x01, 0x00, 0xFF, 0xFF]) { pdu in
            guard case .handleValueIndication(let handle, let value) = pdu else {
                Issue.record("decoded as \(pdu.summary)"); return
            }
            #expect(handle == 0x0003 && bytes(value) == [0x01, 0x00, 0xFF, 0xFF])
            #expect(pdu.attributeHandle == 0x0003)
        }
        // 1e Handle Value Confirmation
        att([0x1E]) { pdu in
            guard case .handleValueConfirmation = pdu else { Issue.record("decoded as \(pdu.summary)"); return }
            #expect(pdu.summary == "Handle Value Confirmation")
        }
    }

    @Test func readMultipleVariable() {
        // 20 Read Multiple Variable Request | 03 00 | 05 00
        att([0x20, 0x03, 0x00, 0x05, 0x00]) { pdu in
            guard case .readMultipleVariableRequest(let handles) = pdu else {
                Issue.record("decoded as \(pdu.summary)"); return
            }
            #expect(Array(handles) == [0x0003, 0x0005])
            #expect(pdu.summary == "Read Multiple Variable Request handles 0x0003,0x0005")
        }
        // 21 Read Multiple Variable Response
        // 02 00 aa bb     length 2, value aabb
        // 05 00 cc dd     length 5, only 2 bytes present (truncated to fit the MTU)
        att([0x21, 0x02, 0x00, 0xAA, 0xBB, 0x05, 0x00, 0xCC, 0xDD]) { pdu in
            guard case .readMultipleVariableResponse(let tuples) = pdu else {
                Issue.record("decoded as \(pdu.summary)"); return
            }
            let entries = Array(tuples)
            #expect(entries.map(\.length) == [2, 5])
            #expect(entries.map { bytes($0.value) } == [[0xAA, 0xBB], [0xCC, 0xDD]])
            #expect(entries.map(\.isTruncated) == [false, true])
            #expect(pdu.summary == "Read Multiple Variable Response 2 values")
            #expect(field(pdu.fields, "Length 5") == "ccdd (truncated)")
        }
    }

    @Test func multipleHandleValueNotification() {
        // 23 Multiple Handle Value Notification
        // 12 00 02 00 aa bb   handle 0x0012, length 2, value aabb
        // 15 00 01 00 64      handle 0x0015, length 1, value 64
        // 00                  one stray byte
        att([0x23, 0x12, 0x00, 0x02, 0x00, 0xAA, 0xBB, 0x15, 0x00, 0x01, 0x00, 0x64, 0x00]) { pdu in
            guard case .multipleHandleValueNotification(let tuples) = pdu else {
                Issue.record("decoded as \(pdu.summary)"); return
            }
            let entries = Array(tuples)
            #expect(entries.map(\.handle) == [0x0012, 0x0015])
            #expect(entries.map { bytes($0.value) } == [[0xAA, 0xBB], [0x64]])
            #expect(bytes(tuples.trailingBytes) == [0x00])
            #expect(pdu.attributeHandle == nil)
            #expect(pdu.summary == "Multiple Handle Value Notification 2 values handles 0x0012,0x0015 (+1 trailing bytes)")
            #expect(field(pdu.fields, "Handle 0x0015") == "len 1 64 \"d\"")
        }
    }

    // MARK: Unknown and malformed

    @Test func unknownOpcode() {
        // 30 (not assigned) | 01 02 03
        att([0x30, 0x01, 0x02, 0x03]) { pdu in
            guard case .unknown(let opcode, let parameters) = pdu else { Issue.record("decoded as \(pdu.summary)"); return }
            #expect(opcode.rawValue == 0x30)
            #expect(bytes(parameters) == [1, 2, 3])
            #expect(pdu.summary == "Unknown ATT 0x30 len 3")
        }
    }

    @Test(arguments: [
        // empty
        [],
        // 0a Read Request with one handle byte
        [0x0A, 0x2A],
        // 01 Error Response missing the error code
        [0x01, 0x08, 0x10, 0x00],
        // 02 Exchange MTU Request with no MTU
        [0x02],
        // 05 Find Information Response, format 3 (not 1 or 2)
        [0x05, 0x03, 0x01, 0x00, 0x00, 0x28],
        // 05 Find Information Response with no format
        [0x05],
        // 08 Read By Type Request with a 1-byte type
        [0x08, 0x01, 0x00, 0xFF, 0xFF, 0x03],
        // 10 Read By Group Type Request with a 4-byte type (ATT allows only 2 or 16)
        [0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28, 0x00, 0x00],
        // 09 Read By Type Response, entry length 1
        [0x09, 0x01, 0x02],
        // 11 Read By Group Type Response, entry length 3
        [0x11, 0x03, 0x01, 0x00, 0x02],
        // 0c Read Blob Request without offset
        [0x0C, 0x2A, 0x00],
        // 16 Prepare Write Request without offset
        [0x16, 0x13, 0x00, 0x00],
        // 18 Execute Write Request without flags
        [0x18],
        // 1b Handle Value Notification with one handle byte
        [0x1B, 0x12],
        // d2 Signed Write Command with 11 signature bytes
        [0xD2, 0x15, 0x00] + [UInt8](repeating: 0xAA, count: 11),
    ] as [[UInt8]])
    func malformed(_ input: [UInt8]) {
        att(input) { pdu in
            guard case .malformed(let opcode, let reason) = pdu else { Issue.record("decoded as \(pdu.summary)"); return }
            #expect(opcode.rawValue == (input.first ?? 0))
            #expect(reason.utf8CodeUnitCount > 0)
            #expect(pdu.isMalformed)
            #expect(pdu.summary.hasPrefix("Malformed "))
            #expect(pdu.fields.contains { $0.name == "Malformed" })
        }
    }

    /// Every opcode with every short length and a few byte patterns: decoding and describing never trap.
    @Test func neverTraps() {
        var decoded = 0
        for opcode in 0...255 {
            for length in 0...24 {
                for fill: UInt8 in [0x00, 0x07, 0xFF] {
                    let input = [UInt8(opcode)] + [UInt8](repeating: fill, count: length)
                    att(input) { pdu in
                        _ = pdu.summary
                        _ = pdu.fields
                        _ = pdu.attributeHandle
                        #expect(pdu.opcode.rawValue == UInt8(opcode))
                        decoded += 1
                    }
                }
            }
        }
        #expect(decoded == 256 * 25 * 3)
    }
}
