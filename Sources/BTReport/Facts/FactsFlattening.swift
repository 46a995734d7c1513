/// Turns the nested objects the other JSON reports build into the flat rows of the facts tables, so a table's
/// columns are those reports' fields under the same names: a nested object's members become `parent_member`
/// columns, an array becomes a `name_count` column (a table of its own where a query needs its items), and a
/// null object keeps its place as a null column.
enum FactsFlattening {
    /// `object`'s members flattened after `prefix` (the identifying columns), leaving out `dropping` keys.
    /// `nullObjects` names members (by their column path, `cost_peripheral`) that are objects when present, with
    /// the columns they then have, so a null one still gives each its column (null): every row of a table has the
    /// same columns.
    static func row(_ prefix: [(String, JSONValue)], _ object: JSONValue, dropping: Set<String> = [],
                    nullObjects: [String: [String]] = [:]) -> JSONValue {
        var out = prefix
        guard case .object(let members) = object else { return .object(out) }
        for (key, value) in members where !dropping.contains(key) {
            flatten(renamed[key] ?? key, value, nullObjects: nullObjects, into: &out)
        }
        return .object(out)
    }

    /// Top-level fields whose names SQL reserves (`end`) or reads as functions, renamed so the same query runs
    /// unquoted on DuckDB and Spark SQL.
    static let renamed = ["start": "start_time", "end": "end_time", "first": "first_time", "last": "last_time"]

    /// The columns of a cost (`EnergyJSON.cost`), for `nullObjects`.
    static let costColumns = ["radio_s", "charge_mc", "low_mc", "high_mc"]

    static func flatten(_ key: String, _ value: JSONValue, nullObjects: [String: [String]],
                        into out: inout [(String, JSONValue)]) {
        switch value {
        case .null:
            if let columns = nullObjects[key] {
                out += columns.map { (key + "_" + $0, .null) }
            } else {
                out.append((key, .null))
            }
        case .object(let members):
            for (k, v) in members { flatten(key + "_" + k, v, nullObjects: nullObjects, into: &out) }
        case .array(let items):
            out.append((key + "_count", .int(items.count)))
        default:
            out.append((key, value))
        }
    }

    /// A member of a JSON object, or null.
    static func member(_ object: JSONValue, _ key: String) -> JSONValue {
        guard case .object(let members) = object else { return .null }
        return members.first { $0.0 == key }?.1 ?? .null
    }

    static func items(_ value: JSONValue) -> [JSONValue] {
        if case .array(let items) = value { return items }
        return []
    }
}
