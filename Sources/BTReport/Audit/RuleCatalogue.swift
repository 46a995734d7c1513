import BTWire
import BTRules

/// The rule catalogue for `btlens rules` and `btlens explain`.
public enum RuleCatalogue {
    public static func json(_ rules: [RuleDescription]) -> String {
        JSONValue.array(rules.map { d in
            .object([
                ("id", .string(d.id)), ("name", .string(d.name)), ("title", .string(d.title)),
                ("category", .string(d.category.rawValue)), ("severity", .string(d.defaultSeverity.rawValue)),
                ("rationale", .string(d.rationale)), ("corebluetooth", .string(d.coreBluetooth)),
                ("android", .string(d.android)),
                ("options", .array(d.options.map { o in
                    .object([("name", .string(o.name)), ("default", .number(format(o.defaultValue))),
                             ("unit", .string(o.unit)), ("summary", .string(o.summary))])
                })),
                ("fixtures", .array(d.fixtures.map { f in
                    .object([("scenario", .string(f.scenario)), ("findings", .int(f.expectedFindings))])
                })),
            ])
        }).serialized()
    }

    public static func explain(_ d: RuleDescription) -> String {
        var out = ["\(d.id) \(d.name) — \(d.title)", "category \(d.category.rawValue), default severity \(d.defaultSeverity.rawValue)", ""]
        out.append("Why it costs battery:")
        out.append(wrap(d.rationale))
        out.append("")
        out.append("Instead, with CoreBluetooth:")
        out.append(wrap(d.coreBluetooth))
        out.append("")
        out.append("Instead, on Android:")
        out.append(wrap(d.android))
        if !d.options.isEmpty {
            out.append("")
            out.append("Options (config file: rules: {\(d.name): {option: value}}):")
            for o in d.options { out.append("  \(o.name) = \(format(o.defaultValue))\(o.unit.isEmpty ? "" : " " + o.unit)   \(o.summary)") }
        }
        out.append("")
        out.append("Fixtures (btlens-scenario write NAME FILE):")
        for f in d.fixtures {
            out.append("  \(f.scenario): " + (f.expectedFindings == 0 ? "must stay silent" : Plural.of(f.expectedFindings, "finding") + (f.connection.map { ", first on connection #\($0)" } ?? "")))
        }
        return out.joined(separator: "\n")
    }

    static func format(_ v: Double) -> String { DecimalText.format(v, maximumFractionDigits: 6) }

    static func wrap(_ text: String, width: Int = 100) -> String {
        var lines: [String] = []
        var line = "  "
        for word in text.split(separator: " ") {
            if line.count + word.count + 1 > width && line.count > 2 {
                lines.append(line)
                line = "  "
            }
            line += (line.count > 2 ? " " : "") + word
        }
        if line.count > 2 { lines.append(line) }
        return lines.joined(separator: "\n")
    }
}
