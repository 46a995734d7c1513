import BTWire
import BTCapture
import BTDecode

/// A BR/EDR page or inquiry scan's settings (Core Vol 4 Part E §7.3.20, §7.3.22, §7.3.48, §7.3.52): the
/// controller listens `window` slots every `interval` slots, twice back to back when interlaced.
public struct ClassicScanActivity: Sendable, Equatable {
    /// The defaults after HCI Reset (Core Vol 4 Part E §6.8–6.11): 1.28 s interval, 11.25 ms window, standard.
    public static let defaultIntervalSlots: UInt16 = 0x0800
    public static let defaultWindowSlots: UInt16 = 0x0012
    /// One baseband slot: 625 µs.
    public static let slotSeconds = 0.000625

    public var intervalSlots = defaultIntervalSlots
    public var windowSlots = defaultWindowSlots
    public var interlaced = false

    public init(intervalSlots: UInt16 = defaultIntervalSlots, windowSlots: UInt16 = defaultWindowSlots, interlaced: Bool = false) {
        self.intervalSlots = intervalSlots
        self.windowSlots = windowSlots
        self.interlaced = interlaced
    }

    /// The share of time the receiver listens: an interlaced scan runs two windows per interval when they fit
    /// (Core Vol 2 Part B §8.3.1), otherwise it behaves as a standard one.
    public var dutyCycle: Double {
        guard intervalSlots > 0 else { return 0 }
        let windows = interlaced && Int(windowSlots) * 2 <= Int(intervalSlots) ? 2.0 : 1.0
        return min(1, windows * Double(windowSlots) / Double(intervalSlots))
    }

    /// What Android's stack programs when it brings the controller up (AOSP `btm_inq`: interlaced page and
    /// inquiry scan at the default activity, page scan on whenever the phone is connectable, which it is while
    /// Bluetooth is on): what a capture that joined later is assumed to run.
    public static let android = ClassicScanActivity(interlaced: true)
}

/// A stretch of time during which a controller's page scan and inquiry scan settings held: the background
/// listening that makes the phone connectable and discoverable, which HCI shows only as settings.
public struct ClassicScanSpan: Sendable, Equatable {
    public var controller: UInt16
    public var start: Timestamp
    /// nil: still so when the capture ended.
    public var end: Timestamp?
    /// nil: off.
    public var pageScan: ClassicScanActivity?
    public var inquiryScan: ClassicScanActivity?
}

/// Follows Write Scan Enable and the page/inquiry scan activity and type commands the controller accepted.
/// Before a controller's first Write Scan Enable (or HCI Reset) its state is unknown: `firstKnown` says from when
/// it is known, so that the cost model can say what it assumed before.
public struct ClassicScanTracker: Sendable {
    /// Spans kept per capture: the stack writes these settings a few times per connection at most.
    public static let maximumKept = 10_000

    struct State {
        var enable: UInt8?
        var page = ClassicScanActivity()
        var inquiry = ClassicScanActivity()
        var openSpan: Int?
    }

    /// Write Scan Enable (0x0C1A) through Write Page Scan Type (0x0C47): the commands this tracker reads lie there.
    static let settingsCommands: ClosedRange<UInt16> = HCIOpcode.writeScanEnable.rawValue...HCIOpcode.writePageScanType.rawValue

    /// Scan Enable bits (Core Vol 4 Part E §7.3.18).
    static let inquiryScanBit: UInt8 = 0x01, pageScanBit: UInt8 = 0x02

    public private(set) var spans: [ClassicScanSpan] = []
    /// When each controller's state became known (its first Write Scan Enable or HCI Reset).
    public private(set) var firstKnown: [UInt16: Timestamp] = [:]
    var states: [UInt16: State] = [:]

    public init() {}

    /// A command the controller accepted.
    public mutating func commandCompleted(_ c: CommandCorrelator.Pending, at: RecordRef) {
        // Every tracked command's completion comes here (scan and APCF ones by the thousand): the state is looked
        // up for these settings' commands only.
        guard Self.settingsCommands.contains(c.opcode.rawValue) else { return }
        var s = states[at.controller] ?? State()
        let p = c.parameters
        func u16(_ i: Int) -> UInt16 { UInt16(p[i]) | UInt16(p[i + 1]) << 8 }
        switch c.opcode {
        case .writeScanEnable:
            guard let v = p.first else { return }
            s.enable = v
        case .writePageScanActivity:
            guard p.count >= 4 else { return }
            s.page.intervalSlots = u16(0)
            s.page.windowSlots = u16(2)
        case .writeInquiryScanActivity:
            guard p.count >= 4 else { return }
            s.inquiry.intervalSlots = u16(0)
            s.inquiry.windowSlots = u16(2)
        case .writePageScanType:
            guard let v = p.first else { return }
            s.page.interlaced = v == 1
        case .writeInquiryScanType:
            guard let v = p.first else { return }
            s.inquiry.interlaced = v == 1
        default:
            return
        }
        update(&s, at: at)
    }

    /// HCI Reset or the controller's removal: scanning off, settings back to their defaults.
    public mutating func controllerReset(at: RecordRef) {
        var s = states[at.controller] ?? State()
        s.enable = 0
        s.page = ClassicScanActivity()
        s.inquiry = ClassicScanActivity()
        update(&s, at: at)
    }

    mutating func update(_ s: inout State, at: RecordRef) {
        defer { states[at.controller] = s }
        guard let enable = s.enable else { return }
        if firstKnown[at.controller] == nil { firstKnown[at.controller] = at.timestamp }
        let page = enable & Self.pageScanBit != 0 ? s.page : nil
        let inquiry = enable & Self.inquiryScanBit != 0 ? s.inquiry : nil
        if let i = s.openSpan {
            if spans[i].pageScan == page && spans[i].inquiryScan == inquiry { return }
            spans[i].end = at.timestamp
            s.openSpan = nil
        }
        guard page != nil || inquiry != nil, spans.count < Self.maximumKept else { return }
        s.openSpan = spans.count
        spans.append(ClassicScanSpan(controller: at.controller, start: at.timestamp, pageScan: page, inquiryScan: inquiry))
    }
}
