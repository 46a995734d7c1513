import BTWire
import BTCapture
import BTDecode

/// The ATT bearer state of one connection: request/response pairing with latency and timeouts (one outstanding
/// request per client per bearer, Core Vol 3 Part F §3.3.2), indications and confirmations, MTU, discovery
/// procedures and the GATT database they reveal, activity runs and per-attribute usage.
struct ATTSession {
    static let defaultMTU = 23

    struct Outstanding {
        var opcode: ATTOpcode
        var handle: UInt16?
        var at: RecordRef
        var startHandle: UInt16 = 0
        var endHandle: UInt16 = 0
        var type: BluetoothUUID?
        /// Index of the discovery procedure this request belongs to.
        var discovery: Int?
        /// The value of a Write Request to a CCCD.
        var cccdValue: UInt16?
        /// Sent by our host.
        var sent = true
        /// A Read Blob Request that carries on `readChain`.
        var continuesRead = false
    }

    /// The value a client is reading: a Read Response that filled its PDU may go on with Read Blob Requests
    /// at the offset where it ended (a long read, Core Vol 3 Part G §4.8.3).
    struct ReadChain {
        var handle: UInt16
        var sent: Bool
        /// Bytes read so far: the offset a continuing Read Blob Request asks for.
        var bytes: Int
        /// The activity run of the read, in `Connection.runs`.
        var run: Int
    }

    /// Prepare Write Requests since the last Execute Write Request (Core Vol 3 Part F §3.4.6): a long write to
    /// one attribute, or a reliable write to several.
    struct PreparedQueue {
        var writes = 0
        var bytes = 0
        var handles: [UInt16] = []
        /// Attributes named at most: a queue is normally one attribute or a few.
        static let keptHandles = 16
    }

    /// A bearer is (channel, which side sent the request): both sides may be clients. The channel is
    /// `L2CAPPDU.bearer`, the same for a request and its response even on a dynamic channel, where each
    /// direction has its own CID.
    struct BearerKey: Hashable {
        var bearer: UInt32
        var requestSent: Bool
    }

    /// (kind, handle, sender) of an activity run, packed for `KeyTable`.
    struct RunKey: PackedKey, Equatable {
        let rawValue: UInt64
        init(rawValue: UInt64) { self.rawValue = rawValue }
        @inline(__always) init(kind: ActivityKind, handle: UInt16, sent: Bool) {
            rawValue = 1 << 63 | UInt64(kind.code) << 17 | (sent ? 1 << 16 : 0) | UInt64(handle)
        }
    }

    /// A map keyed by bearer: a link has one or a few (CID 4, EATT channels, both sides as clients), so a
    /// linear scan beats hashing. The first two keys are held inline (nearly every link: the ATT channel, with the
    /// phone as client and perhaps the peer too), so a request and its response touch no array.
    /// Keys stay once added (a link's bearers are few and come back), so setting nil never shifts the order.
    struct BearerTable<Value> {
        private var keys: (BearerKey?, BearerKey?) = (nil, nil)
        private var inline: (Value?, Value?) = (nil, nil)
        private var more: [(key: BearerKey, value: Value?)] = []

        subscript(key: BearerKey) -> Value? {
            get {
                if keys.0 == key { return inline.0 }
                if keys.1 == key { return inline.1 }
                for e in more where e.key == key { return e.value }
                return nil
            }
            set {
                if keys.0 == key {
                    inline.0 = newValue
                } else if keys.1 == key {
                    inline.1 = newValue
                } else if let i = more.firstIndex(where: { $0.key == key }) {
                    more[i].value = newValue
                } else if let newValue {
                    if keys.0 == nil {
                        keys.0 = key
                        inline.0 = newValue
                    } else if keys.1 == nil {
                        keys.1 = key
                        inline.1 = newValue
                    } else {
                        more.append((key, newValue))
                    }
                }
            }
        }

        /// Every key added, in the order first added, and its value.
        var entries: [(key: BearerKey, value: Value?)] {
            var all: [(key: BearerKey, value: Value?)] = []
            if let k = keys.0 { all.append((k, inline.0)) }
            if let k = keys.1 { all.append((k, inline.1)) }
            return all + more
        }

