import Foundation
internal import Yams

/// The audit configuration file (YAML), e.g. `.btlens.yml`:
///
///     fail_on: warning              # info | warning | error | never
///     app: com.example.app          # judge only this app's scans and links (a bug report names them)
///     disabled: [BTL004, connection-churn]
///     rules:
///       poll-instead-of-notify:     # a rule id or name
///         severity: error           # info | warning | error
///         minimum_reads: 5          # any of the rule's options
///       BTL006:
///         idle_seconds: 60
public struct ConfigurationFile: Sendable {
    public var configuration = AuditConfiguration()
    public var failOn: String?
    /// `app`: the package `btlens audit --app` audits when the option is not given.
    public var app: String?

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Options are durations, counts and ratios: a bound keeps them meaningful (and conversions safe).
    public static let largestOption = 1e9

    public init() {}

    public init(yaml text: String) throws {
        let root: Any?
        do {
            root = try Yams.load(yaml: text)
        } catch {
            throw Failure(description: "not valid YAML: \(Self.describe(yamlError: error))")
        }
        guard let root else { return }  // an empty file is an empty configuration
        guard let map = root as? [String: Any] else { throw Failure(description: "the top level must be a mapping") }
        for (key, value) in map {
            switch key {
            case "fail_on":
                guard let v = value as? String, ["info", "warning", "error", "never"].contains(v) else {
                    throw Failure(description: "fail_on must be info, warning, error or never")
                }
                failOn = v
            case "app":
                guard let v = value as? String, !v.isEmpty, !v.contains(where: \.isWhitespace) else {
                    throw Failure(description: "app must be a package name (com.example.app)")
                }
                app = v
            case "disabled", "enabled":
                guard let list = value as? [Any] else { throw Failure(description: "\(key) must be a list of rule ids or names") }
                for item in list {
                    guard let id = AuditConfiguration.ruleID("\(item)") else { throw Failure(description: "\(key): no rule '\(item)'") }
                    if key == "disabled" { configuration.disabled.insert(id) } else { configuration.enabled.insert(id) }
                }
            case "rules":
                guard let rules = value as? [String: Any] else { throw Failure(description: "rules must be a mapping of rule to settings") }
                for (ruleKey, settings) in rules {
                    guard let rule = RuleRegistry.rule(ruleKey) else { throw Failure(description: "rules: no rule '\(ruleKey)'") }
                    let d = rule.description
                    guard let settings = settings as? [String: Any] else { throw Failure(description: "rules.\(ruleKey) must be a mapping") }
                    for (name, v) in settings {
                        if name == "severity" {
                            guard let s = (v as? String).flatMap(Severity.init(rawValue:)) else {
                                throw Failure(description: "rules.\(ruleKey).severity must be info, warning or error")
                            }
                            configuration.severities[d.id] = s
                        } else if name == "enabled" {
                            guard let on = v as? Bool else { throw Failure(description: "rules.\(ruleKey).enabled must be true or false") }
                            if on { configuration.enabled.insert(d.id) } else { configuration.disabled.insert(d.id) }
                        } else {
                            guard d.options.contains(where: { $0.name == name }) else {
                                let known = d.options.map(\.name).joined(separator: ", ")
                                throw Failure(description: "rules.\(ruleKey): no option '\(name)'" + (known.isEmpty ? "" : " (options: \(known))"))
                            }
                            guard let number = (v as? Double) ?? (v as? Int).map(Double.init), number.isFinite,
                                  number >= 0, number <= Self.largestOption
                            else {
                                throw Failure(description: "rules.\(ruleKey).\(name) must be a number from 0 to \(Int(Self.largestOption))")
                            }
                            configuration.options[d.id, default: [:]][name] = number
                        }
                    }
                }
            default:
                throw Failure(description: "unknown key '\(key)' (keys: fail_on, app, disabled, enabled, rules)")
            }
        }
    }

    /// Yams describes a syntax error over several lines, with a snippet of the file; btlens errors are one line:
    /// "line L, column C: problem".
    static func describe(yamlError error: Error) -> String {
        func at(_ line: Int, _ column: Int) -> String { "line \(line), column \(column)" }
        func at(_ mark: Mark) -> String { at(mark.line, mark.column) }
        switch error as? YamlError {
        case let .scanner(context, problem, mark, _)?, let .parser(context, problem, mark, _)?,
             let .composer(context, problem, mark, _)?:
            return "\(at(mark)): \(problem)" + (context.map { " (\($0.text) at \(at($0.mark)))" } ?? "")
        case let .reader(problem, offset, _, yaml)?:
            // The offset counts characters from the start of the text.
            guard let offset, let index = yaml.index(yaml.startIndex, offsetBy: offset, limitedBy: yaml.endIndex) else {
                return problem
            }
            let before = yaml[..<index]
            let lineStart = before.lastIndex(where: \.isNewline).map { before.index(after: $0) } ?? before.startIndex
            return "\(at(before.filter(\.isNewline).count + 1, before[lineStart...].unicodeScalars.count + 1)): \(problem)"
        case let .duplicatedKeysInMapping(duplicates, context)?:
            return "\(at(context.mark)): duplicated key\(duplicates.count == 1 ? "" : "s") "
                + duplicates.sorted().map { "'\($0)'" }.joined(separator: ", ")
        default:
            return "\(error)".split(whereSeparator: \.isNewline).joined(separator: " ")
        }
    }

    public init(path: String) throws {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw Failure(description: "cannot read the configuration file")
        }
        try self.init(yaml: String(decoding: data, as: UTF8.self))
    }
}

/// Accepted findings: CI fails only on findings not in the baseline (matched by fingerprint, `Finding.fingerprint`).
public struct Baseline: Sendable {
    public var fingerprints: Set<String>

    public init(findings: [Finding]) { fingerprints = Set(findings.map(\.fingerprint)) }

    /// Entries in the format btlens wrote before fingerprint version 2 (no `v2|` prefix): they match nothing.
    public var legacyFingerprints: Set<String> {
        fingerprints.filter { !$0.hasPrefix(Finding.fingerprintVersion + "|") }
    }

    /// Whether an old-format entry of this baseline accepted `f` (`Finding.legacyFingerprint`), to tell the user
    /// why findings a baseline used to hide are reported again. It does not make the finding accepted.
    public func acceptedBeforeV2(_ f: Finding) -> Bool { fingerprints.contains(f.legacyFingerprint) }

    public init(path: String) throws {
        guard let data = FileManager.default.contents(atPath: path),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let list = object["findings"] as? [[String: Any]]
        else { throw ConfigurationFile.Failure(description: "not a btlens baseline (expected {\"findings\": [{\"fingerprint\": …}]})") }
        fingerprints = Set(list.compactMap { $0["fingerprint"] as? String })
    }

    public func contains(_ f: Finding) -> Bool { fingerprints.contains(f.fingerprint) }
}
