import BTWire
import BTDecode

/// Joins chained LE Extended Advertising Reports (data status 1, "more to come") into one advertisement,
/// per (controller, address, address type, SID, scan response or not), as FORMATS.md §5 says.
///
/// Why a separate buffer: a chained advertisement's AD structures may be split anywhere, so parsing a
/// fragment alone gives garbage. Memory is bounded: at most `maximumChains` chains in progress (the least
/// recently extended one is dropped, and counted, when another starts) and `maximumDataLength` bytes each
/// (the most extended advertising data can hold, Core Vol 4 Part E §7.8.54; more is cut and the
/// advertisement counted as truncated). Buffers are reused, so steady state does not allocate.
struct ExtendedReportAssembler {
    static let maximumChains = 32
    static let maximumDataLength = 1650

    struct Chain {
        var key: UInt64 = 0
        var controller: UInt16 = 0
        var sidAndKind: UInt16 = 0
        var data: [UInt8] = []
        var lastUse = 0
        var overflowed = false
        var active = false
    }

    private var chains: [Chain] = []
    private var clock = 0
    /// Chains dropped to make room for others before they completed.
    private(set) var abandoned = 0
    /// Chains in progress.
    private(set) var activeCount = 0

    /// SID (0xFF = none) in the low byte, scan response in bit 8.
    @inline(__always)
    static func sidAndKind(_ report: AdvertisingReport) -> UInt16 {
        UInt16(report.advertisingSID ?? 0xFF) | (report.isScanResponse ? 0x100 : 0)
    }

    @inline(__always)
    private func find(_ key: DeviceKey, _ controller: UInt16, _ sidAndKind: UInt16) -> Int? {
        for i in chains.indices where chains[i].active && chains[i].key == key.rawValue
            && chains[i].sidAndKind == sidAndKind && chains[i].controller == controller {
            return i
        }
        return nil
    }

    var isEmpty: Bool { activeCount == 0 }

    /// Keeps a "more to come" fragment.
    mutating func append(_ report: AdvertisingReport, key: DeviceKey, controller: UInt16) {
        clock += 1
        let kind = Self.sidAndKind(report)
        let i: Int
        if let existing = find(key, controller, kind) {
            i = existing
        } else {
            i = freeSlot()
            if !chains[i].active { activeCount += 1 }
            chains[i].key = key.rawValue
            chains[i].controller = controller
            chains[i].sidAndKind = kind
            chains[i].data.removeAll(keepingCapacity: true)
            chains[i].overflowed = false
            chains[i].active = true
        }
        chains[i].lastUse = clock
        add(report.data, to: i)
    }

    private mutating func add(_ data: UnsafeRawBufferPointer, to i: Int) {
        let room = Self.maximumDataLength - chains[i].data.count
        if data.count > room { chains[i].overflowed = true }
        chains[i].data.append(contentsOf: UnsafeRawBufferPointer(rebasing: data.prefix(max(0, room))))
    }

    private mutating func freeSlot() -> Int {
        if let free = chains.firstIndex(where: { !$0.active }) { return free }
        if chains.count < Self.maximumChains {
            chains.append(Chain())
            return chains.count - 1
        }
        var oldest = 0
        for i in chains.indices where chains[i].lastUse < chains[oldest].lastUse { oldest = i }
        abandoned += 1
        return oldest
    }

    /// For the last fragment of a chain (data status complete or truncated): when earlier fragments are
    /// pending, frees the chain and hands over its joined data (moved out, not copied) and whether it
    /// overflowed the buffer; nil when there is no chain to join. Give the buffer back with `recycle`.
    mutating func complete(_ report: AdvertisingReport, key: DeviceKey,
                           controller: UInt16) -> (data: [UInt8], overflowed: Bool)? {
        guard let i = find(key, controller, Self.sidAndKind(report)) else { return nil }
        add(report.data, to: i)
        let data = chains[i].data
        chains[i].data = []
        chains[i].active = false
        activeCount -= 1
        return (data, chains[i].overflowed)
    }

    /// Returns a buffer from `complete` so its storage serves the next chain.
    mutating func recycle(_ buffer: [UInt8]) {
        if let i = chains.firstIndex(where: { !$0.active && $0.data.capacity == 0 }) { chains[i].data = buffer }
    }
}
