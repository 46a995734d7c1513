import BTWire

/// One line and a field tree for `btlens decode`. Built only when asked for; decoding never formats text.
extension ATTPDU: PacketDescribing {
    /// e.g. `Read Request handle 0x002a`, `Exchange MTU Request client rx mtu 517`,
    /// `Error Response to Read By Type Request handle 0x0010: Attribute Not Found (0x0a)`.
    public var summary: String {
        let name = opcode.description
        switch self {
        case .errorResponse(let request, let handle, let error):
            return name + " to " + request.description + " handle " + Hex.u16(handle) + ": " + error.description
        case .exchangeMTURequest(let mtu):
            return name + " client rx mtu " + String(mtu)
        case .exchangeMTUResponse(let mtu):
            return name + " server rx mtu " + String(mtu)
        case .findInformationRequest(let start, let end):
            return name + " " + PDUFieldText.range(start, end)
        case .findInformationResponse(let data):
            return name + " " + Plural.of(data.count, "entry", plural: "entries")
                + (data.format == 2 ? " (128-bit)" : " (16-bit)") + Self.trailingNote(data.trailingBytes)
        case .findByTypeValueRequest(let start, let end, let type, let value):
            return name + " " + PDUFieldText.range(start, end) + " " + PDUFieldText.uuid(type) + " value "
                + Self.typedValue(value, isUUID: Self.isServiceDeclaration(type))
        case .findByTypeValueResponse(let list):
            let ranges = list.prefix(4).map { PDUFieldText.range($0.foundAttributeHandle, $0.groupEndHandle) }
            return name + " " + ranges.joined(separator: ",") + (list.count > 4 ? ",…" : "")
                + Self.trailingNote(list.trailingBytes)
        case .readByTypeRequest(let start, let end, let type):
            return name + " " + PDUFieldText.range(start, end) + " " + PDUFieldText.uuid(type)
        case .readByTypeResponse(let list):
            return name + " len " + String(list.length) + ", " + Plural.of(list.count, "entry", plural: "entries")
                + Self.trailingNote(list.trailingBytes)
        case .readRequest(let handle):
            return name + " handle " + Hex.u16(handle)
        case .readResponse(let value), .readBlobResponse(let value), .readMultipleResponse(let value):
            return name + " len " + String(value.count)
        case .readBlobRequest(let handle, let offset):
            return name + " handle " + Hex.u16(handle) + " offset " + String(offset)
        case .readMultipleRequest(let handles), .readMultipleVariableRequest(let handles):
            return name + " handles " + handles.map(Hex.u16).joined(separator: ",")
                + Self.trailingNote(handles.trailingBytes)
        case .readByGroupTypeRequest(let start, let end, let type):
            return name + " " + PDUFieldText.range(start, end) + " " + PDUFieldText.uuid(type)
        case .readByGroupTypeResponse(let list):
            return name + " len " + String(list.length) + ", " + Plural.of(list.count, "entry", plural: "entries")
                + Self.trailingNote(list.trailingBytes)
        case .writeRequest(let handle, let value), .handleValueNotification(let handle, let value),
            .handleValueIndication(let handle, let value), .writeCommand(let handle, let value),
            .signedWriteCommand(let handle, let value, _):
            return name + " handle " + Hex.u16(handle) + " len " + String(value.count)
        case .prepareWriteRequest(let handle, let offset, let part), .prepareWriteResponse(let handle, let offset, let part):
            return name + " handle " + Hex.u16(handle) + " offset " + String(offset) + " len " + String(part.count)
        case .executeWriteRequest(let flags):
            return name + " " + Self.executeWriteFlagsName(flags)
        case .writeResponse, .executeWriteResponse, .handleValueConfirmation:
            return name
        case .readMultipleVariableResponse(let tuples):
            return name + " " + Plural.of(tuples.count, "value")
                + Self.trailingNote(tuples.trailingBytes)
        case .multipleHandleValueNotification(let tuples):
            let handles = tuples.map { Hex.u16($0.handle) }
            return name + " " + Plural.of(handles.count, "value")
                + (handles.isEmpty ? "" : " handles " + handles.joined(separator: ","))
                + Self.trailingNote(tuples.trailingBytes)
        case .unknown(_, let parameters):
            return name + " len " + String(parameters.count)
        case .malformed(_, let reason):
            return "Malformed " + name + ": " + reason.description
        }
    }

