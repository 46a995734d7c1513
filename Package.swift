// swift-tools-version:6.0
// btlens: Bluetooth HCI capture analysis. Layers point one way:
// BTWire → BTCapture → BTDecode → (BTTrack → BTEnergy → BTRules →) BTReport → BTLive → btlens.
import PackageDescription

// No unsafe flags, so that other packages can depend on a btlens release. The hot layers keep Swift's run-time
// exclusivity checks off their per-packet state by how it is held: behind pointers (a reader's position, a link's
// working state) or in class properties marked `@exclusivity(unchecked)` (docs/PERFORMANCE.md).

let package = Package(
    name: "btlens",
    products: [
        .executable(name: "btlens", targets: ["btlens"]),
        .executable(name: "btlens-scenario", targets: ["btlens-scenario"]),
        .library(name: "BTLensCore", targets: ["BTWire", "BTCapture", "BTDecode", "BTTrack", "BTEnergy", "BTRules", "BTReport", "BTLive"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // YAML for the audit configuration file.
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        // A heap for the rules that sweep links in time order.
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
    ],
    targets: [
        // System libraries (Debian: libpcap-dev, libbluetooth-dev).
        .systemLibrary(name: "CPcap", pkgConfig: "libpcap", providers: [.apt(["libpcap-dev"])]),
        .systemLibrary(name: "CBluetooth", pkgConfig: "bluez", providers: [.apt(["libbluetooth-dev"])]),
        // Archives and compression (gzip, xz, zstd, zip, tar) of captures as people send them; zlib for the
        // btsnooz summary in Android bug reports (Debian: libarchive-dev, zlib1g-dev).
        .systemLibrary(name: "CArchive", pkgConfig: "libarchive", providers: [.apt(["libarchive-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        // glibc's malloc.h (mallopt), part of libc.
        .systemLibrary(name: "CMalloc"),

        // A stdio stream over already-sniffed bytes plus a descriptor, so libpcap can read pipes.
        .target(name: "CStreamSupport"),
        // Bytes, code tables, addresses, UUIDs. No dependencies.
        .target(name: "BTWire", exclude: ["AssignedNumbers/generate.py"]),
        // Capture readers and writers: one record model for every source.
        .target(name: "BTCapture", dependencies: ["BTWire", "CPcap", "CStreamSupport", "CArchive", "CZlib"]),
        // HCI, ACL/L2CAP reassembly, ATT, SMP, signalling, advertising data.
        .target(name: "BTDecode", dependencies: ["BTWire", "BTCapture"]),
        // Tracking: connections, scans, advertisers, ATT transactions, GATT databases, timelines.
        .target(name: "BTTrack", dependencies: ["BTWire", "BTCapture", "BTDecode", "CMalloc"]),
        // Radio time and charge of what the tracking model shows (ENERGY.md): scans, links and their phases,
        // advertising, host wake-ups, the controller's own counters; profiles in YAML.
        .target(name: "BTEnergy", dependencies: ["BTWire", "BTCapture", "BTDecode", "BTTrack", .product(name: "Yams", package: "Yams")]),
        // Best-practice rules over the tracking model, one file per rule; each finding priced by BTEnergy.
        .target(name: "BTRules", dependencies: ["BTWire", "BTCapture", "BTDecode", "BTTrack", "BTEnergy",
                                               .product(name: "Yams", package: "Yams"),
                                               .product(name: "HeapModule", package: "swift-collections")]),
        // Output shapes (stats JSON, decode lines, timelines, devices, GATT trees, audit reports).
        .target(name: "BTReport", dependencies: ["BTWire", "BTCapture", "BTDecode", "BTTrack", "BTEnergy", "BTRules"],
                exclude: ["Schemas"]),
        // Scripted scenarios that write the project's own captures (samples, fixtures, benchmark), in HCI formats
        // and as an air sniffer would capture them (BTDecode's link-layer CRC and codes).
        .target(name: "BTScenario", dependencies: ["BTWire", "BTCapture", "BTDecode"]),
        // Live capture: the HCI monitor socket, growing files and streams behind RecordSource, and the live
        // pipeline (decode → track → print → periodic audit).
        .target(name: "BTLive", dependencies: ["BTWire", "BTCapture", "BTDecode", "BTTrack", "BTRules", "BTReport",
                                              "CBluetooth"]),

        .executableTarget(
            name: "btlens",
            dependencies: [
                "BTWire", "BTCapture", "BTDecode", "BTTrack", "BTEnergy", "BTRules", "BTReport", "BTLive", "CMalloc",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),
        .executableTarget(
            name: "btlens-scenario",
            dependencies: [
                "BTScenario", "BTCapture",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),

        .target(name: "TestSupport", dependencies: ["BTWire", "BTCapture", "BTDecode", "BTTrack", "BTEnergy", "BTRules", "BTReport", "BTScenario",
                                             "CArchive", "CZlib"],
                path: "Tests/TestSupport"),
        // The fuzz harness (`make fuzz`: libFuzzer when built with -sanitize=fuzzer -D FUZZING, else a replayer of
        // inputs) and the declaration of libFuzzer's driver it calls.
        .systemLibrary(name: "CFuzzerDriver", path: "Tests/Fuzz/CFuzzerDriver"),
        .executableTarget(name: "btlens-fuzz", dependencies: ["BTTrack", "BTRules", "BTReport", "BTScenario", "TestSupport", "CFuzzerDriver", "CZlib"], path: "Tests/Fuzz/Harness"),
        .testTarget(name: "BTWireTests", dependencies: ["BTWire", "TestSupport"]),
        .testTarget(name: "BTCaptureTests", dependencies: ["BTCapture", "BTDecode", "BTScenario", "TestSupport"]),
        .testTarget(name: "BTDecodeTests", dependencies: ["BTDecode", "BTScenario", "TestSupport"]),
        .testTarget(name: "BTTrackTests", dependencies: ["BTTrack", "BTReport", "BTScenario", "TestSupport"]),
        .testTarget(name: "BTRulesTests", dependencies: ["BTRules", "BTTrack", "BTReport", "BTScenario", "TestSupport"]),
        .testTarget(name: "BTEnergyTests", dependencies: ["BTEnergy", "BTTrack", "BTScenario", "TestSupport"]),
        // RealCaptureTruth/ holds the truth files the tests read by path.
        .testTarget(name: "ConformanceTests", dependencies: ["BTCapture", "BTDecode", "BTTrack", "BTEnergy", "BTRules", "BTReport", "BTScenario",
                                                            "TestSupport"], exclude: ["RealCaptureTruth"]),
        // Golden/ holds expected report outputs and OutputDigests/ the digests of every report, read by path.
        .testTarget(name: "CLITests", dependencies: ["BTWire", "TestSupport"], exclude: ["Golden", "OutputDigests", "Scripts"]),
        .testTarget(name: "BTLiveTests", dependencies: ["BTLive", "BTCapture", "BTDecode", "BTTrack", "BTRules",
                                                        "BTScenario", "TestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
