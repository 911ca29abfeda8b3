// Side by side: swift-crypto's SHA-256 over the same inputs as the core's, so the report can state
// the core's throughput as a ratio.
import Benchmark
import Crypto

func cryptoBenchmarks() {
    for size in [64, 1024] {
        let input = pseudoRandomBytes(size, seed: UInt64(size))
        Benchmark("SHA-256 swift-crypto, \(size)-octet input",
                  configuration: .init(metrics: payloadMetrics, scalingFactor: .kilo, maxDuration: .seconds(2))) { benchmark in
            benchmark.startMeasurement()
            defer { benchmark.stopMeasurement() }
            for _ in benchmark.scaledIterations {
                var digest: UInt8 = 0
                Crypto.SHA256.hash(data: input).withUnsafeBytes { digest = $0[0] }
                blackHole(digest)
            }
        }
    }
}