    /// Every field, with handles as 0x%04x, UUIDs with their SIG names and values as hex plus text. Read By Type
    /// responses are decoded as characteristic declarations when their entries have that shape.
    public var fields: [DecodedField] { fields(readByTypeRequestType: nil) }

    /// The fields, told which attribute type the answered Read By Type Request asked for (the response does
    /// not say). With `.characteristic` (0x2803) entries are decoded as declarations; with another type they
    /// are left as values; with nil the entries' shape decides.
    public func fields(readByTypeRequestType requestType: BluetoothUUID?) -> [DecodedField] {
        var out = [DecodedField("Opcode", PDUFieldText.named(opcode.name, opcode.rawValue))]
        switch self {
        case .errorResponse(let request, let handle, let error):
            out.append(DecodedField("Request Opcode", PDUFieldText.named(request.name, request.rawValue)))
            out.append(DecodedField("Attribute Handle", Hex.u16(handle)))
            out.append(DecodedField("Error Code", error.description))
        case .exchangeMTURequest(let mtu):
            out.append(DecodedField("Client Rx MTU", String(mtu)))
        case .exchangeMTUResponse(let mtu):
            out.append(DecodedField("Server Rx MTU", String(mtu)))
        case .findInformationRequest(let start, let end):
            out += Self.rangeFields(start, end)
        case .findInformationResponse(let data):
            out.append(DecodedField("Format", String(data.format) + (data.format == 2 ? " (128-bit UUIDs)" : " (16-bit UUIDs)")))
            out.append(DecodedField("Information Data", Plural.of(data.count, "entry", plural: "entries"),
                                    children: data.map { DecodedField("Handle " + Hex.u16($0.handle), PDUFieldText.uuid($0.uuid)) }))
            out += Self.trailingFields(data.trailingBytes)
        case .findByTypeValueRequest(let start, let end, let type, let value):
            out += Self.rangeFields(start, end)
            out.append(DecodedField("Attribute Type", PDUFieldText.uuid(type)))
            out.append(DecodedField("Attribute Value", Self.typedValue(value, isUUID: Self.isServiceDeclaration(type))))
        case .findByTypeValueResponse(let list):
            out.append(DecodedField("Handles Information List", Plural.of(list.count, "entry", plural: "entries"),
                                    children: list.map {
                                        DecodedField("Handle " + Hex.u16($0.foundAttributeHandle),
                                                     "group end " + Hex.u16($0.groupEndHandle))
                                    }))
            out += Self.trailingFields(list.trailingBytes)
        case .readByTypeRequest(let start, let end, let type):
            out += Self.rangeFields(start, end)
            out.append(DecodedField("Attribute Type", PDUFieldText.uuid(type)))
        case .readByTypeResponse(let list):
            let declarations = requestType.map { $0 == .characteristic } ?? list.looksLikeCharacteristicDeclarations
            out.append(DecodedField("Length", String(list.length)))
            out.append(DecodedField("Attribute Data List", Plural.of(list.count, "entry", plural: "entries"),
                                    children: list.map { entry in
                                        let name = "Handle " + Hex.u16(entry.handle)
                                        if declarations, let decl = entry.characteristicDeclaration {
                                            return DecodedField(name, "Characteristic " + decl.description,
                                                                children: decl.fields)
                                        }
                                        return DecodedField(name, PDUFieldText.value(entry.value))
                                    }))
            out += Self.trailingFields(list.trailingBytes)
        case .readRequest(let handle):
            out.append(DecodedField("Attribute Handle", Hex.u16(handle)))
        case .readResponse(let value):
            out.append(DecodedField("Attribute Value", PDUFieldText.value(value)))
        case .readBlobRequest(let handle, let offset):
            out.append(DecodedField("Attribute Handle", Hex.u16(handle)))
            out.append(DecodedField("Value Offset", String(offset)))
        case .readBlobResponse(let part):
            out.append(DecodedField("Part Attribute Value", PDUFieldText.value(part)))
        case .readMultipleRequest(let handles), .readMultipleVariableRequest(let handles):
            out.append(DecodedField("Set Of Handles", handles.map(Hex.u16).joined(separator: ", ")))
            out += Self.trailingFields(handles.trailingBytes)
        case .readMultipleResponse(let values):
            out.append(DecodedField("Set Of Values", PDUFieldText.value(values)))
        case .readByGroupTypeRequest(let start, let end, let type):
            out += Self.rangeFields(start, end)
            out.append(DecodedField("Attribute Group Type", PDUFieldText.uuid(type)))
        case .readByGroupTypeResponse(let list):
            out.append(DecodedField("Length", String(list.length)))
            out.append(DecodedField("Attribute Data List", Plural.of(list.count, "entry", plural: "entries"),
                                    children: list.map { entry in
                                        let value = entry.uuid.map(PDUFieldText.uuid) ?? PDUFieldText.value(entry.value)
                                        return DecodedField("Handles " + PDUFieldText.range(entry.handle, entry.endGroupHandle), value)
                                    }))
            out += Self.trailingFields(list.trailingBytes)
        case .writeRequest(let handle, let value), .handleValueNotification(let handle, let value),
            .handleValueIndication(let handle, let value), .writeCommand(let handle, let value):
            out.append(DecodedField("Attribute Handle", Hex.u16(handle)))
            out.append(DecodedField("Attribute Value", PDUFieldText.value(value)))
        case .signedWriteCommand(let handle, let value, let signature):
            out.append(DecodedField("Attribute Handle", Hex.u16(handle)))
            out.append(DecodedField("Attribute Value", PDUFieldText.value(value)))
            out.append(DecodedField("Authentication Signature", PDUFieldText.hex(signature)))
        case .prepareWriteRequest(let handle, let offset, let part), .prepareWriteResponse(let handle, let offset, let part):
            out.append(DecodedField("Attribute Handle", Hex.u16(handle)))
            out.append(DecodedField("Value Offset", String(offset)))
            out.append(DecodedField("Part Attribute Value", PDUFieldText.value(part)))
        case .executeWriteRequest(let flags):
            out.append(DecodedField("Flags", Hex.u8(flags) + " " + Self.executeWriteFlagsName(flags)))
        case .writeResponse, .executeWriteResponse, .handleValueConfirmation:
            break
        case .readMultipleVariableResponse(let tuples):
            out.append(DecodedField("Length Value Tuple List", Plural.of(tuples.count, "tuple"),
                                    children: tuples.map {
                                        DecodedField("Length " + String($0.length), PDUFieldText.value($0.value)
                                                     + ($0.isTruncated ? " (truncated)" : ""))
                                    }))
            out += Self.trailingFields(tuples.trailingBytes)
        case .multipleHandleValueNotification(let tuples):
            out.append(DecodedField("Handle Length Value Tuple List", Plural.of(tuples.count, "tuple"),
                                    children: tuples.map {
                                        DecodedField("Handle " + Hex.u16($0.handle), "len " + String($0.length) + " "
                                                     + PDUFieldText.value($0.value) + ($0.isTruncated ? " (truncated)" : ""))
                                    }))
            out += Self.trailingFields(tuples.trailingBytes)
        case .unknown(_, let parameters):
            out.append(DecodedField("Parameters", PDUFieldText.hex(parameters)))
        case .malformed(_, let reason):
            out.append(DecodedField("Malformed", reason.description))
        }
        return out
    }

