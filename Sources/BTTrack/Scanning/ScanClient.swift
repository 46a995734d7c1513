import BTWire
import BTCapture

/// One scan client of Android's stack, seen through its offloaded filter (vendor APCF `0xFD57`, feature
/// selection sub-command): from the filter's add to its delete or clear. Android gives each client's filter an
/// index; an app that scans without filters gets the all-pass filter (feature selection 0, index 1 in AOSP's
/// `ALL_PASS_FILTER_INDEX_REGULAR_SCAN`), shared by every unfiltered client. The controller's scan runs while
/// any client is installed and is re-programmed whenever one comes or goes, so the clients, not the controller's
/// enable and disable, say whose scan it was.
public struct ScanClient: Sendable, Equatable {
    public var controller: UInt16
    /// APCF filter index.
    public var filterIndex: UInt8
    /// APCF feature selection: which filter conditions apply (bit 0 address, 1 service data, 2 service UUID,
    /// 3 solicitation UUID, 4 local name, 5 manufacturer data, …); 0 lets every advertisement through.
    public var features: UInt16
    /// The filter's add.
    public var added: RecordRef
    /// Its delete or clear; nil while installed at the end of the capture.
    public var removed: RecordRef?
    /// Where the controller's open scan session stood when the filter was added and removed (nil: no session
    /// was on): the client's reports are those of its lifetime, not of the sessions it overlapped.
    public var addedMark: SessionMark?
    public var removedMark: SessionMark?
    /// When a link on the controller last came up or went down before the filter was added: a client that
    /// comes again after a link changed is a new scan, not a restart.
    public var lastLinkChange: Timestamp?

    /// The all-pass filter: a client scanning without filters.
    public var isAllPass: Bool { features == 0 }
    /// The stack's own all-pass filter at index 0, which device discovery (an inquiry, Android's `startDiscovery`)
    /// installs for its LE part: the OS's discovery, not an app's scan client.
    public var isDiscoveryFilter: Bool { isAllPass && filterIndex == Self.discoveryFilterIndex }
    static let discoveryFilterIndex: UInt8 = 0

    public init(controller: UInt16, filterIndex: UInt8, features: UInt16, added: RecordRef, removed: RecordRef? = nil) {
        self.controller = controller
        self.filterIndex = filterIndex
        self.features = features
        self.added = added
        self.removed = removed
    }

    /// A scan session's counters at one moment.
    public struct SessionMark: Sendable, Equatable {
        /// Index into the model's scan sessions.
        public var session: Int
        public var reports: Int
        public var scanResponses: Int

        public init(session: Int, reports: Int, scanResponses: Int) {
            self.session = session
            self.reports = reports
            self.scanResponses = scanResponses
        }
    }

    /// At most this many clients are kept per capture (each add is one).
    public static let limit = 4096
}