        var values: [Value] { entries.compactMap(\.value) }

        mutating func removeAll() {
            keys = (nil, nil)
            inline = (nil, nil)
            more.removeAll(keepingCapacity: true)
        }
    }

    let options: TrackerOptions
    var outstanding = BearerTable<Outstanding>()
    /// Indications sent and not yet confirmed, per bearer and sender: when and on which attribute.
    var outstandingIndications = BearerTable<(at: RecordRef, handle: UInt16)>()
    var clientMTU: Int?
    /// The latest run of each (kind, handle, sender): index into `Connection.runs`.
    var openRuns = KeyTable<RunKey>(limit: Int.max, initialSlots: 16)
    /// The run used last and its slot in `openRuns`: dense traffic repeats the same (kind, handle), so most
    /// lookups stop here. A slot stays valid until the table grows, which only an insertion does.
    var lastRun: (key: RunKey, slot: Int)?
    var currentDiscovery: Int?
    var readChain: ReadChain?
    var preparedQueue = PreparedQueue()

    /// The option thresholds in nanoseconds, compared on every PDU.
    let runGap: Int64
    let idleGap: Int64

    init(options: TrackerOptions) {
        self.options = options
        runGap = Int64(saturating: options.activityRunGap.seconds * 1e9)
        idleGap = Int64(saturating: options.idleGap.seconds * 1e9)
    }

    // MARK: - Entry point

    mutating func pdu(_ bytes: UnsafeRawBufferPointer, bearer: UInt32, sent: Bool, at: RecordRef, connection c: Connection) {
        guard let first = bytes.first else { return }
        c.attOpcodeCounts.increment(first)
        if let last = c.lastATT, at.timestamp.nanoseconds &- last.timestamp.nanoseconds >= idleGap {
            c.append(TimelineEvent(at: last, kind: .idle(until: at)), limit: options.maximumEventsPerConnection)
        }
        if c.firstATT == nil { c.firstATT = at }
        c.lastATT = at

        // Notifications and Write Commands are most of a streaming link's PDUs and pair with nothing: they are
        // read in place (opcode, handle, value) without building an `ATTPDU`.
        if bytes.count >= 3 {
            let handle = UInt16(bytes[1]) | UInt16(bytes[2]) << 8
            let value = UnsafeRawBufferPointer(rebasing: bytes[3...])
            switch first {
            case ATTOpcode.handleValueNotification.rawValue:
                notification(handle: handle, value: value, sent: sent, at: at, connection: c)
                return
            case ATTOpcode.writeCommand.rawValue:
                writeCommand(handle: handle, value: value, sent: sent, at: at, connection: c)
                return
            // Most of the rest are reads and writes and their answers: their cases are built here, as
            // `ATTPDU(bytes)` would build them, without going through the decoder's table of every opcode.
            case ATTOpcode.readRequest.rawValue:
                request(.readRequest(handle: handle), bearer: bearer, sent: sent, at: at, connection: c)
                return
            case ATTOpcode.writeRequest.rawValue:
                request(.writeRequest(handle: handle, value: value), bearer: bearer, sent: sent, at: at, connection: c)
                return
            default:
                break
            }
        }
        if first == ATTOpcode.readResponse.rawValue {
            response(.readResponse(value: UnsafeRawBufferPointer(rebasing: bytes[1...])), bearer: bearer, sent: sent,
                     at: at, connection: c)
            return
        }
        if first == ATTOpcode.writeResponse.rawValue {
            response(.writeResponse, bearer: bearer, sent: sent, at: at, connection: c)
            return
        }
        let pdu = ATTPDU(bytes)
        let opcode = pdu.opcode
        if opcode.isRequest {
            request(pdu, bearer: bearer, sent: sent, at: at, connection: c)
        } else if opcode.isResponse {
            response(pdu, bearer: bearer, sent: sent, at: at, connection: c)
        } else {
            unacknowledged(pdu, bearer: bearer, sent: sent, at: at, connection: c)
        }
    }

