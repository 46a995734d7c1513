import Testing
import BTWire
import BTCapture
import BTDecode
import TestSupport

/// LL PDUs [Core Vol 6 Part B §2.3, §2.4], from real captures where they have them, with annotated bytes.
@Suite("LE link-layer PDUs")
struct LinkLayerPDUTests {
    /// Keeps each test's bytes alive while the decoded PDUs borrow them.
    let arena = ByteArena()

    func advertising(_ bytes: [UInt8]) throws -> LLAdvertisingPDU {
        try #require(LLAdvertisingPDU(arena.hold(bytes)))
    }

    /// nrfsniffer_ble_mouse_hid_pairing.pcapng record 953, the PDU after the access address.
    static let connectInd = hexBytes("""
        45 22                      CONNECT_IND, TxAdd random, RxAdd public; Length 34
        56353085bd70               InitA 70:BD:85:30:35:56
        5400316be0e2               AdvA E2:E0:6B:31:00:54
        17656550 98d8e0 03         AA 0x50656517, CRCInit 0xE0D898, WinSize 3
        1700 1800 0000 4800        WinOffset 23, Interval 24 (30 ms), Latency 0, Timeout 72 (720 ms)
        007899ff1f 2d              ChM, Hop 13 / SCA 1
        """)

    @Test("CONNECT_IND and its LLData")
    func connectRequest() throws {
        let pdu = try advertising(Self.connectInd)
        #expect(pdu.type == .connectInd && pdu.txRandom && !pdu.rxRandom && pdu.length == 34)
        guard case .connectRequest(let initA, let advA, let d) = pdu.body else {
            Issue.record("CONNECT_IND not decoded")
            return
        }
        #expect(initA == BDAddr("70:BD:85:30:35:56") && advA == BDAddr("E2:E0:6B:31:00:54"))
        #expect(d.accessAddress == 0x5065_6517 && d.crcInit == 0xE0_D898 && d.windowSize == 3 && d.windowOffset == 23)
        #expect(d.interval == 24 && d.intervalMicroseconds == 30_000 && d.latency == 0 && d.timeoutMicroseconds == 720_000)
        #expect(d.channelMap == 0x1F_FF99_7800 && LLChannelMap.usedChannels(d.channelMap) == 21)
        #expect(d.hop == 13 && d.sleepClockAccuracy == 1)
        #expect(pdu.type.name(secondary: true) == "AUX_CONNECT_REQ" && pdu.type.name(secondary: false) == "CONNECT_IND")
    }

    @Test("legacy advertising PDUs")
    func legacy() throws {
        // ADV_IND, TxAdd random, Length 9: AdvA 78:C5:E5:6E:DD:E8, Flags 0x05 (crackle Ubertooth record 1).
        let advInd = try advertising(hexBytes("40 09 e8dd6ee5c578 020105"))
        guard case .advertising(let a, let data) = advInd.body else { Issue.record("ADV_IND"); return }
        #expect(a == BDAddr("78:C5:E5:6E:DD:E8") && Array(data) == [0x02, 0x01, 0x05] && advInd.advertiserAddress == a)
        // ADV_DIRECT_IND, Length 12: AdvA then TargetA.
        let direct = try advertising(hexBytes("01 0c 010203040506 a1a2a3a4a5a6"))
        guard case .directed(let d, let t) = direct.body else { Issue.record("ADV_DIRECT_IND"); return }
        #expect(d == BDAddr("06:05:04:03:02:01") && t == BDAddr("A6:A5:A4:A3:A2:A1"))
        // SCAN_REQ, Length 12: ScanA, AdvA; RxAdd random.
        let scan = try advertising(hexBytes("83 0c 111111111111 222222222222"))
        guard case .scanRequest(let s, let adv) = scan.body else { Issue.record("SCAN_REQ"); return }
        #expect(s == BDAddr("11:11:11:11:11:11") && adv == BDAddr("22:22:22:22:22:22") && scan.rxRandom)
        #expect(scan.type.name(secondary: true) == "AUX_SCAN_REQ")
        // A SCAN_REQ of Length 4 (a CRC-bad packet in nrfsniffer_garmin_watch) keeps its header only.
        let short = try advertising(hexBytes("03 04 01020304"))
        guard case .undecoded = short.body else { Issue.record("short SCAN_REQ"); return }
        // Reserved type 0x0b.
        #expect(try advertising(hexBytes("0b 00")).type.description == "Reserved PDU type 0x0b")
    }

