import BTWire
import BTCapture
import BTDecode

/// Follows our own advertising (peripheral role): LE Set Advertising Parameters / Data / Scan Response Data /
/// Enable (0x2006, 0x2008–0x200A; legacy advertising is set 0) and the extended forms per advertising set
/// (0x2036–0x2039), turning accepted enables into `AdvertisingSession`s.
///
/// A session ends at an accepted disable, at LE Advertising Set Terminated (extended sets: a connection,
/// the duration or the event limit), at HCI Reset or the controller's removal, and, for legacy connectable
/// advertising, at the Connection Complete of a central that connected to it (the controller stops
/// advertising by itself; Core Vol 4 Part E §7.8.9). Enabling a set again after that is a new session whose
/// `resumedAfterConnection` names the connection.
///
/// Only commands, Advertising Set Terminated and Connection Complete reach this tracker, so its cost does
/// not depend on the number of advertising reports.
public struct OwnAdvertisingTracker {
    public internal(set) var sessions = AdvertisingSessions()
    var sets: [AdvertisingSetState] = []
    /// Recent peripheral connections, to name the one an Advertising Set Terminated refers to by handle.
    var recentConnections: [(controller: UInt16, handle: UInt16, at: RecordRef)] = []
    static let recentConnectionLimit = 64

    public init() {}

    func setIndex(controller: UInt16, handle: UInt8, extended: Bool) -> Int? {
        sets.firstIndex { $0.controller == controller && $0.handle == handle && $0.isExtended == extended }
    }

    mutating func set(controller: UInt16, handle: UInt8, extended: Bool) -> Int {
        if let i = setIndex(controller: controller, handle: handle, extended: extended) { return i }
        sets.append(AdvertisingSetState(controller: controller, handle: handle, isExtended: extended))
        return sets.count - 1
    }

    // MARK: Commands

    public mutating func commandCompleted(_ command: CommandCorrelator.Pending, status: HCIStatus, at: RecordRef) {
        guard status == .success else { return }
        let controller = at.controller
        command.parameters.withUnsafeBytes { p in
            switch command.opcode {
            case .leSetAdvertisingParameters:
                guard let parameters = LESetAdvertisingParameters(p) else { return }
                let i = set(controller: controller, handle: 0, extended: false)
                sets[i].intervalMinimum = UInt32(parameters.intervalMin)
                sets[i].intervalMaximum = UInt32(parameters.intervalMax)
                sets[i].advertisingType = parameters.advertisingType
            case .leSetAdvertisingData, .leSetScanResponseData:
                guard let d = LESetAdvertisingData(p) else { return }
                let i = set(controller: controller, handle: 0, extended: false)
                if command.opcode == .leSetAdvertisingData { sets[i].data = Array(d.data) } else { sets[i].scanResponse = Array(d.data) }
                refreshData(i)
            case .leSetAdvertisingEnable:
                guard let enable = p.first else { return }
                let i = set(controller: controller, handle: 0, extended: false)
                if enable != 0 {
                    start(i, at: at, duration: 0, maximumEvents: 0)
                } else {
                    end(i, at: at, reason: .disabled)
                }
            case .leSetExtendedAdvertisingParameters:
                guard let parameters = ExtendedAdvertisingParameters(p) else { return }
                let i = set(controller: controller, handle: parameters.handle, extended: true)
                sets[i].intervalMinimum = parameters.intervalMinimum
                sets[i].intervalMaximum = parameters.intervalMaximum
                sets[i].properties = parameters.properties
            case .leSetExtendedAdvertisingData, .leSetExtendedScanResponseData:
                guard let d = LESetExtendedAdvertisingData(p) else { return }
                let i = set(controller: controller, handle: d.advertisingHandle, extended: true)
                if sets[i].apply(operation: d.operation, fragment: d.data,
                                 scanResponse: command.opcode == .leSetExtendedScanResponseData) {
                    refreshData(i)
                }
            case .leSetExtendedAdvertisingEnable:
                guard let enable = LESetExtendedAdvertisingEnable(p) else { return }
                if enable.enable {
                    for s in enable.sets {
                        start(set(controller: controller, handle: s.handle, extended: true), at: at,
                              duration: s.duration, maximumEvents: s.maxEvents)
                    }
                } else if enable.sets.isEmpty {
                    // Disable with no sets listed disables every set.
                    for i in sets.indices where sets[i].controller == controller && sets[i].isExtended {
                        end(i, at: at, reason: .disabled)
                    }
                } else {
                    for s in enable.sets {
                        if let i = setIndex(controller: controller, handle: s.handle, extended: true) {
                            end(i, at: at, reason: .disabled)
                        }
                    }
                }
            default:
                break
            }
        }
    }

    // MARK: Events