    /// `cancel` (0), `write` (1) or the reserved value in hex.
    static func executeWriteFlagsName(_ flags: UInt8) -> String {
        switch flags {
        case 0: "cancel"
        case 1: "write"
        default: "reserved " + Hex.u8(flags)
        }
    }

    static func isServiceDeclaration(_ type: BluetoothUUID) -> Bool {
        type == .primaryService || type == .secondaryService
    }

    /// A Find By Type Value value: a UUID when the type is a service declaration and the length fits.
    static func typedValue(_ value: UnsafeRawBufferPointer, isUUID: Bool) -> String {
        if isUUID, value.count == 2 || value.count == 16, let uuid = BluetoothUUID(littleEndianBytes: value) {
            return PDUFieldText.uuid(uuid)
        }
        return PDUFieldText.value(value)
    }

    static func rangeFields(_ start: UInt16, _ end: UInt16) -> [DecodedField] {
        [DecodedField("Starting Handle", Hex.u16(start)), DecodedField("Ending Handle", Hex.u16(end))]
    }

    static func trailingNote(_ trailing: UnsafeRawBufferPointer) -> String {
        trailing.isEmpty ? "" : " (+" + String(trailing.count) + " trailing bytes)"
    }

    static func trailingFields(_ trailing: UnsafeRawBufferPointer) -> [DecodedField] {
        trailing.isEmpty ? [] : [DecodedField("Trailing Bytes", PDUFieldText.hex(trailing))]
    }
}