    // MARK: - Requests

    mutating func request(_ pdu: ATTPDU, bearer: UInt32, sent: Bool, at: RecordRef, connection c: Connection) {
        let key = BearerKey(bearer: bearer, requestSent: sent)
        if let previous = outstanding[key] {
            // A new request while one is outstanding: the old one was never answered.
            let waited = at.timestamp - previous.at.timestamp
            unanswered(previous, waited: waited, timedOut: waited >= options.attTimeout, connection: c)
        }
        var o = Outstanding(opcode: pdu.opcode, handle: pdu.attributeHandle, at: at)
        o.sent = sent
        switch pdu {
        case .exchangeMTURequest(let mtu):
            clientMTU = Int(mtu)
        case .readByGroupTypeRequest(let start, let end, let type):
            o.startHandle = start; o.endHandle = end; o.type = type
            let kind: DiscoveryProcedure.Kind = type == .secondaryService ? .secondaryServices : .allPrimaryServices
            o.discovery = discovery(kind, start: start, end: end, uuid: nil, sent: sent, at: at, connection: c)
        case .findByTypeValueRequest(let start, let end, let type, let value):
            o.startHandle = start; o.endHandle = end; o.type = BluetoothUUID(littleEndianBytes: value)
            if type == .primaryService {
                o.discovery = discovery(.primaryServiceByUUID, start: start, end: end, uuid: o.type, sent: sent, at: at, connection: c)
            }
        case .readByTypeRequest(let start, let end, let type):
            o.startHandle = start; o.endHandle = end; o.type = type
            if type == .characteristic {
                o.discovery = discovery(.characteristics, start: start, end: end, uuid: nil, sent: sent, at: at, connection: c)
            } else if type == .include {
                o.discovery = discovery(.includedServices, start: start, end: end, uuid: nil, sent: sent, at: at, connection: c)
            } else {
                activity(.readByType, handle: start, sent: sent, bytes: 0, at: at, connection: c)
            }
        case .findInformationRequest(let start, let end):
            o.startHandle = start; o.endHandle = end
            o.discovery = discovery(.descriptors, start: start, end: end, uuid: nil, sent: sent, at: at, connection: c)
        case .readRequest(let handle):
            c.withUsage(handle) { $0.reads += 1 }
            readChain = nil
            activity(.read, handle: handle, sent: sent, bytes: 0, at: at, connection: c)
        case .readBlobRequest(let handle, let offset):
            c.withUsage(handle) { $0.readBlobs += 1 }
            if let chain = readChain, chain.handle == handle, chain.sent == sent, Int(offset) == chain.bytes, offset > 0 {
                // The rest of a long value: part of the read it continues, not an operation of its own.
                o.continuesRead = true
                c.runs[chain.run].blobReads += 1
            } else {
                readChain = nil
                activity(.readBlob, handle: handle, sent: sent, bytes: 0, at: at, connection: c)
            }
        case .readMultipleRequest(let handles), .readMultipleVariableRequest(let handles):
            for handle in handles { c.withUsage(handle) { $0.reads += 1 } }
            if let handle = handles.first(where: { _ in true }) {
                activity(.readMultiple, handle: handle, sent: sent, bytes: 0, at: at, connection: c)
            }
        case .writeRequest(let handle, let value):
            if let cccd = cccdWrite(handle: handle, value: value, connection: c) {
                o.cccdValue = cccd
                subscribe(cccdHandle: handle, value: cccd, sent: sent, at: at, connection: c)
            } else {
                c.withUsage(handle) {
                    $0.writeRequests += 1
                    $0.keep(value: value, at: at)
                }
                activity(.write, handle: handle, sent: sent, bytes: value.count, at: at, connection: c)
            }
        case .prepareWriteRequest(let handle, _, let part):
            c.withUsage(handle) { $0.preparedWrites += 1 }
            preparedQueue.writes += 1
            preparedQueue.bytes += part.count
            if !preparedQueue.handles.contains(handle) && preparedQueue.handles.count < PreparedQueue.keptHandles {
                preparedQueue.handles.append(handle)
            }
            activity(.preparedWrite, handle: handle, sent: sent, bytes: part.count, at: at, connection: c)
        case .executeWriteRequest(let flags):
            // Flags 0x01 writes the queued values, 0x00 cancels them (§3.4.6.3).
            let q = preparedQueue
            preparedQueue = PreparedQueue()
            c.append(TimelineEvent(at: at, kind: .executeWrite(executed: flags & 0x01 != 0, prepared: q.writes,
                                                               bytes: q.bytes, handles: q.handles),
                                   byHost: sent),
                     limit: options.maximumEventsPerConnection)
        default:
            break
        }
        outstanding[key] = o
    }

