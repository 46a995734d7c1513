import BTDecode

/// What link tracking reads of an L2CAP PDU: its channel and bytes, borrowed from the decoder that completed it
/// (on the reading thread, or the link thread's own when links are tracked there, `LinkFeed`).
struct LinkPDU {
    var channel: L2CAPChannelProtocol
    var bearer: UInt32
    /// The information payload (link tracking reads it on the SMP and signalling channels).
    var payload: UnsafeRawBufferPointer
    /// The ATT PDU on an ATT channel (on EATT the completed SDU; nil while it continues).
    var attPayload: UnsafeRawBufferPointer?

    @inline(__always)
    init(channel: L2CAPChannelProtocol, bearer: UInt32, payload: UnsafeRawBufferPointer,
         attPayload: UnsafeRawBufferPointer?) {
        self.channel = channel
        self.bearer = bearer
        self.payload = payload
        self.attPayload = attPayload
    }

    @inline(__always)
    init(_ pdu: L2CAPPDU) {
        self.init(channel: pdu.channel, bearer: pdu.bearer, payload: pdu.payload, attPayload: pdu.attPayload)
    }
}
