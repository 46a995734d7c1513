import BTWire
import BTDecode

extension Advertiser {
    /// Folds one distinct version of advertising or scan-response data into the advertiser.
    ///
    /// One walk over the AD structures (FORMATS.md §8) that compares in place and allocates only for a value
    /// not seen before (a new name, UUID, or changed service/manufacturer data), instead of the
    /// `AdvertisingDataView` accessors, which each walk the data again and allocate their results.
    mutating func absorb(_ data: UnsafeRawBufferPointer) {
        var structures = AdvertisingDataView(data).makeIterator()
        while let s = structures.next() {
            if s.uuidSize != nil {
                if !s.type.isSolicitation { addUUIDs(s) }
            } else if let service = s.serviceData {
                addServiceData(service.uuid, service.data)
            } else if let m = s.manufacturerData {
                addManufacturerData(m.company, m.data, whole: s.data)
            } else {
                switch s.type {
                case .flags: if let b = s.data.first { flags = AdvertisingDataView.Flags(rawValue: b) }
                case .shortenedLocalName, .completeLocalName: addName(s.data)
                case .txPowerLevel: if let b = s.data.first { txPowerLevel = Int8(bitPattern: b) }
                case .appearance: if s.data.count >= 2 { appearance = UInt16(s.data[0]) | UInt16(s.data[1]) << 8 }
                default: break
                }
            }
        }
        if structures.malformation != nil { malformedData = true }
    }

    mutating func addName(_ bytes: UnsafeRawBufferPointer) {
        if let latest = name, latest.utf8.elementsEqual(bytes) { return }
        if let known = names.first(where: { $0.utf8.elementsEqual(bytes) }) {
            name = known
            return
        }
        // Invalid UTF-8 is replaced (U+FFFD), never dropped, as AdvertisingDataView does.
        let text = String(decoding: bytes, as: UTF8.self)
        name = text
        if names.count < Self.listLimit && !names.contains(text) { names.append(text) }
    }

    /// The service UUIDs of a UUID-list structure, compared in place; only a new one is allocated.
    mutating func addUUIDs(_ s: AdvertisingDataView.Structure) {
        guard let size = s.uuidSize else { return }
        var offset = 0
        while offset + size <= s.data.count {
            if let uuid = BluetoothUUID(littleEndianBytes: UnsafeRawBufferPointer(rebasing: s.data[offset..<offset + size])),
               serviceUUIDs.count < Self.listLimit, !serviceUUIDs.contains(uuid) {
                serviceUUIDs.append(uuid)
            }
            offset += size
        }
    }

    mutating func addServiceData(_ uuid: BluetoothUUID, _ body: UnsafeRawBufferPointer) {
        if let i = serviceData.firstIndex(where: { $0.uuid == uuid }) {
            if !serviceData[i].data.elementsEqual(body) {
                serviceData[i].data.removeAll(keepingCapacity: true)
                serviceData[i].data.append(contentsOf: body)
            }
        } else if serviceData.count < Self.listLimit {
            serviceData.append(AdvertisingDataView.ServiceData(uuid: uuid, data: Array(body)))
        }
    }

    /// `whole` is the structure's data with the company ID, which iBeacon's layout starts with.
    mutating func addManufacturerData(_ company: CompanyID, _ body: UnsafeRawBufferPointer, whole: UnsafeRawBufferPointer) {
        if let beacon = IBeacon(manufacturerSpecificData: whole) { iBeacon = beacon }
        if let i = manufacturerData.firstIndex(where: { $0.company == company }) {
            if !manufacturerData[i].data.elementsEqual(body) {
                manufacturerData[i].data.removeAll(keepingCapacity: true)
                manufacturerData[i].data.append(contentsOf: body)
            }
        } else if manufacturerData.count < Self.listLimit {
            manufacturerData.append(AdvertisingDataView.ManufacturerData(company: company, data: Array(body)))
        }
    }
}
