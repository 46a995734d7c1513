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
            switch s.type.rawValue {
            case 0x01:
                if let b = s.data.first { flags = AdvertisingDataView.Flags(rawValue: b) }
            case 0x02, 0x03:
                addUUIDs(s.data, size: 2)
            case 0x04, 0x05:
                addUUIDs(s.data, size: 4)
            case 0x06, 0x07:
                addUUIDs(s.data, size: 16)
            case 0x08, 0x09:
                addName(s.data)
            case 0x0A:
                if let b = s.data.first { txPowerLevel = Int8(bitPattern: b) }
            case 0x16:
                addServiceData(s.data, uuidSize: 2)
            case 0x20:
                addServiceData(s.data, uuidSize: 4)
            case 0x21:
                addServiceData(s.data, uuidSize: 16)
            case 0x19:
                if s.data.count >= 2 { appearance = UInt16(s.data[0]) | UInt16(s.data[1]) << 8 }
            case 0xFF:
                addManufacturerData(s.data)
            default:
                break
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

    mutating func addUUIDs(_ list: UnsafeRawBufferPointer, size: Int) {
        var offset = 0
        while offset + size <= list.count {
            if let uuid = BluetoothUUID(littleEndianBytes: UnsafeRawBufferPointer(rebasing: list[offset..<offset + size])),
               serviceUUIDs.count < Self.listLimit, !serviceUUIDs.contains(uuid) {
                serviceUUIDs.append(uuid)
            }
            offset += size
        }
    }

    mutating func addServiceData(_ d: UnsafeRawBufferPointer, uuidSize: Int) {
        guard d.count >= uuidSize,
              let uuid = BluetoothUUID(littleEndianBytes: UnsafeRawBufferPointer(rebasing: d[..<uuidSize]))
        else { return }
        let body = UnsafeRawBufferPointer(rebasing: d[uuidSize...])
        if let i = serviceData.firstIndex(where: { $0.uuid == uuid }) {
            if !serviceData[i].data.elementsEqual(body) {
                serviceData[i].data.removeAll(keepingCapacity: true)
                serviceData[i].data.append(contentsOf: body)
            }
        } else if serviceData.count < Self.listLimit {
            serviceData.append(AdvertisingDataView.ServiceData(uuid: uuid, data: Array(body)))
        }
    }

    mutating func addManufacturerData(_ d: UnsafeRawBufferPointer) {
        guard d.count >= 2 else { return }
        if let beacon = IBeacon(manufacturerSpecificData: d) { iBeacon = beacon }
        let company = CompanyID(rawValue: UInt16(d[0]) | UInt16(d[1]) << 8)
        let body = UnsafeRawBufferPointer(rebasing: d[2...])
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
