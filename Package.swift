// swift-tools-version: 6.1
// Herald for nRF in Swift.
//
// Two kinds of module live here:
// - the core (`BluetoothHost`, `Herald`): no Foundation, no heap, no existentials, no classes.
//   `Tools/embedded-check` compiles exactly these for armv7em-none-none-eabi with -no-allocations.
// - the host runtime (`HeraldRuntime`, `herald`): Foundation, serial ports, files, clocks.
import PackageDescription

/// Settings every core module shares, so the host build sees the same language as the embedded gate.
let coreSettings: [SwiftSetting] = [
    .enableExperimentalFeature("Lifetimes"),
    // `@_addressableSelf` on span accessors of inline buffers (see FixedBytes.span).
    .enableExperimentalFeature("AddressableParameters"),
    // The core is generic over the application and over sizes (value generics), and its entry points
    // (`BluetoothStack.receive`, `H4Framer.feed`, ...) are called from other modules: the runtime, the
    // benchmarks. Default CMO does not export their bodies, so every such call ran the unspecialised
    // generic code (metadata lookups, value witnesses per byte): the ATT round trip took 3.8 µs and
    // H4 decode 6 ms instead of 2.2 µs and 1 ms. Full CMO lets callers specialise, as Embedded Swift
    // always does. Allowed here because the package is only ever used as a root or a path dependency.
    .unsafeFlags(["-cross-module-optimization"], .when(configuration: .release)),
]

let package = Package(
    name: "HeraldForNRF",
    products: [
        .executable(name: "herald", targets: ["herald"]),
        .library(name: "BluetoothHost", targets: ["BluetoothHost"]),
        .library(name: "Herald", targets: ["Herald"]),
        // For Benchmarks/ (herald match's core); not a stable API.
        .library(name: "HeraldRuntime", targets: ["HeraldRuntime"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        // Each layer folder opens with a design README (what it does, its invariants, what to read
        // first); they are documentation, not sources or resources.
        // Core: the Bluetooth LE host, one folder per layer (Bytes, H4, HCI, L2CAP, ATT, GATT, GAP, Host).
        .target(name: "BluetoothHost", exclude: designReadmes("ATT", "Bytes", "GAP", "GATT", "H4", "HCI", "Host", "L2CAP"),
                swiftSettings: coreSettings),
        // Core: the Herald proximity protocol on top of the host.
        .target(name: "Herald", dependencies: ["BluetoothHost"],
                exclude: designReadmes("Advert", "Crypto", "GATT", "Identifiers", "Payload", "Peripheral", "Sensor", "Signal"),
                swiftSettings: coreSettings),

        // Runtime: transports, run loop, loggers, boards (Foundation allowed).
        .systemLibrary(
            name: "CSerialPort",
            pkgConfig: "libserialport",
            providers: [.apt(["libserialport-dev"])]
        ),
        // zlib: CRC-32 and raw inflate for Nordic DFU packages (ZIP files nrfutil writes).
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        .target(
            name: "HeraldRuntime",
            dependencies: ["BluetoothHost", "Herald", "CSerialPort", "CZlib"],
            exclude: designReadmes("Analysis", "Boards", "CLI", "Check", "DFU", "Display", "Keys", "Logging", "Roles",
                                   "RunLoop", "Transports"),
            swiftSettings: coreSettings
        ),
        .executableTarget(
            name: "herald",
            dependencies: [
                "HeraldRuntime",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: coreSettings
        ),

        .testTarget(name: "BluetoothHostTests", dependencies: ["BluetoothHost"], swiftSettings: coreSettings),
        // Fixtures/ holds the Herald test vectors the tests read from disk (TestSupport.swift).
        .testTarget(name: "HeraldTests", dependencies: ["Herald"], exclude: ["Fixtures"], swiftSettings: coreSettings),
        .testTarget(name: "HeraldRuntimeTests", dependencies: ["HeraldRuntime"], swiftSettings: coreSettings),
    ]
)

/// The design README of each layer folder of a target.
func designReadmes(_ folders: String...) -> [String] { folders.map { "\($0)/README.md" } }