    /// bsniffhub_aux_connect_req_ext_adv_llphdr.pcap records 76 and 77.
    @Test("ADV_EXT_IND and AUX_ADV_IND: the common extended header")
    func extended() throws {
        // ADV_EXT_IND Length 7: header length 6, connectable; ADI + AuxPtr; ADI 0x0391; AuxPtr ch 28, 0-50 ppm,
        // 30 µs units, offset 33, 2M.
        let ext = try advertising(hexBytes("07 07 46 18 9103 5c2120"))
        guard case .extended(let e) = ext.body else { Issue.record("ADV_EXT_IND"); return }
        #expect(e.advMode == 1 && e.adi?.dataID == 0x391 && e.adi?.setID == 0 && e.advA == nil && e.advData.isEmpty)
        let p = try #require(e.auxPtr)
        #expect(p.channel == 28 && p.accurateClock && p.offset == 33 && p.offsetUnitMicroseconds == 30 && p.phy == .le2M)
        #expect(e.auxPtr?.offsetMicroseconds == 990)
        // AUX_ADV_IND Length 25: header length 9, connectable; AdvA + ADI; AdvData "NRF5340_AUDIO".
        let aux = try advertising(hexBytes("47 19 49 09 ad0d4819eb66 9103 0e094e5246353334305f415544494f"))
        guard case .extended(let a) = aux.body else { Issue.record("AUX_ADV_IND"); return }
        #expect(a.advA == BDAddr("66:EB:19:48:0D:AD") && a.adi?.dataID == 0x391 && a.advData.count == 15 && a.acad.isEmpty)
        #expect(aux.type.name(secondary: true, auxiliaryType: 0) == "AUX_ADV_IND")
        #expect(aux.type.name(secondary: true, auxiliaryType: 2) == "AUX_SYNC_IND")
        // SyncInfo (18 bytes) and TxPower: header length 20, flags SyncInfo + TxPower.
        let sync = try advertising(hexBytes("""
            07 16 14 60
            2000 5000 ffffffff1f 78563412 aabbcc 0700   offset, interval 80, ChM, AA, CRCInit, event 7
            f6                                          TxPower -10 dBm
            """))
        guard case .extended(let s) = sync.body else { Issue.record("SyncInfo"); return }
        #expect(s.syncInfo?.accessAddress == 0x1234_5678 && s.syncInfo?.interval == 80 && s.syncInfo?.eventCounter == 7)
        #expect(s.syncInfo?.crcInit == 0xCC_BBAA && s.txPower == -10)
        // A header that declares more fields than its length holds.
        guard case .undecoded = try advertising(hexBytes("07 03 02 01 00")).body else { Issue.record("overrun"); return }
    }

    func control(_ bytes: [UInt8]) throws -> LLControlPDU.Body {
        try #require(LLControlPDU(arena.hold(bytes))).body
    }

    @Test("data PDU header: LLID, NESN, SN, MD, Length")
    func dataHeader() throws {
        // nrfsniffer_ble_mouse_hid_pairing.pcapng record 1276: LLID 3, NESN 0, SN 0, MD 1; Length 12.
        let bytes = hexBytes("13 0c 00 03 0800 0c00 0400 6400 9300")
        let pdu = try #require(LLDataPDU(arena.hold(bytes)))
        #expect(pdu.header.llid == .control && pdu.header.nesn == 0 && pdu.header.sn == 0 && pdu.header.moreData)
        #expect(pdu.header.length == 12 && pdu.payload.count == 12)
        // LL_CONNECTION_UPDATE_IND: WinSize 3, WinOffset 8, Interval 12 (15 ms), Latency 4, Timeout 100, Instant 147.
        guard case .connectionUpdate(3, 8, 12, 4, 100, 147) = try control(Array(bytes[2...])) else {
            Issue.record("LL_CONNECTION_UPDATE_IND")
            return
        }
        // Empty PDU: LLID 1, Length 0.
        let empty = try #require(LLDataHeader(arena.hold([0x05, 0x00])))
        #expect(empty.isEmpty && empty.nesn == 1 && empty.sn == 0)
    }

