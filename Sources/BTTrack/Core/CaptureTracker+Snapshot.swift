import BTWire
import BTCapture
import BTDecode

/// Live capture (`btlens live`) audits the capture while it is still being read, so rules that can decide early
/// report early. That needs the model so far without ending anything: the tracker must keep running after.
extension CaptureTracker {
    /// The model as `finish()` would return it if the capture ended now, without closing anything: finished
    /// links are shared (they no longer change), open links are copies whose ATT sessions are finished at the
    /// last record (so a request unanswered for 30 s already shows as a timeout), and the scan and advertising
    /// trackers are finished on copies (they are value types). GATT inheritance runs on copies too, so the
    /// tracker's own links are never touched. Costs one copy per open link plus a sort of the links by id.
    /// Only for a tracker fed on one thread, as live capture's is (with a `LinkFeed` the links are elsewhere).
    public func snapshot() -> CaptureModel {
        func links(_ tracker: ConnectionTracker) -> [Connection] {
            var all = tracker.finished
            all.reserveCapacity(all.count + tracker.open.count)
            for c in tracker.open.values { all.append(c.snapshotCopy(finishingAt: last)) }
            all.sort { $0.id < $1.id }
            ConnectionTracker.inheritGATT(&all) { $0.snapshotCopy(finishingAt: nil) }
            return all
        }
        var all = links(connections)
        // Links let go but for their summary (`LinkRetirement.Keeping.summary`): values, so renumbering is safe.
        var summaries: SetAsideArray<LinkSummary>?
        if connections.options.retirement?.keeping == .summary {
            var kept = connections.retiring.summaries  // a copy: appending to it leaves the tracker's as it was
            for s in connections.retiring.peersSummaries { kept.append(s) }
            summaries = kept
        }
        var letGo = connections.retiring.letGoLinks
        LetGoLink.sortForModel(&letGo)
        if let air {
            // Numbered as the finished model numbers them (`finish`), on copies, so the tracker's own numbering stays.
            let hci = all.map { $0.snapshotCopy(finishingAt: nil) }, airLinks = links(air.links).map { $0.snapshotCopy(finishingAt: nil) }
            all = connections.judgedBeforeAirLinks
                ? Self.numberedAfter(hci, airLinks, summaries: summaries, letGo: letGo)
                : Self.merge(hci, airLinks)
        }
        var scans = self.scans
        var advertisers = self.advertisers
        var ownAdvertising = self.ownAdvertising
        var model = model(connections: all, droppedConnections: connections.dropped, scans: scans.finish(at: last),
                          advertisers: &advertisers, ownAdvertising: &ownAdvertising)
        model.letGoLinks = letGo
        if let summaries { model.summarize(letGo: summaries) }
        return model
    }

    /// Counts that change when a link opens, closes or fails to open, so a live view can compare them after
    /// each record (three integers) and describe the change only when there is one.
    public struct LinkCounters: Equatable, Sendable {
        /// Links opened so far (explicitly or implicitly); ids run 1…opened.
        public var opened: Int
        /// Links closed so far, those past `maximumConnections` (not kept in the model) included.
        public var closed: Int
        /// Failed connection attempts so far.
        public var failed: Int
    }

    public var linkCounters: LinkCounters {
        LinkCounters(opened: connections.nextID - 1, closed: connections.finished.count + connections.closedPastLimit,
                     failed: connections.failed.count)
    }

    /// The link with `id` if it is open or among the closed ones kept (`maximumConnections`).
    public func connection(id: Int) -> Connection? {
        if let c = connections.open.values.first(where: { $0.id == id }) { return c }
        return connections.finished.last(where: { $0.id == id })
    }

    /// Links closed after the first `count` (see `LinkCounters.closed`), in closing order. Past
    /// `maximumConnections` only the latest closures are still at hand (at least all of the latest record's).
    public func closedConnections(after count: Int) -> [Connection] {
        let kept = connections.finished
        var closed = count < kept.count ? Array(kept[max(0, count)...]) : []
        let recent = connections.recentlyClosedPastLimit
        // Closure number (past the limit) of recent[0].
        let firstRecent = connections.closedPastLimit - recent.count
        let from = max(count - kept.count, firstRecent)
        if from < connections.closedPastLimit { closed += recent[(from - firstRecent)...] }
        return closed
    }

    /// Failed attempts after the first `count`.
    public func failedConnections(after count: Int) -> ArraySlice<FailedConnection> {
        connections.failed[min(count, connections.failed.count)...]
    }
}

extension Connection {
    /// A copy that can be finished without touching this link. Arrays and dictionaries are copy-on-write, so
    /// the copy costs its fields, not its events. A test compares every stored property (Mirror) so a property
    /// added to `Connection` without being copied here fails loudly.
    func snapshotCopy(finishingAt end: RecordRef?) -> Connection {
        let c = Connection(id: id, controller: controller, handle: handle, transport: transport, start: start,
                           implicitStart: implicitStart, options: session.options)
        c.role = role
        c.isJudged = isJudged
        c.peerAddress = peerAddress
        c.peerAddressType = peerAddressType
        c.peerIdentityAddress = peerIdentityAddress
        c.peerLink = peerLink
        c.connectRequested = connectRequested
        c.end = self.end
        c.disconnectReason = disconnectReason
        c.disconnectRequestedLocally = disconnectRequestedLocally
        c.initialParameters = initialParameters
        c.parameters = parameters
        c.encrypted = encrypted
        c.air = air?.copy()
        c.mtu = mtu
        c.enhancedATT = enhancedATT
        c.l2capChannels = l2capChannels
        c.scanningAtConnect = scanningAtConnect
        c.advertisingAtConnect = advertisingAtConnect
        c.gatt = gatt
        c.serverGATT = serverGATT
        c.usage = usage
        c.events = events
        c.droppedEvents = droppedEvents
        c.runs = runs
        c.series = series
        c.discoveries = discoveries
        c.transactions = transactions
        c.firstATT = firstATT
        c.lastATT = lastATT
        c.attOpcodeCounts = attOpcodeCounts
        c.aclPacketsSent = aclPacketsSent
        c.aclPacketsReceived = aclPacketsReceived
        c.aclPacketsCutShort = aclPacketsCutShort
        c.vendorFixedChannelPDUs = vendorFixedChannelPDUs
        c.maxTxOctets = maxTxOctets
        c.closedPhases = closedPhases
        c.currentPhase = currentPhase
        c.txPHY = txPHY
        c.rxPHY = rxPHY
        c.maxRxOctets = maxRxOctets
        c.channelSoundingSubeventMicroseconds = channelSoundingSubeventMicroseconds
        c.clientDriven = clientDriven
        c.session = session
        if isOpen { c.session.finish(at: end, connection: c) }
        return c
    }
}
