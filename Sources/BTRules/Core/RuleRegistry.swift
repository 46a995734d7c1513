/// Every rule btlens ships, in id order. A test checks ids and names are unique.
public enum RuleRegistry {
    public static let all: [any Rule.Type] = [
        ScanAfterConnectRule.self,
        DuplicateScanRule.self,
        DiscoverAllServicesRule.self,
        DiscoverAllCharacteristicsRule.self,
        PollInsteadOfNotifyRule.self,
        LingeringConnectionRule.self,
        ReconnectByScanRule.self,
        RedundantDiscoveryRule.self,
        ConnectionChurnRule.self,
        ATTTimeoutRule.self,
        IdleFastIntervalRule.self,
        InvalidOperationRule.self,
        AdvertisingAfterConnectRule.self,
        ScanChurnRule.self,
    ]

    public static var descriptions: [RuleDescription] { all.map { $0.description } }

    /// A rule by id (`BTL005`, case-insensitive) or name (`poll-instead-of-notify`).
    public static func rule(_ key: String) -> (any Rule.Type)? {
        all.first { $0.description.id.lowercased() == key.lowercased() || $0.description.name == key }
    }
}