    @Test("LL control PDUs by opcode")
    func controlPDUs() throws {
        guard case .channelMap(0x1F_FFFF_FFFF, 0x0102) = try control(hexBytes("01 ffffffff1f 0201")) else { Issue.record("CHANNEL_MAP"); return }
        guard case .error(let reason) = try control(hexBytes("02 13")), reason == .remoteUserTerminatedConnection else {
            Issue.record("TERMINATE")
            return
        }
        guard case .encryptionResponse(0x0807_0605_0403_0201, 0x0C0B_0A09) = try control(hexBytes("04 0102030405060708 090a0b0c")) else {
            Issue.record("ENC_RSP")
            return
        }
        guard case .plain = try control([0x05]) else { Issue.record("START_ENC_REQ"); return }
        guard case .unknownResponse(.startEncRsp) = try control([0x07, 0x06]) else { Issue.record("UNKNOWN_RSP"); return }
        guard case .features(0x179FF) = try control(hexBytes("08 ff79010000000000")) else { Issue.record("FEATURE_REQ"); return }
        guard case .connectionParameters(6, 12, 0, 500, 1, 10) = try control(hexBytes(
            "0f 0600 0c00 0000 f401 01 0a00 ffff ffff ffff ffff ffff ffff")) else { Issue.record("CONNECTION_PARAM_REQ"); return }
        guard case .rejectExtended(.connectionParamReq, let e) = try control(hexBytes("11 0f 1a")), e.rawValue == 0x1A else {
            Issue.record("REJECT_EXT_IND")
            return
        }
        guard case .dataLength(251, 2120, 251, 2120) = try control(hexBytes("14 fb00 4808 fb00 4808")) else { Issue.record("LENGTH_REQ"); return }
        guard case .phys(2, 2) = try control(hexBytes("16 02 02")) else { Issue.record("PHY_REQ"); return }
        guard case .phyUpdate(2, 0, 16) = try control(hexBytes("18 02 00 1000")) else { Issue.record("PHY_UPDATE_IND"); return }
        guard case .minUsedChannels(1, 2) = try control(hexBytes("19 01 02")) else { Issue.record("MIN_USED_CHANNELS"); return }
        guard case .clockAccuracy(5) = try control(hexBytes("1d 05")) else { Issue.record("CLOCK_ACCURACY_REQ"); return }
        // Too short for its opcode, and an opcode no version of the spec has.
        guard case .truncated(needed: 11) = try control(hexBytes("00 0102")) else { Issue.record("truncated"); return }
        let unknown = try #require(LLControlPDU(arena.hold(hexBytes("52 0102"))))
        guard case .plain = unknown.body else { Issue.record("unknown opcode"); return }
        #expect(unknown.opcode.description == "LL Unknown Control Opcode 0x52" && unknown.data.count == 2)
        #expect(LLControlOpcode.connectionUpdateInd.description == "LL_CONNECTION_UPDATE_IND")
        #expect(LLControlOpcode.peripheralFeatureReq.description == "LL_PERIPHERAL_FEATURE_REQ")
        #expect(LLControlOpcode(rawValue: 0x3C).description == "LL_FRAME_SPACE_RSP")
        #expect([0x00].withUnsafeBytes { LLControlPDU(UnsafeRawBufferPointer(rebasing: $0[0..<0])) } == nil)
    }

    @Test("every prefix and every byte value of the samples decodes without a crash")
    func garbage() {
        let samples = [Self.connectInd, hexBytes("07 16 14 60 2000 5000 ffffffff1f 78563412 aabbcc 0700 f6"),
                       hexBytes("47 19 49 09 ad0d4819eb66 9103 0e094e5246353334305f415544494f"),
                       hexBytes("13 0c 00 03 0800 0c00 0400 6400 9300")]
        for sample in samples {
            for n in 0...sample.count {
                Array(sample.prefix(n)).withUnsafeBytes { b in
                    _ = LLAdvertisingPDU(b)?.advertiserAddress
                    _ = LLDataPDU(b)?.control
                }
            }
            for value in 0...255 {
                var bytes = sample
                bytes[0] = UInt8(value)
                bytes.withUnsafeBytes { b in
                    _ = LLAdvertisingPDU(b)
                    _ = LLDataPDU(b)?.control
                }
            }
        }
    }
}
