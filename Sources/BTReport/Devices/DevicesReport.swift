import BTCapture
import BTTrack

/// What `btlens devices` shows for one capture: the advertisers it heard (most reports first), its scan
/// sessions and its own advertising sessions. Both renderers (`DevicesText`, `DevicesJSON`) take this.
public struct DevicesReport: Sendable {
    public var file: String
    public var info: CaptureInfo
    /// Most reports first, then by address.
    public var advertisers: [Advertiser]
    public var advertiserOverflow: AdvertiserOverflow
    public var scans: ScanSessions
    public var ownAdvertising: AdvertisingSessions
    public var firstTimestamp: Timestamp?
    public var lastTimestamp: Timestamp?

    public init(file: String, info: CaptureInfo, model: CaptureModel, advertiserOverflow: AdvertiserOverflow) {
        self.file = file
        self.info = info
        // Sort indices, not the 232-byte advertisers themselves.
        let all = model.advertisers
        let keys = all.map { (reports: $0.reports, address: $0.address.rawValue, type: $0.addressType.rawValue) }
        let order = keys.indices.sorted { a, b in
            keys[a].reports != keys[b].reports ? keys[a].reports > keys[b].reports
                : (keys[a].address, keys[a].type) < (keys[b].address, keys[b].type)
        }
        advertisers = order.map { all[$0] }
        self.advertiserOverflow = advertiserOverflow
        scans = model.scans
        ownAdvertising = model.ownAdvertising
        firstTimestamp = model.firstTimestamp
        lastTimestamp = model.lastTimestamp
    }
}