    // MARK: - Responses

    /// An answered request, one by one (`TrackerOptions.keptATTTransactions`).
    @inline(never)
    func keep(_ request: Outstanding, answer: ATTPDU, at: RecordRef, connection c: Connection) {
        guard c.attTransactions.count < options.keptATTTransactions else {
            c.droppedATTTransactions += 1
            return
        }
        var error: ATTErrorCode?
        if case .errorResponse(_, _, let code) = answer { error = code }
        c.attTransactions.append(ATTTransaction(request: request.opcode, handle: request.handle, requestAt: request.at,
                                                responseAt: at, error: error, byHost: request.sent))
    }

    mutating func response(_ pdu: ATTPDU, bearer: UInt32, sent: Bool, at: RecordRef, connection c: Connection) {
        // The response travels opposite to its request.
        let key = BearerKey(bearer: bearer, requestSent: !sent)
        guard let request = outstanding[key] else {
            c.transactions.unsolicitedResponses += 1
            switch pdu {
            case .readResponse, .readBlobResponse, .readMultipleResponse, .readMultipleVariableResponse, .writeResponse,
                 .prepareWriteResponse, .executeWriteResponse:
                c.transactions.unsolicitedUseResponses += 1
            default:
                break
            }
            if case .exchangeMTUResponse(let mtu) = pdu { exchangeMTU(server: Int(mtu), at: at, connection: c) }
            return
        }
        if case .errorResponse(let requestOpcode, let handle, let error) = pdu, requestOpcode != request.opcode {
            // The answer to an earlier request the client overtook (breaking ATT's one-request rule): the
            // refusal still says what the earlier request did.
            c.transactions.unsolicitedResponses += 1
            if error != .attributeNotFound {
                c.append(TimelineEvent(at: at, kind: .attError(request: requestOpcode, handle: handle, error: error), byHost: !sent),
                         limit: options.maximumEventsPerConnection)
            }
            return
        }
        if case .errorResponse = pdu {} else if request.opcode.responseOpcode != pdu.opcode {
            c.transactions.unsolicitedResponses += 1
            return
        }
        outstanding[key] = nil
        c.transactions.answered(after: at.timestamp.nanoseconds &- request.at.timestamp.nanoseconds)
        if _slowPath(options.keptATTTransactions > 0) { keep(request, answer: pdu, at: at, connection: c) }

        switch pdu {
        case .errorResponse(let requestOpcode, let handle, let error):
            if let d = request.discovery {
                // Attribute Not Found ends a discovery procedure normally: not an error.
                c.discoveries[d].last = at
                if error == .attributeNotFound {
                    c.discoveries[d].completed = true
                    c.transactions.completed += 1
                    return
                }
            }
            if requestOpcode == .readByTypeRequest && error == .attributeNotFound {
                c.transactions.completed += 1
                return
            }
            c.transactions.errors += 1
            c.withUsage(handle) { $0.errors += 1 }
            c.append(TimelineEvent(at: at, kind: .attError(request: requestOpcode, handle: handle, error: error),
                                   byHost: request.sent),
                     limit: options.maximumEventsPerConnection)
            if let cccd = request.cccdValue, let h = request.handle, c.gatt.cccdValues[h] == cccd {
                c.gatt.cccdValues[h] = nil  // the subscription did not take
            }
            return
        default:
            c.transactions.completed += 1
        }

        // The link's database is the peer's. As central, a peer that discovers ours (a watch reading the phone's
        // services, as both sides may be clients) describes another database: it is not mixed in.
        let peerDatabase = request.sent || c.role != .central
        switch pdu {
        case .exchangeMTUResponse(let mtu):
            exchangeMTU(server: Int(mtu), at: at, connection: c)
        case .readByGroupTypeResponse(let list):
            var last: UInt16 = 0
            for entry in list {
                if let uuid = entry.uuid {
                    Self.database(peerDatabase, c) {
                        $0.addService(start: entry.handle, end: entry.endGroupHandle, uuid: uuid, primary: request.type != .secondaryService)
                    }
                }
                last = entry.endGroupHandle
            }
            found(list.count, last: last, request: request, at: at, connection: c)
        case .findByTypeValueResponse(let list):
            var last: UInt16 = 0
            for entry in list {
                if let uuid = request.type {
                    Self.database(peerDatabase, c) {
                        $0.addService(start: entry.foundAttributeHandle, end: entry.groupEndHandle, uuid: uuid, primary: true)
                    }
                }
                last = entry.groupEndHandle
            }
            found(list.count, last: last, request: request, at: at, connection: c)
        case .readByTypeResponse(let list):
            var last: UInt16 = 0
            for entry in list {
                last = entry.handle
                if request.type == .characteristic, let declaration = entry.characteristicDeclaration {
                    Self.database(peerDatabase, c) { $0.addCharacteristic(declarationHandle: entry.handle, declaration) }
                } else if !peerDatabase {
                    continue
                } else if request.type == .include {
                    var r = ByteReader(entry.value)
                    if let start = r.readU16(), let end = r.readU16() {
                        let uuid = r.remaining == 2 ? BluetoothUUID(littleEndianBytes: r.readRest()) : nil
                        c.gatt.addInclude(GATTInclude(handle: entry.handle, startHandle: start, endHandle: end, uuid: uuid))
                    }
                } else {
                    record(value: entry.value, handle: entry.handle, at: at, connection: c)
                    // A value read by type was read: use of the attribute, as a Read Request would be.
                    c.withUsage(entry.handle) { $0.reads += 1 }
                    // Read Using Characteristic UUID (Core Vol 3 Part G §4.8.2): the handle holds a value of that type.
                    if let type = request.type { c.gatt.addTypedValue(handle: entry.handle, uuid: type) }
                }
            }
            found(list.count, last: last, request: request, at: at, connection: c)
        case .findInformationResponse(let information):
            var last: UInt16 = 0
            for entry in information {
                Self.database(peerDatabase, c) { $0.addDescriptor(handle: entry.handle, uuid: entry.uuid) }
                last = entry.handle
            }
            found(information.count, last: last, request: request, at: at, connection: c)
        case .readResponse(let value):
            guard let handle = request.handle else { break }
            record(value: value, handle: handle, at: at, connection: c)
            if let run = run(.read, handle: handle, sent: request.sent, connection: c) {
                addBytes(value.count, toRun: run, connection: c)
                readChain = ReadChain(handle: handle, sent: request.sent, bytes: value.count, run: run)
            }
        case .readBlobResponse(let value):
            guard let handle = request.handle else { break }
            if request.continuesRead, var chain = readChain {
                // The value's start, from the Read Response, stays the value kept: it names what was read.
                chain.bytes += value.count
                addBytes(value.count, toRun: chain.run, connection: c)
                readChain = chain
            } else {
                record(value: value, handle: handle, at: at, connection: c)
                if let run = run(.readBlob, handle: handle, sent: request.sent, connection: c) {
                    addBytes(value.count, toRun: run, connection: c)
                }
            }
        default:
            break
        }
    }

