// `swift package benchmark` (from Benchmarks/) runs these; see each file for what is measured.
import Benchmark

let benchmarks: @Sendable () -> Void = {
    hostBenchmarks()
    payloadBenchmarks()
    cryptoBenchmarks()
}
