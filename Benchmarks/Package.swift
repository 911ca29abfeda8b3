// swift-tools-version: 6.1
// Benchmarks for Herald for nRF in Swift, kept out of the root package so `swift build` and
// `swift test` there stay fast and free of benchmark dependencies.
//   cd Benchmarks && swift package benchmark
import PackageDescription

// SwiftPM names a path dependency after its folder (this clone's name, whatever it is), so the
// product references below use that identity.
let root = Context.packageDirectory.split(separator: "/").dropLast().last.map { String($0).lowercased() } ?? "heraldfornrf"

let package = Package(
    name: "HeraldBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", exact: "1.38.1", traits: ["MallocInterposer"]),
        // Only for the side-by-side SHA-256 figure.
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
    ],
    targets: [
        .executableTarget(
            name: "HeraldBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "BluetoothHost", package: root),
                .product(name: "Herald", package: root),
                .product(name: "HeraldRuntime", package: root),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Benchmarks/HeraldBenchmarks",
            swiftSettings: [.enableExperimentalFeature("Lifetimes"), .enableExperimentalFeature("AddressableParameters")],
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)
