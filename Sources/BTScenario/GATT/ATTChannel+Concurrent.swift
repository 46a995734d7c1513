import BTWire

/// ATT traffic on several links at the same time. ATT allows one outstanding request per bearer, not per
/// device, so a phone talking to two peripherals has both requests in flight and the controller delivers
/// the responses' fragments interleaved; the decoder has to reassemble per handle.
extension ATTChannel {
    /// One request per channel, fragments interleaved both ways. Returns the responses in order.
    @discardableResult
    public static func exchangeConcurrently(_ requests: [(channel: ATTChannel, request: [UInt8])]) -> [[UInt8]?] {
        guard let first = requests.first else { return [] }
        let script = first.channel.script
        let sentAt = script.elapsed
        for (c, _) in requests {
            c.server.linkEncrypted = c.connection.encrypted
            c.exchanges += 1
        }
        script.sendInterleaved(requests.map { ($0.request, .att, $0.channel.connection, $0.channel.clientSide) })
        if requests.contains(where: { $0.channel.clientSide == .local }) {
            script.completeTransmission(on: first.channel.connection)
        }
        let responses = requests.map { $0.channel.server.respond(to: $0.request) }
        let ready = requests.map { sentAt + script.airDelay($0.channel.connection) }.max() ?? sentAt
        script.advance(toElapsed: ready)
        var back: [(payload: [UInt8], cid: L2CAPChannelID, connection: LEConnection, side: Side)] = []
        for (i, response) in responses.enumerated() {
            guard let response else { continue }
            back.append((response, .att, requests[i].channel.connection, requests[i].channel.serverSide))
        }
        script.sendInterleaved(back)
        if back.contains(where: { $0.side == .local }) { script.completeTransmission(on: first.channel.connection) }
        script.pause(script.timing.hostReaction)
        return responses
    }

    /// Long reads on several channels at once: Read Requests, then rounds of Read Blob Requests on the
    /// channels whose last response was full, until every value is complete.
    public static func readConcurrently(_ reads: [(channel: ATTChannel, handle: UInt16)]) -> [[UInt8]] {
        var values = Array(repeating: [UInt8](), count: reads.count)
        var open = Array(reads.indices)
        var firstRound = true
        while !open.isEmpty {
            let requests = open.map { i in
                (reads[i].channel, firstRound ? ATTPDU.readRequest(handle: reads[i].handle)
                    : ATTPDU.readBlobRequest(handle: reads[i].handle, offset: UInt16(clamping: values[i].count)))
            }
            let responses = exchangeConcurrently(requests)
            var stillOpen: [Int] = []
            for (k, i) in open.enumerated() {
                guard let response = responses[k], errorCode(response) == nil else { continue }
                values[i] += response.dropFirst()
                if response.count - 1 == reads[i].channel.mtu - 1 { stillOpen.append(i) }
            }
            open = stillOpen
            firstRound = false
        }
        return values
    }

    /// Notifications from the servers of several channels at once, fragments interleaved.
    public static func notifyConcurrently(_ items: [(channel: ATTChannel, handle: UInt16, value: [UInt8])]) {
        guard let first = items.first else { return }
        let script = first.channel.script
        script.sendInterleaved(items.map { item in
            item.channel.server.setValue(item.value, at: item.handle)
            return (ATTPDU.notification(handle: item.handle, value: Array(item.value.prefix(item.channel.mtu - 3))),
                    .att, item.channel.connection, item.channel.serverSide)
        })
        if items.contains(where: { $0.channel.serverSide == .local }) {
            script.completeTransmission(on: first.channel.connection)
        }
    }
}
