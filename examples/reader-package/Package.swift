// swift-tools-version:6.0
// An app of its own that depends on a btlens release by version, as any Swift package would: it reads a
// capture with the BTLensCore library and prints its links and the audit's findings.
//
// BTLENS_PACKAGE_URL names where btlens comes from (the tests point it at a local clone tagged with the
// release, `file:///…/btlens`, so they run offline); by default the project's repository.
import PackageDescription

let btlens = Context.environment["BTLENS_PACKAGE_URL"] ?? "https://github.com/YOUR-ORG/btlens.git"

let package = Package(
    name: "capture-summary",
    dependencies: [
        .package(url: btlens, from: "0.1.0"),
    ],
    targets: [
        .executableTarget(name: "capture-summary", dependencies: [.product(name: "BTLensCore", package: "btlens")]),
    ]
)
