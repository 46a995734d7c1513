import BTWire

/// Client-side reads, writes and subscriptions (Core Vol 3 Part G §4.8–4.10).
extension ATTChannel {
    /// Read Characteristic Value, continued with Read Blob while each response is full (MTU − 1 bytes).
    public func read(_ handle: UInt16) -> ATTOutcome {
        guard let first = exchange(ATTPDU.readRequest(handle: handle)) else { return .noResponse }
        if let e = Self.errorCode(first) { return .error(e) }
        var value = Array(first.dropFirst())
        var part = value.count
        while part == mtu - 1 {
            guard let blob = exchange(ATTPDU.readBlobRequest(handle: handle, offset: UInt16(clamping: value.count)))
            else { return .noResponse }
            if let e = Self.errorCode(blob) {
                // Attribute Not Long ends a read that happened to fill exactly one PDU.
                return e == ScenarioCodes.attributeNotLong ? .value(value) : .error(e)
            }
            part = blob.count - 1
            value += blob.dropFirst()
        }
        return .value(value)
    }

    /// Write Characteristic Value with response; a value longer than MTU − 3 becomes a long write
    /// (Prepare Write requests of MTU − 5 bytes, then Execute Write).
    @discardableResult
    public func write(_ handle: UInt16, value: [UInt8]) -> ATTOutcome {
        if value.count <= mtu - 3 {
            guard let response = exchange(ATTPDU.writeRequest(handle: handle, value: value)) else { return .noResponse }
            if let e = Self.errorCode(response) { return .error(e) }
            return .written
        }
        let chunk = mtu - 5
        var offset = 0
        while offset < value.count {
            let part = value[offset..<min(value.count, offset + chunk)]
            guard let response = exchange(ATTPDU.prepareWriteRequest(handle: handle, offset: UInt16(clamping: offset),
                                                                     part: part))
            else { return .noResponse }
            if let e = Self.errorCode(response) {
                exchange(ATTPDU.executeWriteRequest(commit: false))
                return .error(e)
            }
            offset += part.count
        }
        guard let response = exchange(ATTPDU.executeWriteRequest(commit: true)) else { return .noResponse }
        if let e = Self.errorCode(response) { return .error(e) }
        return .written
    }

    /// Write Without Response (Write Command), cut to MTU − 3 as a stack would refuse longer.
    public func writeWithoutResponse(_ handle: UInt16, value: [UInt8]) {
        command(ATTPDU.writeCommand(handle: handle, value: Array(value.prefix(mtu - 3))))
    }

    /// Writes the CCCD: notifications (`01 00`), indications (`02 00`) or off (`00 00`).
    @discardableResult
    public func subscribe(cccd: UInt16, indications: Bool = false) -> ATTOutcome {
        write(cccd, value: indications ? ATTPDU.cccdIndicate : ATTPDU.cccdNotify)
    }

    @discardableResult
    public func unsubscribe(cccd: UInt16) -> ATTOutcome { write(cccd, value: ATTPDU.cccdOff) }

    static func errorCode(_ response: [UInt8]) -> ATTErrorCode? {
        guard response.first == ATTOpcode.errorResponse.rawValue, response.count >= 5 else { return nil }
        return ATTErrorCode(rawValue: response[4])
    }
}
