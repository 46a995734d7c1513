import Testing
import BTWire
import BTCapture
import BTDecode
import TestSupport

/// Air-sniffer containers, one real record each (from the captures in ../shared/captures/real, as noted),
/// annotated field by field.
@Suite("LE link-layer containers")
struct LinkLayerContainerTests {
    /// Keeps each test's records alive while the unwrapped packets borrow them.
    let arena = ByteArena()

    /// nrfsniffer_ble_mouse_hid_pairing.pcapng record 1: nRF Sniffer header v3 around an ADV_IND.
    static let nordicV3Advertising = hexBytes("""
        00 2b00 03 6012 02         board 0, payload length 43, version 3, packet counter 0x1260, id 2 (advertising)
        0a 01 25 2e 0000 c4c88e12  event header length 10, flags CRC OK, channel 37, RSSI -46, event 0, time
        d6be898e                   access address 0x8E89BED6
        40 18                      ADV_IND, TxAdd random, Length 24
        ee1868b00b77               AdvA 77:0B:B0:68:18:EE
        02011a 020a07 0bff4c0010063a1eaabf5b65   AdvData
        d053c2                     CRC
        """)

    @Test("nRF Sniffer v3: advertising record")
    func nordicV3() throws {
        let p = try unwrap(Linktype.nordicBLE, Self.nordicV3Advertising, in: arena).get()
        #expect(p.accessAddress == LLCapturedPacket.advertisingAccessAddress)
        #expect(p.pduClass == .advertising && p.isAdvertising)
        #expect(p.channel == 37 && p.rssi == -46)
        #expect(p.crc == .good && p.eventCounter == 0)
        #expect(p.snifferTime == 0x128E_C8C4 && !p.snifferTimeIsDelta)
        #expect(p.pdu.count == 2 + 24 && p.pdu.first == 0x40)
        #expect(p.storedCRC == 0xC2_53D0)
        #expect(LLCRC.compute(p.pdu, initialValue: LLCRC.advertisingInitialValue) == p.storedCRC)
        #expect(p.direction == .unknown && !p.isCutShort)
    }

    /// nrfsniffer_ble_mouse_hid_pairing.pcapng record 957: a data PDU, the central's LL_VERSION_IND.
    static let nordicV3Data = hexBytes("""
        00 1900 03 3e16 06         board 0, payload length 25, version 3, counter, id 6 (data)
        0a 03 0d 24 0200 5813ce13  flags CRC OK + C→P, channel 13, RSSI -36, event 2, time
        17656550                   access address 0x50656517
        0f 06                      LLID 3, NESN 1, SN 1; Length 6
        0c 0b 0f00 0863            LL_VERSION_IND 5.2, Broadcom (0x000f), subversion 0x6308
        1cc728                     CRC
        """)

    @Test("nRF Sniffer v3: data record with direction and event counter")
    func nordicV3DataRecord() throws {
        let p = try unwrap(Linktype.nordicBLE, Self.nordicV3Data, in: arena).get()
        #expect(p.accessAddress == 0x5065_6517 && p.pduClass == .data && !p.isAdvertising)
        #expect(p.direction == .centralToPeripheral && p.channel == 13 && p.rssi == -36 && p.eventCounter == 2)
        #expect(p.encryption == .plaintext && p.crc == .good)
        let pdu = try #require(LLDataPDU(p.pdu))
        #expect(pdu.header.llid == .control && pdu.header.nesn == 1 && pdu.header.sn == 1 && pdu.header.length == 6)
        guard case .version(11, 0x000F, 0x6308)? = pdu.control?.body else {
            Issue.record("LL_VERSION_IND not decoded")
            return
        }
    }

    /// sweyntooth_stm_att_deadlock_nordic.pcap record 1: SweynTooth's v2 header (board 0x4B, id 0, no channel,
    /// RSSI, event or time) around an ADV_IND.
    static let nordicV2 = hexBytes("""
        4b 2a00 02 0000 00         board 0x4B, payload length 42, version 2, counter 0, id 0
        0a 01 00 00 8402 00000000  flags CRC OK, channel 0, RSSI 0, event 0x0284, delta 0
        d6be898e 40 17 5de0af9e355d 02011a020a0c0aff4c001005031c4d6c1f f6af98
        """)

    @Test("nRF Sniffer v2 (SweynTooth): the access address decides, the time is a delta")
    func nordicV2() throws {
        let p = try unwrap(Linktype.nordicBLE, Self.nordicV2, in: arena).get()
        #expect(p.pduClass == .unspecified && p.isAdvertising)
        #expect(p.snifferTimeIsDelta && p.crc == .good && p.channel == 0)
        #expect(p.pdu.count == 2 + 0x17)
    }

