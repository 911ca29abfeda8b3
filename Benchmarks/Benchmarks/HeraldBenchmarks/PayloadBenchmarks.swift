// Simple payload benchmarks: the core's SHA-256 (with the hosted and the MCU compression), contact
// identifier derivation, and `herald match`'s core (identifier index + lookups) at 10,000 keys
// against 10,000 payloads.
import Benchmark
@_spi(Benchmarks) import Herald
import HeraldRuntime

typealias CoreSHA256 = SHA256

// No `.instructions`: see `hostMetrics` (its /proc reads allocate inside each sample).
let payloadMetrics: [BenchmarkMetric] = [.wallClock, .throughput, .mallocCountTotal]

/// Deterministic bytes (xorshift), so every run hashes the same inputs.
func pseudoRandomBytes(_ count: Int, seed: UInt64) -> [UInt8] {
    var x = seed | 1
    return (0..<count).map { _ in
        x ^= x << 13; x ^= x >> 7; x ^= x << 17
        return UInt8(truncatingIfNeeded: x)
    }
}

func payloadBenchmarks() {
    for size in [64, 1024] {
        let input = pseudoRandomBytes(size, seed: UInt64(size))
        Benchmark("SHA-256 core, \(size)-octet input",
                  configuration: .init(metrics: payloadMetrics, scalingFactor: .kilo, maxDuration: .seconds(2))) { benchmark in
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations { blackHole(CoreSHA256.hash(input.span)[0]) }
            benchmark.stopMeasurement()
        }
        // The rolled compression embedded builds use (SHA256+CompactCompression.swift), run on the
        // host so its cost relative to the unrolled one and to swift-crypto can be stated.
        Benchmark("SHA-256 core compact (MCU build), \(size)-octet input",
                  configuration: .init(metrics: payloadMetrics, scalingFactor: .kilo, maxDuration: .seconds(2))) { benchmark in
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations { blackHole(CoreSHA256.hashCompact(input.span)[0]) }
            benchmark.stopMeasurement()
        }
    }

    let matchingKey = pseudoRandomBytes(32, seed: 7)
    Benchmark("Contact identifiers from one matching key (241 per iteration)",
              configuration: .init(metrics: payloadMetrics, maxDuration: .seconds(2))) { benchmark in
        var mk = Digest32(repeating: 0)
        for i in 0..<32 { mk[i] = matchingKey[i] }
        benchmark.startMeasurement()
        defer { benchmark.stopMeasurement() }
        for _ in benchmark.scaledIterations {
            var n = 0
            SimpleKeySchedule.forEachContactIdentifier(matchingKey: mk) { _, id in n &+= Int(id[0]) }
            blackHole(n)
        }
    }

    // `herald match`: index every identifier of 10,000 matching keys, then look up 10,000 payloads'
    // identifiers (half from listed keys, half unknown). CSV parsing is not included.
    let keys = (0..<10_000).map { MatchingKeyEntry(day: 324, key: pseudoRandomBytes(32, seed: 1_000 + UInt64($0))) }
    let payloads: [ContactIdentifier] = (0..<10_000).map { i in
        var id = ContactIdentifier(repeating: 0)
        if i % 2 == 0 {
            var mk = Digest32(repeating: 0)
            for j in 0..<32 { mk[j] = keys[(i * 7919) % keys.count].key[j] }
            id = SimpleKeySchedule.contactIdentifier(matchingKey: mk, period: i % 241)!
        } else {
            let r = pseudoRandomBytes(16, seed: 99_000 + UInt64(i))
            for j in 0..<16 { id[j] = r[j] }
        }
        return id
    }
    Benchmark("herald match core: 10,000 keys x 241 identifiers, 10,000 payloads",
              configuration: .init(metrics: [.wallClock, .instructions, .mallocCountTotal, .peakMemoryResident],
                                   warmupIterations: 0, maxDuration: .seconds(20), maxIterations: 3)) { benchmark in
        for _ in benchmark.scaledIterations {
            let index = ContactIdentifierIndex(keys: keys)
            var found = 0
            for id in payloads where index.lookup(id) != nil { found += 1 }
            precondition(found == 5_000 && index.derived == 2_410_000)
            blackHole(found)
        }
    }
}
