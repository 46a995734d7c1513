import BTCapture

/// Seeded, deterministic damage a sniffer's capture shows (LINKLAYER.md §3): packets heard with a bad CRC,
/// PDUs sent again, a CONNECT_IND the sniffer missed. Rates are shares of data-channel PDUs; each is planted
/// only where the decoder can tell it for what it is, so the counts `AirSink.tally` reports are exact.
public struct AirImpairments: Sendable, Equatable {
    /// Share of new central→peripheral PDUs that arrive with a bad CRC. The peripheral missed it too, so it does
    /// not answer, the central closes the event and sends the same PDU again, correctly, in the next one.
    public var crcErrorRate: Double
    /// Share of new PDUs (either side) the receiver does not accept (flow control: its next NESN does not
    /// acknowledge them), so the sender resends them with the same SN and payload [Core Vol 6 Part B §4.5.9].
    public var retransmissionRate: Double
    /// The sniffer misses the first connection's CONNECT_IND: it follows that link without its parameters
    /// (no addresses, CRCInit or event counter base), as one that joined mid-connection.
    public var missConnect: Bool
    /// Share of data-channel packets the sniffer itself did not hear (the link carried them: only the file lacks
    /// them), as a sniffer farther from one side than the other, or busy, loses some. Not counted as anything:
    /// a decoder cannot tell a packet it never saw.
    public var snifferLossRate: Double

    public init(crcErrorRate: Double = 0, retransmissionRate: Double = 0, missConnect: Bool = false,
                snifferLossRate: Double = 0) {
        self.crcErrorRate = crcErrorRate
        self.retransmissionRate = retransmissionRate
        self.missConnect = missConnect
        self.snifferLossRate = snifferLossRate
    }

    public static let none = AirImpairments()
}

/// How `AirSink` writes the air.
public struct AirOptions: Sendable, Equatable {
    public var container: LinkLayerContainer
    public var impairments: AirImpairments
    /// The sniffer has the link's key (the default): encrypted PDUs are written decrypted, flagged "decrypted,
    /// MIC OK" (nRF) or "decrypted" (PHDR), so L2CAP stays readable. False leaves ciphertext and MIC, as a
    /// sniffer without the key writes them. Containers without flags (251, PPI) always hold the ciphertext.
    public var decrypt: Bool
    /// Seeds everything the HCI stream does not say: access addresses, CRCInits, hops, channels, RSSI jitter,
    /// impairments.
    public var seed: UInt64

    public static let defaultSeed: UInt64 = 0x4149_525F_4C49_4E4B

    public init(container: LinkLayerContainer = .nordic(version: 3, board: 0), impairments: AirImpairments = .none,
                decrypt: Bool = true, seed: UInt64 = AirOptions.defaultSeed) {
        self.container = container
        self.impairments = impairments
        self.decrypt = decrypt
        self.seed = seed
    }
}

/// What an `AirSink` wrote and planted: what a decoder of the capture must count.
public struct AirTally: Sendable, Equatable {
    public var packets = 0
    public var advertisingPDUs = 0
    /// CONNECT_INDs written (not the dropped one).
    public var connectRequests = 0
    public var connectRequestsDropped = 0
    /// Data-channel packets left out of the file (`AirImpairments.snifferLossRate`).
    public var snifferMissed = 0
    /// Attempts that failed to be established (LE Connection Complete 0x3E): a CONNECT_IND and six unanswered events.
    public var failedAttempts = 0
    /// Data-channel PDUs written with a bad CRC.
    public var crcErrors = 0
    /// Data-channel PDUs sent again after the receiver did not acknowledge them.
    public var retransmissions = 0
    /// Connection events that had at least one packet.
    public var connectionEvents = 0
    public var dataPDUs = 0
    public var emptyPDUs = 0
    public var encryptedPDUs = 0

    public init() {}
}
