import Testing
import BTTrack
import BTReport
import TestSupport

@Suite("timeline and gatt JSON against their schemas")
struct ReportSchemaTests {
    static let scenarios = ["heart-rate-session", "wasteful-central", "peripheral-role", "beacons", "fragmented-acl", "eatt-logger"]

    @Test("timeline --json is valid", arguments: scenarios)
    func timeline(name: String) throws {
        let model = try track(try writeScenario(name))
        let json = TimelineReport.json(file: name, model: model).serialized()
        try SchemaValidation.validate(json, schema: "Sources/BTReport/Schemas/timeline.schema.json")
        #expect(json.contains("\"connections\""))
        if name == "eatt-logger" { #expect(json.contains("\"type\":\"eatt_bearers\"") || json.contains("\"type\": \"eatt_bearers\"")) }
    }

    @Test("gatt --json is valid", arguments: scenarios)
    func gatt(name: String) throws {
        let model = try track(try writeScenario(name))
        let json = GATTReport.json(file: name, model: model).serialized()
        try SchemaValidation.validate(json, schema: "Sources/BTReport/Schemas/gatt.schema.json")
        #expect(json.contains("\"peers\""))
    }

    @Test("a schema violation is reported")
    func violation() {
        #expect(throws: SchemaValidation.Failure.self) {
            try SchemaValidation.validate("{\"file\": 3}", schema: "Sources/BTReport/Schemas/gatt.schema.json")
        }
    }
}
