import BTDecode

/// What link tracking reads of an L2CAP PDU: its channel and bytes. Built over the decoder's buffers, or over a
/// copy when the links are tracked on another thread (`LinkFeed`).
struct LinkPDU {
    var channel: L2CAPChannelProtocol
    var bearer: UInt32
    /// The information payload, when link tracking reads it (SMP and signalling channels); empty otherwise.
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

    /// Whether link tracking reads `payload` on this channel (ATT is read through `attPayload`).
    static func readsPayload(_ channel: L2CAPChannelProtocol) -> Bool {
        channel == .smp || channel == .leSignaling || channel == .brEdrSignaling
    }
}
