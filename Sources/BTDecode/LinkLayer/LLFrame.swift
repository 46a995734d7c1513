import BTWire
import BTCapture

/// One air-sniffer record after decoding: the packet, what the container said or the decoder worked out
/// (CRC, direction, retransmission, encryption), and (in `DecodedFrame.l2cap`) the L2CAP PDU it completed. Shaped for a tracker:
/// access address, SN/NESN, direction and the connection's parameters are all here. Borrowed bytes are valid
/// until the decoder's next call.
public struct LLFrame {
    public var packet: LLCapturedPacket
    /// The container's CRC flag, or the CRC recomputed (advertising: always; data: once CRCInit is known).
    public var crc: LLCRCStatus
    /// The container's direction, or inferred from event timing (`directionInferred`).
    public var direction: LLDirection
    public var directionInferred = false
    /// Same SN, LLID, Length and payload as the last accepted PDU in this direction on this access address:
    /// the sender resent it because its acknowledgement was lost. Counted once.
    public var isRetransmission = false
    /// The payload is ciphertext (after LL_START_ENC, without the key): only its header can be read.
    public var isEncrypted = false
    /// A CONNECT_IND / AUX_CONNECT_REQ for this access address was seen (so CRCInit and parameters are known).
    public var connectionKnown = false
    /// When the sniffer took the packet, in nanoseconds on the capture's time line (`SnifferClock`): the pcap
    /// time, or the sniffer's own clock anchored to it where the container has one. For timing packets
    /// against each other (connection events); reports keep the record's pcap time.
    public var nanoseconds: Int64 = 0
    /// The capture interface (pcapng) that heard it, the record's `controller`: each interface is its own sniffer.
    public var interface: UInt16 = 0

    public init(packet: LLCapturedPacket) {
        self.packet = packet
        crc = packet.crc
        direction = packet.direction
    }

    /// Resets what the decoder works out to what the container said of `packet`, set in place.
    @inline(__always) mutating func start() {
        crc = packet.crc
        direction = packet.direction
        directionInferred = false
        isRetransmission = false
        isEncrypted = false
        connectionKnown = false
    }

    @inlinable public var isAdvertising: Bool { packet.isAdvertising }

    /// The advertising PDU, when this is one.
    public var advertising: LLAdvertisingPDU? { isAdvertising ? LLAdvertisingPDU(packet.pdu) : nil }

    /// The data PDU, when this is one (isochronous PDUs have other headers).
    public var data: LLDataPDU? {
        isAdvertising || packet.pduClass == .isochronous ? nil : LLDataPDU(packet.pdu)
    }

    /// The control PDU, when this is a plaintext LL control PDU.
    public var control: LLControlPDU? { isEncrypted ? nil : data?.control }

}
