import Foundation
import Yams

/// The phone's radio, as Android's power profile describes it (ENERGY.md §2.1, §3.5): currents in mA while
/// the controller transmits, receives and idles, and the supply voltage. Defaults: Pixel 7 (panther), the
/// newest published device values.
public struct PhoneProfile: Sendable, Equatable {
    public var name = "Pixel 7 (Android power_profile.xml, panther)"
    /// `bluetooth.controller.rx`, `.tx`, `.idle` (mA), `.voltage` (mV in power_profile.xml, V here).
    public var rxMilliamps = 5.8
    public var txMilliamps = 20.0
    public var idleMilliamps = 2.2
    public var volts = 3.85
    /// The application processor while awake for the host stack (Pixel 6: idle 5.78 + active + cluster ≈
    /// 54 mA running; ENERGY.md §3.5) and how long a delivered HCI packet keeps it awake (the HAL's low-power
    /// idle timeout, 1 s in public vendor code). Host wake-ups are reported apart from the radio.
    public var awakeMilliamps = 54.0
    public var holdSeconds = 1.0
    /// Per connection event: the central's listening guard beyond the packets (T_IFS + 16 µs) and a fixed
    /// overhead (unknown: 0, to be calibrated against the controller's counters).
    public var listenGuardSeconds = 166e-6
    public var eventOverheadMicrocoulombs = 0.0
    /// Radio-on time per connection event beyond the packets (ramp-up, turnarounds) that a controller's own
    /// counters include: unknown, 0 by default; fit it to a device with its activity counters (0xFD59).
    public var eventTxOverheadSeconds = 0.0
    public var eventRxOverheadSeconds = 0.0
    /// Share of a scan window that coexistence (Wi-Fi, BR/EDR) may take from LE: the scan term's low bound.
    public var coexistenceShare = 0.1

    public init() {}

    /// The phone names the default profile describes: Pixel 7 and nothing else (a Pixel 7 Pro has other parts).
    public static func describes(_ captureName: String) -> Bool {
        captureName.lowercased() == "pixel 7"
    }
}

/// A peripheral's radio (ENERGY.md §3.5): default an nRF52-class SoC at 0 dBm, 1M, DC/DC on.
public struct PeripheralProfile: Sendable, Equatable {
    public var name = "nRF52840 (0 dBm, DC/DC)"
    public var rxMilliamps = 6.26
    public var txMilliamps = 6.40
    public var volts = 3.0
    /// One empty connection event, all phases (bleemod 34.5 µC × 6.26/26.5 = 8.1; Silicon Labs 7.5–9.6;
    /// Espruino 4.5): 6 µC, range 4–10.
    public var emptyEventMicrocoulombs = 6.0
    public var emptyEventLowMicrocoulombs = 4.0
    public var emptyEventHighMicrocoulombs = 10.0
    /// One connectable advertising event with 15 bytes of data on three channels (OPP: 58 µA at 200 ms).
    public var advertisingEventMicrocoulombs = 11.0
    public var sleepMicroamps = 1.5
    /// Sleep clock accuracy, ppm (window widening).
    public var sleepClockPPM = 20.0

    public init() {}
}

/// Both sides' profiles.
public struct EnergyProfile: Sendable, Equatable {
    public var phone = PhoneProfile()
    public var peripheral = PeripheralProfile()

    public init() {}

    public enum LoadError: Error, CustomStringConvertible {
        case unreadable(String)
        case invalid(String)
        public var description: String {
            switch self {
            case .unreadable(let why), .invalid(let why): why
            }
        }
    }

    /// Keys of `--profile FILE` (YAML): the phone's with Android `power_profile.xml` names (mA, and mV for the
    /// voltage as there), the rest btlens's own.
    public static var phoneKeys: [String: WritableKeyPath<PhoneProfile, Double>] { [
        "bluetooth.controller.rx": \.rxMilliamps, "bluetooth.controller.tx": \.txMilliamps,
        "bluetooth.controller.idle": \.idleMilliamps, "awake_ma": \.awakeMilliamps, "hold_s": \.holdSeconds,
        "event_overhead_uc": \.eventOverheadMicrocoulombs, "listen_guard_us": \.listenGuardSeconds,
        "coexistence_share": \.coexistenceShare, "event_tx_overhead_us": \.eventTxOverheadSeconds,
        "event_rx_overhead_us": \.eventRxOverheadSeconds,
    ] }
    public static var peripheralKeys: [String: WritableKeyPath<PeripheralProfile, Double>] { [
        "rx_ma": \.rxMilliamps, "tx_ma": \.txMilliamps, "voltage": \.volts, "empty_event_uc": \.emptyEventMicrocoulombs,
        "empty_event_low_uc": \.emptyEventLowMicrocoulombs, "empty_event_high_uc": \.emptyEventHighMicrocoulombs,
        "advertising_event_uc": \.advertisingEventMicrocoulombs, "sleep_ua": \.sleepMicroamps,
        "sleep_clock_ppm": \.sleepClockPPM,
    ] }

    /// A profile from YAML:
    /// ```yaml
    /// phone:
    ///   name: Pixel 4
    ///   bluetooth.controller.rx: 9
    ///   bluetooth.controller.tx: 7
    ///   bluetooth.controller.idle: 0.01
    ///   bluetooth.controller.voltage: 3300
    /// peripheral:
    ///   empty_event_uc: 8
    /// ```
    public static func load(yaml text: String) throws -> EnergyProfile {
        let root: Any?
        do { root = try Yams.load(yaml: text) } catch { throw LoadError.invalid("not YAML: \(error)") }
        guard let top = root as? [String: Any] else { throw LoadError.invalid("expected a mapping with phone: and peripheral:") }
        var profile = EnergyProfile()
        for (section, value) in top {
            guard let map = value as? [String: Any] else { throw LoadError.invalid("\(section): expected a mapping") }
            switch section {
            case "phone":
                for (key, v) in map {
                    if key == "name" { profile.phone.name = "\(v)"; continue }
                    let number = try Self.number(v, key: "phone.\(key)")
                    if key == "bluetooth.controller.voltage" { profile.phone.volts = number / 1000; continue }
                    guard let path = phoneKeys[key] else { throw LoadError.invalid("phone.\(key): unknown key") }
                    profile.phone[keyPath: path] = key.hasSuffix("_us") ? number * 1e-6 : number
                }
            case "peripheral":
                for (key, v) in map {
                    if key == "name" { profile.peripheral.name = "\(v)"; continue }
                    guard let path = peripheralKeys[key] else { throw LoadError.invalid("peripheral.\(key): unknown key") }
                    profile.peripheral[keyPath: path] = try Self.number(v, key: "peripheral.\(key)")
                }
            default:
                throw LoadError.invalid("\(section): unknown section (phone, peripheral)")
            }
        }
        return profile
    }

    public static func load(path: String) throws -> EnergyProfile {
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8)
        else { throw LoadError.unreadable("\(path): cannot read the profile") }
        do { return try load(yaml: text) } catch let e as LoadError { throw LoadError.invalid("\(path): \(e)") }
    }

    static func number(_ v: Any, key: String) throws -> Double {
        if let d = v as? Double, d.isFinite, d >= 0 { return d }
        if let i = v as? Int, i >= 0 { return Double(i) }
        throw LoadError.invalid("\(key): expected a number ≥ 0")
    }
}