    @Test("nRF Sniffer v1 and v0 headers put the packet at offset 17 too")
    func nordicV1AndV0() throws {
        let ll = Array(Self.nordicV3Advertising[17...])
        // v1: board, header length 6, payload length u8, version 1, counter u16, id, then the event header.
        let v1 = [0x00, 0x06, UInt8(10 + ll.count), 0x01, 0x60, 0x12, 0x02] + Array(Self.nordicV3Advertising[7..<17]) + ll
        let p1 = try unwrap(Linktype.nordicBLE, v1, in: arena).get()
        #expect(p1.channel == 37 && p1.crc == .good && p1.snifferTimeIsDelta && p1.pdu.count == 26)
        // v0: 0xBEEF, id, counter, two more header bytes, payload length u8 @7; event header from @8 without its
        // length byte.
        let v0 = [0xBE, 0xEF, 0x02, 0x60, 0x12, 0x00, 0x00, UInt8(9 + ll.count)] + Array(Self.nordicV3Advertising[8..<17]) + ll
        let p0 = try unwrap(Linktype.nordicBLE, v0, in: arena).get()
        #expect(p0.channel == 37 && p0.rssi == -46 && p0.pdu.count == 26 && p0.storedCRC == 0xC2_53D0)
    }

    @Test("nRF Sniffer: lengths that disagree with the record are refused, as Wireshark does")
    func nordicLengthCheck() {
        var bytes = Self.nordicV3Advertising
        bytes[1] = 0x2C  // one more than the record holds
        #expect(throws: LLDecodeError(.containerLengthMismatch, "")) { try unwrap(Linktype.nordicBLE, bytes, in: arena).get() }
        #expect(throws: LLDecodeError(.containerTooShort, "")) { try unwrap(Linktype.nordicBLE, Array(bytes.prefix(16)), in: arena).get() }
    }

    @Test("nRF Sniffer: encrypted, decrypted and plaintext data flags")
    func nordicEncryptionFlags() throws {
        var bytes = Self.nordicV3Data
        bytes[8] = 0x03 | 0x04  // encrypted, MIC not OK: ciphertext
        #expect(try unwrap(Linktype.nordicBLE, bytes, in: arena).get().encryption == .encrypted)
        bytes[8] = 0x03 | 0x04 | 0x08  // encrypted, MIC OK: the sniffer decrypted it
        #expect(try unwrap(Linktype.nordicBLE, bytes, in: arena).get().encryption == .decrypted)
        bytes[8] = 0x00  // CRC bad, P→C
        let p = try unwrap(Linktype.nordicBLE, bytes, in: arena).get()
        #expect(p.crc == .bad && p.direction == .peripheralToCentral)
    }

    /// bsniffhub_aux_connect_req_ext_adv_llphdr.pcap record 76: PHDR around an ADV_EXT_IND.
    static let pseudoHeaderExtended = hexBytes("""
        00 d8 80 00 d6be898e 130c  RF channel 0 (index 37), signal -40, noise -128, offenses 0, ref AA,
                                   flags 0x0C13: dewhitened, signal, noise, ref AA valid, CRC checked and valid
        d6be898e                   access address
        07 07                      ADV_EXT_IND, Length 7
        46 18 9103 5c2120          ext header 6 bytes, connectable; flags ADI + AuxPtr; ADI; AuxPtr
        96ca2a                     CRC
        """)

    @Test("PHDR (256): advertising record with CRC flags")
    func pseudoHeader() throws {
        let p = try unwrap(Linktype.bluetoothLELLWithPHDR, Self.pseudoHeaderExtended, in: arena).get()
        #expect(p.channel == 37 && p.rssi == -40 && p.crc == .good && p.phy == .le1M)
        #expect(p.pduClass == .unspecified && p.isAdvertising)
        #expect(LLCRC.compute(p.pdu, initialValue: LLCRC.advertisingInitialValue) == p.storedCRC)
    }

    /// bsniffhub_aux_connect_req_ext_adv_llphdr.pcap record 86: PHDR data PDU C→P on 2M (LL_ENC_REQ).
    static let pseudoHeaderData = hexBytes("""
        1d dc 80 00 1df41d96 134d  RF channel 29 (index 27), signal -36; flags 0x4D13: PDU type 2 (C→P),
                                   CRC checked and valid, MIC checked, PHY 2M
        1df41d96                   access address 0x961DF41D
        1f 17                      LLID 3, NESN 1, SN 1, MD; Length 23
        03 0000000000000000 0000 05e275b1f243b4de 88193646   LL_ENC_REQ: Rand, EDIV, SKDc, IVc
        953ce1                     CRC
        """)

    @Test("PHDR (256): data record with direction and PHY")
    func pseudoHeaderDataRecord() throws {
        let p = try unwrap(Linktype.bluetoothLELLWithPHDR, Self.pseudoHeaderData, in: arena).get()
        #expect(p.channel == 27 && p.direction == .centralToPeripheral && p.pduClass == .data && p.phy == .le2M)
        #expect(p.encryption == .unknown)
        let pdu = try #require(LLDataPDU(p.pdu))
        #expect(pdu.header.moreData && pdu.header.length == 23)
        guard case .encryptionRequest(0, 0, 0xDEB4_43F2_B175_E205, 0x4636_1988)? = pdu.control?.body else {
            Issue.record("LL_ENC_REQ not decoded")
            return
        }
    }