    // MARK: - Commands, notifications, indications

    mutating func unacknowledged(_ pdu: ATTPDU, bearer: UInt32, sent: Bool, at: RecordRef, connection c: Connection) {
        switch pdu {
        case .writeCommand(let handle, let value):
            writeCommand(handle: handle, value: value, sent: sent, at: at, connection: c)
        case .signedWriteCommand(let handle, let value, _):
            c.withUsage(handle) { $0.writeCommands += 1 }
            activity(.signedWrite, handle: handle, sent: sent, bytes: value.count, at: at, connection: c)
        case .handleValueNotification(let handle, let value):
            notification(handle: handle, value: value, sent: sent, at: at, connection: c)
        case .multipleHandleValueNotification(let tuples):
            for t in tuples {
                c.withUsage(t.handle) { $0.notifications += 1 }
                activity(.notification, handle: t.handle, sent: sent, bytes: t.value.count, at: at, connection: c)
            }
        case .handleValueIndication(let handle, let value):
            let key = BearerKey(bearer: bearer, requestSent: sent)
            if let previous = outstandingIndications[key] {
                let waited = at.timestamp - previous.at.timestamp
                if waited >= options.attTimeout { unconfirmed(previous, sent: sent, waited: waited, connection: c) }
            }
            outstandingIndications[key] = (at, handle)
            c.withUsage(handle) {
                $0.indications += 1
                $0.keep(value: value, at: at)
            }
            activity(.indication, handle: handle, sent: sent, bytes: value.count, at: at, connection: c)
        case .handleValueConfirmation:
            outstandingIndications[BearerKey(bearer: bearer, requestSent: !sent)] = nil
        default:
            break
        }
    }

