import BTWire
import BTCapture

/// PPI (192) as Ubertooth writes it (`ubertooth-btle -c`): a PPI header, a BTLE field (type 30006), then the
/// LL packet at the PPI header's length [greatscottgadgets/libbtbb lib/src/pcap.c; LINKLAYER.md §1.5].
///
///     PPI: version u8 · flags u8 · length u16 · inner DLT u32 (251, or 147 in old files)
///     field: type u16 · length u16 · btle_version u8 · channel u16 (MHz) · clkn_high u8 · clk100ns u32 ·
///            rssi_max i8 · rssi_min i8 · rssi_avg i8 · rssi_count u8
enum PPIHeader {
    static let length = 8
    static let fieldHeaderLength = 4
    static let btleFieldType: UInt16 = 30006
    static let btleChannelOffset = 1
    static let btleClockOffset = 4
    static let btleClockTickNanoseconds: UInt32 = 100
    static let btleRSSIAverageOffset = 10
    static let btleFieldLength = 12
    /// Channel MHz → RF channel: 2402 + 2k MHz.
    static let baseFrequency = 2402
    static let channelSpacing = 2
}

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