    @Test("PHDR: auxiliary type, decrypted flag, bad CRC, isochronous")
    func pseudoHeaderFlags() throws {
        let packet = Array(Self.pseudoHeaderExtended[10...])
        let aux = try unwrap(Linktype.bluetoothLELLWithPHDR, phdrRecord(rfChannel: 3, flags: phdrBaseFlags | 1 << 7 | 3 << 12, packet), in: arena).get()
        #expect(aux.pduClass == .advertising && aux.auxiliaryType == 3 && aux.crc == .unchecked && aux.channel == 2)
        let bad = try unwrap(Linktype.bluetoothLELLWithPHDR, phdrRecord(flags: phdrBaseFlags | 0x0400 | 0x0008, packet), in: arena).get()
        #expect(bad.crc == .bad && bad.encryption == .decrypted)
        let iso = try unwrap(Linktype.bluetoothLELLWithPHDR, phdrRecord(flags: phdrBaseFlags | 4 << 7, packet), in: arena).get()
        #expect(iso.pduClass == .isochronous)
    }

    @Test("PHDR: LE Coded puts a coding indicator after the access address; CP adds CTEInfo to a data header")
    func codedAndCTE() throws {
        let coded = try unwrap(Linktype.bluetoothLELLWithPHDR,
                               phdrRecord(flags: phdrBaseFlags | 2 << 14, CaptureBytes.le32(0x8E89_BED6) + [0x01, 0x02, 0x00, 0x11, 0x22, 0x33]), in: arena).get()
        #expect(coded.phy == .coded && coded.codingIndicator == 1 && coded.pdu.count == 2 && coded.storedCRC == 0x33_2211)
        let cte = try unwrap(Linktype.bluetoothLELL, CaptureBytes.le32(0x1234_5678) + [0x22, 0x01, 0x14, 0xAA, 0x01, 0x02, 0x03], in: arena).get()
        let header = try #require(LLDataHeader(cte.pdu))
        #expect(header.cteInfo == 0x14 && header.size == 3 && cte.pdu.count == 4 && cte.storedCRC == 0x03_0201)
    }

    /// crackle_ubertooth_ppi_pairing_ltk.pcap record 1: Ubertooth's PPI with the BTLE field around an ADV_IND.
    static let ppiAdvertising = hexBytes("""
        00 00 1800 93000000        PPI version 0, flags 0, length 24, inner DLT 147 (USER0)
        3675 0c00                  field 30006 (BTLE), 12 bytes
        00 6209 00 6b36e300        btle version 0, 2402 MHz (channel 37), clkn_high, clk100ns
        e8 dc ee 3c                RSSI max -24, min -36, avg -18, count 60
        d6be898e 00 09 e8dd6ee5c578 020105 c63c96   ADV_IND AdvA 78:C5:E5:6E:DD:E8, Flags, CRC
        """)

    @Test("PPI (192) with the BTLE field, and the same packet as linktype 251")
    func ppi() throws {
        let p = try unwrap(Linktype.ppi, Self.ppiAdvertising, in: arena).get()
        #expect(p.channel == 37 && p.rssi == -18 && p.isAdvertising && p.pdu.count == 11)
        #expect(p.snifferTime == 0x00E3_366B && p.snifferTimeUnitNanoseconds == 100)
        #expect(LLCRC.compute(p.pdu, initialValue: LLCRC.advertisingInitialValue) == p.storedCRC)
        let bare = try unwrap(Linktype.bluetoothLELL, Array(Self.ppiAdvertising[24...]), in: arena).get()
        #expect(bare.channel == nil && bare.crc == .unchecked && bare.storedCRC == p.storedCRC)
    }

    @Test("a record cut by the snap length loses its CRC, and says so")
    func cutShort() throws {
        let bytes = Array(Self.ppiAdvertising.prefix(24 + 4 + 2 + 5))
        let p = try unwrap(Linktype.ppi, bytes, originalLength: Self.ppiAdvertising.count, in: arena).get()
        #expect(p.isCutShort && p.storedCRC == nil && p.pdu.count == 7)
    }

    static let samples: [(Int, [UInt8])] = [
        (Linktype.nordicBLE, nordicV3Advertising), (Linktype.nordicBLE, nordicV3Data), (Linktype.nordicBLE, nordicV2),
        (Linktype.bluetoothLELLWithPHDR, pseudoHeaderExtended), (Linktype.bluetoothLELLWithPHDR, pseudoHeaderData),
        (Linktype.ppi, ppiAdvertising), (Linktype.bluetoothLELL, Array(ppiAdvertising[24...])),
    ]

    @Test("every prefix of every sample unwraps or fails cleanly", arguments: LinkLayerContainerTests.samples)
    func prefixes(linktype: Int, bytes: [UInt8]) {
        for n in 0...bytes.count {
            let prefix = Array(bytes.prefix(n))
            for original in [n, bytes.count] {
                if case .success(let p) = unwrap(linktype, prefix, originalLength: original, in: arena) {
                    _ = LLAdvertisingPDU(p.pdu)
                    _ = LLDataPDU(p.pdu)?.control
                }
            }
        }
        #expect(throws: LLDecodeError(.containerNotLinkLayer, "")) { try unwrap(Linktype.bluetoothHCIH4, bytes, in: arena).get() }
    }
}