    @inline(__always)
    mutating func notification(handle: UInt16, value: UnsafeRawBufferPointer, sent: Bool, at: RecordRef,
                               connection c: Connection) {
        c.withUsage(handle) {
            $0.notifications += 1
            $0.keep(value: value, at: at)
        }
        activity(.notification, handle: handle, sent: sent, bytes: value.count, at: at, connection: c)
    }

    @inline(__always)
    mutating func writeCommand(handle: UInt16, value: UnsafeRawBufferPointer, sent: Bool, at: RecordRef,
                               connection c: Connection) {
        // Stacks write a CCCD with a Write Request (Core Vol 3 Part G §4.12.3): a Write Command counts as one only
        // to a discovered CCCD.
        if c.gatt.isCCCD(handle), let cccd = cccdWrite(handle: handle, value: value, connection: c) {
            subscribe(cccdHandle: handle, value: cccd, sent: sent, at: at, connection: c)
            return
        }
        c.withUsage(handle) {
            $0.writeCommands += 1
            $0.keep(value: value, at: at)
        }
        activity(.writeCommand, handle: handle, sent: sent, bytes: value.count, at: at, connection: c)
    }

    // MARK: - Helpers

    mutating func exchangeMTU(server: Int, at: RecordRef, connection c: Connection) {
        let client = clientMTU ?? server
        c.mtu = max(Self.defaultMTU, min(client, server))
        c.append(TimelineEvent(at: at, kind: .mtuExchange(client: client, server: server)),
                 limit: options.maximumEventsPerConnection)
    }

    /// Continues the current discovery procedure when this request is its next step, or starts a new one.
    mutating func discovery(_ kind: DiscoveryProcedure.Kind, start: UInt16, end: UInt16, uuid: BluetoothUUID?,
                            sent: Bool, at: RecordRef, connection c: Connection) -> Int {
        if let i = currentDiscovery, c.discoveries[i].kind == kind, !c.discoveries[i].completed,
           c.discoveries[i].endHandle == end, c.discoveries[i].uuid == uuid, start > c.discoveries[i].startHandle
        {
            c.discoveries[i].requests += 1
            c.discoveries[i].last = at
            if c.discoveries[i].records.count < ActivityRun.citedRecords { c.discoveries[i].records.append(at) }
            return i
        }
        c.discoveries.append(DiscoveryProcedure(kind: kind, startHandle: start, endHandle: end, uuid: uuid, requests: 1,
                                                found: 0, first: at, last: at, records: [at], byHost: sent))
        let index = c.discoveries.count - 1
        currentDiscovery = index
        c.append(TimelineEvent(at: at, kind: .discovery(index), byHost: sent), limit: options.maximumEventsPerConnection)
        return index
    }

