import BTWire
import BTCapture
import BTDecode

/// A BR/EDR inquiry the controller ran (HCI Inquiry, Core Vol 4 Part E §7.1.1): from the command it accepted to
/// Inquiry Complete, Inquiry Cancel, a reset, or the inquiry length it was given.
public struct ClassicInquirySpan: Sendable, Equatable {
    public var controller: UInt16
    public var start: Timestamp
    /// nil: the capture shows no end; `longest` bounds it.
    public var end: Timestamp?
    /// The start plus the inquiry length asked for (× 1.28 s): the controller stops by then.
    public var longest: Timestamp

    /// The end the capture shows, or the inquiry length's, whichever comes first (`captureEnd` past both).
    public func end(captureEnd: Timestamp) -> Timestamp { min(end ?? longest, longest, max(captureEnd, start)) }
}

/// Follows HCI Inquiry, Inquiry Cancel and Inquiry Complete (BR/EDR device discovery).
public struct ClassicInquiryTracker: Sendable {
    /// The inquiry length's unit (Core Vol 4 Part E §7.1.1): 1.28 s.
    static let lengthUnitNanoseconds: Int64 = 1_280_000_000
    /// Inquiries kept per capture.
    public static let maximumKept = 10_000

    public private(set) var spans: [ClassicInquirySpan] = []
    var open: [UInt16: Int] = [:]

    public init() {}

    /// The controller accepted `c` (Command Status or Complete with success).
    public mutating func commandAccepted(_ c: CommandCorrelator.Pending, at: RecordRef) {
        switch c.opcode {
        case .inquiry:
            // LAP (3 bytes), inquiry length, number of responses.
            guard c.parameters.count >= 4 else { return }
            ended(controller: at.controller, at: c.at.timestamp)
            guard spans.count < Self.maximumKept else { return }
            let longest = c.at.timestamp.adding(nanoseconds: Int64(c.parameters[3]) * Self.lengthUnitNanoseconds)
            open[at.controller] = spans.count
            spans.append(ClassicInquirySpan(controller: at.controller, start: c.at.timestamp, longest: longest))
        case .inquiryCancel:
            ended(controller: at.controller, at: at.timestamp)
        default:
            return
        }
    }

    /// Inquiry Complete, Inquiry Cancel's completion or a reset: the controller's inquiry is over.
    public mutating func ended(controller: UInt16, at: Timestamp) {
        guard let i = open.removeValue(forKey: controller) else { return }
        spans[i].end = at
    }
}
