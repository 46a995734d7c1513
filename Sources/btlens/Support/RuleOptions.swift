import ArgumentParser
import Foundation
import BTRules

/// The rule switches that `audit` and `live` share: a configuration file (`.btlens.yml` in the current directory
/// when none is named) and `--enable`/`--disable` on top of it.
struct RuleOptions: ParsableArguments {
    @Option(name: .long, help: "Configuration file (YAML). Default: .btlens.yml in the current directory, if any.")
    var config: String?

    @Option(name: .long, parsing: .singleValue, help: "Run this rule (id or name) even if the configuration disables it (repeatable).")
    var enable: [String] = []

    @Option(name: .long, parsing: .singleValue, help: "Do not run this rule (id or name; repeatable).")
    var disable: [String] = []

    func validate() throws {
        for key in enable + disable where AuditConfiguration.ruleID(key) == nil {
            throw ValidationError("no rule '\(key)' (see btlens rules)")
        }
    }

    /// The configuration file's settings with the command line's switches applied; a bad file is a usage error
    /// naming it.
    func load() throws -> (configuration: AuditConfiguration, file: ConfigurationFile) {
        var file = ConfigurationFile()
        let path = config ?? (FileManager.default.fileExists(atPath: ".btlens.yml") ? ".btlens.yml" : nil)
        if let path {
            do {
                file = try ConfigurationFile(path: path)
            } catch {
                Diagnostics.error(file: path, "\(error)")
                throw ExitStatus.usage
            }
        }
        var configuration = file.configuration
        for key in disable {
            if let id = AuditConfiguration.ruleID(key) { configuration.disabled.insert(id); configuration.enabled.remove(id) }
        }
        for key in enable {
            if let id = AuditConfiguration.ruleID(key) { configuration.enabled.insert(id); configuration.disabled.remove(id) }
        }
        return (configuration, file)
    }
}