    func found(_ count: Int, last: UInt16, request: Outstanding, at: RecordRef, connection c: Connection) {
        guard let d = request.discovery else { return }
        c.discoveries[d].found += count
        c.discoveries[d].last = at
        if last >= request.endHandle || last == 0xFFFF { c.discoveries[d].completed = true }
    }

    /// `openRuns` holds, per (kind, handle, sender), the latest run's index in the low 32 bits and the series'
    /// in the high 32 (-1: none yet), so one lookup finds both.
    @inline(__always)
    static func packed(run: Int, series: Int) -> Int64 { Int64(series) << 32 | Int64(UInt32(truncatingIfNeeded: run)) }
    @inline(__always)
    static func unpacked(_ value: Int64) -> (run: Int, series: Int) {
        (Int(Int32(truncatingIfNeeded: value)), Int(value >> 32))
    }

    mutating func activity(_ kind: ActivityKind, handle: UInt16, sent: Bool, bytes: Int, at: RecordRef,
                           connection c: Connection) {
        let key = RunKey(kind: kind, handle: handle, sent: sent)
        let slot: Int
        if let last = lastRun, last.key == key {
            slot = last.slot
        } else {
            guard let found = openRuns.findOrInsert(key, value: -1) else { return }
            slot = found.slot
        }
        var (open, series) = Self.unpacked(openRuns.value(at: slot))
        if series < 0, c.series.count < options.maximumSeriesPerConnection {
            c.series.append(ActivitySeries(kind: kind, handle: handle, sent: sent, at: at))
            series = c.series.count - 1
            openRuns.setValue(Self.packed(run: open, series: series), at: slot)
        }
        if series >= 0 { c.series[series].add(at: at, bytes: bytes) }
        if open >= 0, at.timestamp.nanoseconds &- c.runs[open].last.timestamp.nanoseconds <= runGap {
            c.runs[open].add(at: at, bytes: bytes)
            lastRun = (key, slot)
            return
        }
        guard c.runs.count < options.maximumEventsPerConnection else {
            // A run is shown by its timeline event: past the event limit neither is kept, so a link whose
            // operations are spaced wider than the run gap cannot grow memory without bound.
            c.droppedEvents += 1
            return
        }
        var run = ActivityRun(kind: kind, handle: handle, sent: sent, at: at)
        run.series = Int32(series)
        run.add(at: at, bytes: bytes)
        c.runs.append(run)
        if series >= 0 { c.series[series].runs += 1 }
        openRuns.setValue(Self.packed(run: c.runs.count - 1, series: series), at: slot)
        lastRun = (key, slot)
        c.append(TimelineEvent(at: at, kind: .activity(c.runs.count - 1)), limit: options.maximumEventsPerConnection)
    }

    /// The latest activity run of (kind, handle, sender), if it is still referenced.
    func run(_ kind: ActivityKind, handle: UInt16, sent: Bool, connection c: Connection) -> Int? {
        guard let slot = openRuns.slot(of: RunKey(kind: kind, handle: handle, sent: sent)) else { return nil }
        let run = Self.unpacked(openRuns.value(at: slot)).run
        return run >= 0 && run < c.runs.count ? run : nil
    }

    /// Value bytes returned for the operations of `run` (a read's response): counted in its series too.
    func addBytes(_ bytes: Int, toRun run: Int, connection c: Connection) {
        c.runs[run].bytes += bytes
        let series = Int(c.runs[run].series)
        if series >= 0 && series < c.series.count { c.series[series].bytes += bytes }
    }

    /// A Write to a Client Characteristic Configuration descriptor: known from discovery, or — when the GATT
    /// database was not discovered in this capture — a 2-byte value 0, 1 or 2 (off, notifications, indications)
    /// to a handle that is no known value. Both bits at once (`03 00`) is what stacks hardly ever write to a
    /// CCCD and what a command written to a value looks like: only a discovered CCCD takes it.
    func cccdWrite(handle: UInt16, value: UnsafeRawBufferPointer, connection c: Connection) -> UInt16? {
        guard value.count == 2 else { return nil }
        let v = UInt16(value[0]) | UInt16(value[1]) << 8
        if c.gatt.isCCCD(handle) { return v }
        guard v <= Self.undiscoveredCCCDValues, c.gatt.descriptor(handle) == nil, c.gatt.characteristic(valueHandle: handle) == nil,
              c.gatt.characteristics.isEmpty
        else { return nil }
        return v
    }

