import BTWire

/// Client-side discovery procedures (Core Vol 3 Part G §4.3–4.7): each repeats its request from the last
/// handle found + 1 until the server answers Attribute Not Found or the range is exhausted, parsing the real
/// responses to decide where to continue.
extension ATTChannel {
    public static let lastHandle: UInt16 = 0xFFFF

    /// Exchange MTU: the client offers `clientMTU`, the server its own; the smaller one applies.
    @discardableResult
    public func exchangeMTU(_ clientMTU: UInt16) -> Int {
        guard let response = exchange(ATTPDU.exchangeMTURequest(clientMTU)),
              response.first == ATTOpcode.exchangeMTUResponse.rawValue,
              let serverMTU = response.withUnsafeBytes({ ByteReader($0).get(UInt16.self, at: 1) })
        else { return mtu }
        setMTU(max(ATTPDU.defaultMTU, Int(min(clientMTU, serverMTU))))
        return mtu
    }

    /// Discover All Primary Services: Read By Group Type 0x2800 over the whole range.
    public func discoverAllPrimaryServices() -> [DiscoveredService] {
        var found: [DiscoveredService] = []
        var start: UInt16 = 1
        while true {
            let request = ATTPDU.readByGroupTypeRequest(start: start, end: Self.lastHandle, type: GATTUUID.primaryService)
            guard let response = exchange(request), response.first == ATTOpcode.readByGroupTypeResponse.rawValue
            else { break }
            let entries: [DiscoveredService] = response.withUnsafeBytes { raw in
                var r = ByteReader(raw)
                _ = r.readU8()
                guard let length = r.readU8().map(Int.init), length > 4 else { return [] }
                var out: [DiscoveredService] = []
                while let s = r.readU16(), let e = r.readU16(), let u = r.readBytes(length - 4),
                      let uuid = BluetoothUUID(littleEndianBytes: u) {
                    out.append(DiscoveredService(uuid: uuid, startHandle: s, endHandle: e))
                }
                return out
            }
            guard let last = entries.last else { break }
            found += entries
            if last.endHandle == Self.lastHandle { break }
            start = last.endHandle + 1
        }
        return found
    }

    /// Discover Primary Service by Service UUID: Find By Type Value 0x2800 = uuid.
    public func discoverPrimaryServices(uuid: BluetoothUUID) -> [DiscoveredService] {
        let value = ByteWriter.build { $0.uuid(uuid) }
        var found: [DiscoveredService] = []
        var start: UInt16 = 1
        while true {
            let request = ATTPDU.findByTypeValueRequest(start: start, end: Self.lastHandle,
                                                        type: GATTUUID.genericPrimaryServiceType, value: value)
            guard let response = exchange(request), response.first == ATTOpcode.findByTypeValueResponse.rawValue
            else { break }
            let ranges: [(UInt16, UInt16)] = response.withUnsafeBytes { raw in
                var r = ByteReader(raw)
                _ = r.readU8()
                var out: [(UInt16, UInt16)] = []
                while let s = r.readU16(), let e = r.readU16() { out.append((s, e)) }
                return out
            }
            guard let last = ranges.last else { break }
            found += ranges.map { DiscoveredService(uuid: uuid, startHandle: $0.0, endHandle: $0.1) }
            if last.1 == Self.lastHandle { break }
            start = last.1 + 1
        }
        return found
    }

    /// Discover All Characteristics of a Service: Read By Type 0x2803 over the service range.
    public func discoverCharacteristics(of service: DiscoveredService) -> [DiscoveredCharacteristic] {
        var found: [DiscoveredCharacteristic] = []
        var start = service.startHandle
        while start <= service.endHandle {
            let request = ATTPDU.readByTypeRequest(start: start, end: service.endHandle, type: GATTUUID.characteristic)
            guard let response = exchange(request), response.first == ATTOpcode.readByTypeResponse.rawValue
            else { break }
            let entries: [DiscoveredCharacteristic] = response.withUnsafeBytes { raw in
                var r = ByteReader(raw)
                _ = r.readU8()
                guard let length = r.readU8().map(Int.init), length > 5 else { return [] }
                var out: [DiscoveredCharacteristic] = []
                while let declaration = r.readU16(), let props = r.readU8(), let value = r.readU16(),
                      let u = r.readBytes(length - 5), let uuid = BluetoothUUID(littleEndianBytes: u) {
                    out.append(DiscoveredCharacteristic(uuid: uuid, properties: CharacteristicProperties(rawValue: props),
                                                        declarationHandle: declaration, valueHandle: value,
                                                        endHandle: service.endHandle))
                }
                return out
            }
            guard let last = entries.last else { break }
            found += entries
            if last.declarationHandle >= service.endHandle { break }
            start = last.declarationHandle + 1
        }
        for i in found.indices.dropLast() { found[i].endHandle = found[i + 1].declarationHandle - 1 }
        return found
    }

    /// Discover All Characteristic Descriptors: Find Information after the value handle.
    public func discoverDescriptors(of characteristic: DiscoveredCharacteristic) -> [DiscoveredDescriptor] {
        var found: [DiscoveredDescriptor] = []
        guard characteristic.valueHandle < characteristic.endHandle else { return found }
        var start = characteristic.valueHandle + 1
        while start <= characteristic.endHandle {
            guard let response = exchange(ATTPDU.findInformationRequest(start: start, end: characteristic.endHandle)),
                  response.first == ATTOpcode.findInformationResponse.rawValue
            else { break }
            let entries: [DiscoveredDescriptor] = response.withUnsafeBytes { raw in
                var r = ByteReader(raw)
                _ = r.readU8()
                let width = r.readU8() == ATTFindInformationFormat.uuid16 ? 2 : 16
                var out: [DiscoveredDescriptor] = []
                while let h = r.readU16(), let u = r.readBytes(width), let uuid = BluetoothUUID(littleEndianBytes: u) {
                    out.append(DiscoveredDescriptor(uuid: uuid, handle: h))
                }
                return out
            }
            guard let last = entries.last else { break }
            found += entries
            if last.handle >= characteristic.endHandle { break }
            start = last.handle + 1
        }
        return found
    }

    /// Everything an uncached client finds: all services, all their characteristics, all descriptors.
    public func discoverEverything() -> [(service: DiscoveredService,
                                          characteristics: [(DiscoveredCharacteristic, [DiscoveredDescriptor])])] {
        discoverAllPrimaryServices().map { service in
            (service, discoverCharacteristics(of: service).map { c in (c, discoverDescriptors(of: c)) })
        }
    }
}

extension GATTUUID {
    /// The 16-bit attribute type Find By Type Value uses for service discovery.
    public static let genericPrimaryServiceType: UInt16 = 0x2800
}