    /// LE Advertising Set Terminated (subevent 0x12) parameters (after the subevent code).
    public mutating func advertisingSetTerminated(_ parameters: UnsafeRawBufferPointer, at: RecordRef) {
        guard let t = AdvertisingSetTerminated(parameters),
              let i = setIndex(controller: at.controller, handle: t.handle, extended: true),
              let s = sets[i].current
        else { return }
        sessions[s].completedEvents = t.completedEvents
        if t.status == .success {
            let connection = recentConnections.last { $0.controller == at.controller && $0.handle == t.connectionHandle }
            end(i, at: at, reason: .connected, connection: connection?.at ?? at)
        } else {
            end(i, at: at, reason: .terminated(t.status))
        }
    }

    public mutating func connectionCameUp(controller: UInt16, handle: UInt16, isPeripheral: Bool, at: RecordRef) {
        guard isPeripheral else { return }
        recentConnections.append((controller, handle, at))
        if recentConnections.count > Self.recentConnectionLimit { recentConnections.removeFirst() }
        for i in sets.indices where sets[i].controller == controller {
            guard let s = sets[i].current else { continue }
            sessions[s].connectionsWhileAdvertising.append(at)
            // Legacy connectable advertising stops when a central connects; extended sets say so with
            // LE Advertising Set Terminated.
            if !sets[i].isExtended && sets[i].isConnectable {
                end(i, at: at, reason: .connected, connection: at)
            }
        }
    }

    public func isAdvertising(controller: UInt16) -> Bool {
        sets.contains { $0.controller == controller && $0.current != nil }
    }

    /// HCI Reset or controller removed: advertising stops, and the sets and their data are forgotten.
    public mutating func controllerReset(at: RecordRef) {
        for i in sets.indices where sets[i].controller == at.controller { end(i, at: at, reason: .reset) }
        sets.removeAll { $0.controller == at.controller }
        recentConnections.removeAll { $0.controller == at.controller }
    }

    /// Every session in start order; those still on keep `end == nil`.
    public mutating func finish(at: RecordRef?) -> AdvertisingSessions { sessions }

    // MARK: Sessions

    mutating func start(_ i: Int, at: RecordRef, duration: UInt16, maximumEvents: UInt8) {
        // Enabling a set that is already on keeps it on (an extended enable only restarts its duration).
        if let s = sets[i].current {
            sessions[s].durationMilliseconds = duration == 0 ? nil : HCIUnits.durationToMilliseconds(duration)
            sessions[s].maximumEvents = maximumEvents == 0 ? nil : maximumEvents
            return
        }
        let state = sets[i]
        var session = AdvertisingSession(
            controller: state.controller, setHandle: state.handle, start: at, end: nil, isExtended: state.isExtended,
            connectionsWhileAdvertising: [], endReason: nil, endedByConnection: nil,
            resumedAfterConnection: state.endedByConnection,
            intervalMinimumMilliseconds: state.intervalMinimum.map { HCIUnits.slotsToMilliseconds($0) },
            intervalMaximumMilliseconds: state.intervalMaximum.map { HCIUnits.slotsToMilliseconds($0) },
            advertisingType: state.advertisingType, properties: state.properties, isConnectable: state.isConnectable,
            isScannable: state.isScannable, parametersKnown: state.parametersKnown, advertisingData: [],
            scanResponseData: [], localName: nil, serviceUUIDs: [],
            durationMilliseconds: duration == 0 ? nil : HCIUnits.durationToMilliseconds(duration),
            maximumEvents: maximumEvents == 0 ? nil : maximumEvents, completedEvents: nil)
        Self.describe(&session, data: state.data, scanResponse: state.scanResponse)
        let open = sets.compactMap(\.current)
        sessions.append(session, isOpen: open.contains)
        sets[i].current = sessions.count - 1
        sets[i].endedByConnection = nil
    }

    mutating func end(_ i: Int, at: RecordRef, reason: AdvertisingEndReason, connection: RecordRef? = nil) {
        guard let s = sets[i].current else { return }
        sessions[s].end = at
        sessions[s].endReason = reason
        sessions[s].endedByConnection = connection
        sets[i].current = nil
        sets[i].endedByConnection = connection
    }

    /// New data while a set is on: the session shows the latest.
    mutating func refreshData(_ i: Int) {
        guard let s = sets[i].current else { return }
        Self.describe(&sessions[s], data: sets[i].data, scanResponse: sets[i].scanResponse)
    }

    static func describe(_ session: inout AdvertisingSession, data: [UInt8], scanResponse: [UInt8]) {
        session.advertisingData = data
        session.scanResponseData = scanResponse
        var name: String?
        var uuids: [BluetoothUUID] = []
        for bytes in [data, scanResponse] {
            bytes.withUnsafeBytes { raw in
                let view = AdvertisingDataView(raw)
                if let n = view.completeLocalName { name = n } else if name == nil { name = view.shortenedLocalName }
                for u in view.serviceUUIDs where !uuids.contains(u) { uuids.append(u) }
            }
        }
        session.localName = name
        session.serviceUUIDs = uuids
    }
}