    /// The largest value a write to an undiscovered handle may have to be taken for a CCCD write: indications.
    static let undiscoveredCCCDValues: UInt16 = 2

    func subscribe(cccdHandle: UInt16, value: UInt16, sent: Bool, at: RecordRef, connection c: Connection) {
        c.gatt.cccdValues[cccdHandle] = value
        c.withUsage(cccdHandle) { $0.writeRequests += 1 }
        let valueHandle = c.gatt.characteristic(containing: cccdHandle)?.valueHandle
        c.append(TimelineEvent(at: at, kind: .subscription(cccdHandle: cccdHandle, valueHandle: valueHandle,
                                                            value: value, sent: sent)),
                 limit: options.maximumEventsPerConnection)
    }

    func record(value: UnsafeRawBufferPointer, handle: UInt16, at: RecordRef, connection c: Connection) {
        c.withUsage(handle) { $0.keep(value: value, at: at) }
    }

    func unanswered(_ request: Outstanding, waited: Duration, timedOut: Bool, connection c: Connection) {
        if timedOut { c.transactions.timeouts += 1 } else { c.transactions.unansweredAtEnd += 1 }
        c.append(TimelineEvent(at: request.at, kind: .attTimeout(request: request.opcode, handle: request.handle,
                                                                  waited: waited, timedOut: timedOut),
                               byHost: request.sent),
                 limit: options.maximumEventsPerConnection)
    }

    /// The database a discovery response describes: the peer's (`Connection.gatt`) when the phone's client asked,
    /// the phone's own server's (`Connection.serverGATT`) when the peer did.
    @inline(__always)
    static func database(_ peer: Bool, _ c: Connection, _ body: (inout GATTDatabase) -> Void) {
        if peer { body(&c.gatt) } else { body(&c.serverGATT) }
    }

    /// An indication its receiver never confirmed (Core Vol 3 Part F §3.3.3: the sender may send no other
    /// indication on the bearer until it is, and the transaction times out after 30 s). `byHost`: the phone's own
    /// GATT server sent it, so the peer failed to confirm.
    func unconfirmed(_ indication: (at: RecordRef, handle: UInt16), sent: Bool, waited: Duration, connection c: Connection) {
        let timedOut = waited >= options.attTimeout
        c.transactions.unconfirmedIndications += 1
        c.append(TimelineEvent(at: indication.at, kind: .attTimeout(request: .handleValueIndication, handle: indication.handle,
                                                                    waited: waited, timedOut: timedOut),
                               byHost: sent),
                 limit: options.maximumEventsPerConnection)
    }

    /// The link ended (or the capture did): requests still waiting are timeouts or unanswered.
    mutating func finish(at end: RecordRef?, connection c: Connection) {
        for request in outstanding.values.sorted(by: { $0.at < $1.at }) {
            let waited = (end?.timestamp ?? request.at.timestamp) - request.at.timestamp
            unanswered(request, waited: waited, timedOut: waited >= options.attTimeout, connection: c)
        }
        // Only when the link ended: at the capture's end an indication may still be confirmed.
        if end != nil, c.end != nil {
            for entry in outstandingIndications.entries {
                guard let indication = entry.value else { continue }
                unconfirmed(indication, sent: entry.key.requestSent, waited: end!.timestamp - indication.at.timestamp, connection: c)
            }
        }
        outstanding.removeAll()
        outstandingIndications.removeAll()
        readChain = nil
        preparedQueue = PreparedQueue()
        openRuns.removeAll()
        lastRun = nil
        if let last = c.lastATT, let end, end.timestamp - last.timestamp >= options.idleGap {
            c.append(TimelineEvent(at: last, kind: .idle(until: end)), limit: options.maximumEventsPerConnection)
        }
    }
}
