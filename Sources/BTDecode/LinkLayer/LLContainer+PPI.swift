import BTWire
import BTCapture

/// PPI (192) with Ubertooth's BTLE field: see `PPIHeader` (BTCapture) for the layout.
extension LLContainer {
    static func unwrapPPI(_ bytes: UnsafeRawBufferPointer, into packet: inout LLCapturedPacket) -> LLDecodeError? {
        let reader = ByteReader(bytes)
        guard let headerLength = reader.get(UInt16.self, at: 2).map(Int.init),
              let innerLinktype = reader.get(UInt32.self, at: 4).map(Int.init),
              headerLength >= PPIHeader.length, headerLength <= bytes.count
        else {
            return LLDecodeError(.containerTooShort, "\(bytes.count) bytes hold no whole PPI header")
        }
        var foundBTLE = false
        var offset = PPIHeader.length
        while offset + PPIHeader.fieldHeaderLength <= headerLength,
              let type = reader.get(UInt16.self, at: offset),
              let length = reader.get(UInt16.self, at: offset + 2).map(Int.init) {
            let data = offset + PPIHeader.fieldHeaderLength
            if type == PPIHeader.btleFieldType, length >= PPIHeader.btleFieldLength, data + length <= headerLength {
                foundBTLE = true
                if let mhz = reader.get(UInt16.self, at: data + PPIHeader.btleChannelOffset) {
                    let rf = (Int(mhz) - PPIHeader.baseFrequency) / PPIHeader.channelSpacing
                    packet.channel = channelIndex(rfChannel: rf)
                    packet.isSecondaryChannel = (packet.channel ?? LLCapturedPacket.firstPrimaryAdvertisingChannel)
                        < LLCapturedPacket.firstPrimaryAdvertisingChannel
                }
                packet.rssi = reader.get(Int8.self, at: data + PPIHeader.btleRSSIAverageOffset)
                packet.snifferTime = reader.get(UInt32.self, at: data + PPIHeader.btleClockOffset)
                packet.snifferTimeUnitNanoseconds = PPIHeader.btleClockTickNanoseconds
            }
            offset = data + length
        }
        guard foundBTLE || innerLinktype == Linktype.bluetoothLELL else {
            return LLDecodeError(.containerNotLinkLayer, "PPI record with inner linktype \(innerLinktype) and no BTLE field")
        }
        return split(UnsafeRawBufferPointer(rebasing: bytes[headerLength...]), into: &packet)
    }
}
