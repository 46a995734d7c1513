import BTWire

/// Time on air of link-layer packets (Core Vol 6 Part B §2.1; ENERGY.md §3.1): n bytes from the access address
/// to the CRC.
public enum AirTime {
    /// LE PHYs as HCI numbers them (LE PHY Update Complete: 1 = 1M, 2 = 2M, 3 = Coded).
    public enum PHY: UInt8, Sendable {
        case le1M = 1, le2M = 2, coded = 3
    }

    /// Access address 4, header 2, CRC 3.
    public static let dataPDUOverhead = 9
    /// A data PDU's MIC when the link is encrypted.
    public static let micLength = 4
    /// Header 2 + AdvA 6 + CRC 3 + access address 4 + preamble-free counting as §3.1: ADV_IND with d bytes of data
    /// is 16 + d bytes.
    public static let advertisingPDUOverhead = 16
    /// SCAN_REQ: header, ScanA, AdvA, access address, CRC.
    public static let scanRequestBytes = 21
    /// The inter-frame space between packets of an exchange (Core Vol 6 Part B §4.1.1).
    public static let interFrameSpace = 150e-6

    /// Seconds on air of a packet of `n` bytes (access address to CRC). Coded is taken at S8, the slower coding,
    /// since HCI does not say which.
    public static func seconds(bytes n: Int, phy: PHY = .le1M) -> Double {
        let air: LEAirTime.PHY = switch phy {
        case .le1M: .le1M
        case .le2M: .le2M
        case .coded: .codedS8
        }
        return Double(LEAirTime.nanoseconds(bytes: n, phy: air)) * 1e-9
    }

    /// A data PDU carrying `payload` bytes (LL payload, the MIC added when encrypted).
    public static func dataPDU(payload: Int, phy: PHY = .le1M, encrypted: Bool = false) -> Double {
        seconds(bytes: dataPDUOverhead + payload + (encrypted && payload > 0 ? micLength : 0), phy: phy)
    }

    /// An empty data PDU: 80 µs on 1M.
    public static func emptyPDU(phy: PHY = .le1M) -> Double { dataPDU(payload: 0, phy: phy) }

    /// `pdus` data PDUs carrying `bytes` payload bytes in all.
    public static func dataPDUs(_ pdus: Int, bytes: Int, phy: PHY = .le1M, encrypted: Bool = false) -> Double {
        guard pdus > 0 else { return 0 }
        let overhead = dataPDUOverhead + (encrypted ? micLength : 0)
        switch phy {
        case .le1M: return 8e-6 * Double(pdus * (1 + overhead) + bytes)
        case .le2M: return 4e-6 * Double(pdus * (2 + overhead) + bytes)
        case .coded: return Double(pdus) * seconds(bytes: overhead + bytes / pdus, phy: .coded)
        }
    }

    /// An advertising PDU with `data` bytes of advertising data (1M, where legacy advertising is).
    public static func advertisingPDU(data: Int) -> Double { seconds(bytes: advertisingPDUOverhead + data - 1) }
}
