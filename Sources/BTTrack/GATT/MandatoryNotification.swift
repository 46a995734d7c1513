import BTWire

/// SIG characteristics whose service specification makes Notify or Indicate mandatory: where a capture shows
/// which handle holds one (a Find Information or Read By Type response) but not its declaration, the
/// specification says it can push its value.
public enum MandatoryNotification {
    /// Which the specification makes the characteristic do: notify or indicate.
    public enum Property: String, Sendable { case notify = "Notify", indicate = "Indicate" }

    /// UUID → the mandatory property, and the specification that makes it so.
    public static let characteristics: [UInt16: (property: Property, specification: String)] = [
        0x2A37: (.notify, "Heart Rate Service"),               // Heart Rate Measurement
        0x2A1C: (.indicate, "Health Thermometer Service"),     // Temperature Measurement
        0x2A1E: (.notify, "Health Thermometer Service"),       // Intermediate Temperature
        0x2A35: (.indicate, "Blood Pressure Service"),         // Blood Pressure Measurement
        0x2A36: (.notify, "Blood Pressure Service"),           // Intermediate Cuff Pressure
        0x2A18: (.notify, "Glucose Service"),                  // Glucose Measurement
        0x2A5B: (.notify, "Cycling Speed and Cadence Service"), // CSC Measurement
        0x2A53: (.notify, "Running Speed and Cadence Service"), // RSC Measurement
        0x2A63: (.notify, "Cycling Power Service"),            // Cycling Power Measurement
        0x2A9D: (.indicate, "Weight Scale Service"),           // Weight Measurement
        0x2A9C: (.indicate, "Body Composition Service"),       // Body Composition Measurement
        0x2A5E: (.indicate, "Pulse Oximeter Service"),         // PLX Spot-Check Measurement
        0x2A5F: (.notify, "Pulse Oximeter Service"),           // PLX Continuous Measurement
        0x2A2B: (.notify, "Current Time Service"),             // Current Time
    ]

    public static func requirement(_ uuid: BluetoothUUID) -> (property: Property, specification: String)? {
        uuid.uuid16.flatMap { characteristics[$0] }
    }
}
