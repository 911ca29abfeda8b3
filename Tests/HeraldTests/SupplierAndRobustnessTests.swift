import Testing
import BluetoothHost
@testable import Herald

@Suite struct SimplePayloadSupplierTests {
    static let zero = [UInt8](repeating: 0, count: 2048)

    @Test func payloadForTimeMatchesVectors() throws {
        let rows = try vectorRows("contactIdentifier.csv")
        var supplier = SimplePayloadSupplier(header: .init(protocolAndVersion: 0x10, countryCode: 826, stateCode: 1), epoch: .reference)
        // 2020-09-27T01:42:00Z = day 3, period 17.
        let t = KeyEpoch.reference.start(day: 3, period: 17) + 5
        #expect(supplier.rotationDue(at: t))
        var sink = ArraySink()
        let wrote = try Self.zero.withUnsafeBufferPointer { b throws(DecodeError) in
            try supplier.writePayload(at: t, secretKey: Span(_unsafeElements: b), to: &sink)
        }
        #expect(wrote)
        let row = try #require(rows.first { $0[0] == "3" && $0[1] == "17" })
        #expect(sink.bytes == hex("10033a0001") + base64(row[6]))
        #expect(supplier.currentDay == 3 && supplier.currentPeriod == 17)
        #expect(!supplier.rotationDue(at: t + 300))
        #expect(supplier.rotationDue(at: KeyEpoch.reference.start(day: 3, period: 18)))
        // Next period, same day: a different identifier from the vectors.
        let next = try #require(rows.first { $0[0] == "3" && $0[1] == "18" })
        let id = Self.zero.withUnsafeBufferPointer { supplier.contactIdentifier(at: KeyEpoch.reference.start(day: 3, period: 18), secretKey: Span(_unsafeElements: $0)) }
        #expect(id.map(bytes) == base64(next[6]))
    }

    @Test func nothingOutsideTheSchedule() throws {
        var supplier = SimplePayloadSupplier(header: .init(protocolAndVersion: 0x10, countryCode: 826, stateCode: 1), epoch: .reference)
        var sink = ArraySink()
        let past = KeyEpoch.reference.start(day: 2001, period: 0)
        let wrote = try Self.zero.withUnsafeBufferPointer { b throws(DecodeError) in
            try supplier.writePayload(at: past, secretKey: Span(_unsafeElements: b), to: &sink)
        }
        #expect(!wrote && sink.bytes.isEmpty)
        let before = Self.zero.withUnsafeBufferPointer { supplier.contactIdentifier(at: 0, secretKey: Span(_unsafeElements: $0)) }
        #expect(before == nil)
    }
}

/// Random and mutated input through every parser: typed errors only, never a trap.
@Suite struct RobustnessTests {
    struct LCG { var s: UInt64; mutating func next() -> UInt8 { s = s &* 6364136223846793005 &+ 1442695040888963407; return UInt8(truncatingIfNeeded: s >> 56) } }

    @Test func parsersSurviveRandomInput() {
        var rng = LCG(s: 0x5eed)
        var reassembler = SignalReassembler<64>()
        var outcomes = [0, 0, 0, 0]
        let seeds: [[UInt8]] = [SignalMessageTests.capturedImmediateSend, SignalMessageTests.capturedRSSIWrite,
                                AdvertTests.heraldAndroid, PayloadTests.phonePayload + hex("4001be")]
        for round in 0..<20_000 {
            var input: [UInt8]
            if round % 2 == 0 {
                input = (0..<Int(rng.next() % 48)).map { _ in rng.next() }
            } else {
                input = seeds[round % seeds.count]
                for _ in 0..<1 + Int(rng.next() % 3) where !input.isEmpty { input[Int(rng.next()) % input.count] = rng.next() }
            }
            input.withUnsafeBufferPointer { b in
                let span = Span(_unsafeElements: b)
                switch reassembler.receive(span) {
                case .keepAwake: outcomes[0] += 1
                case .incomplete: outcomes[1] += 1
                case .complete: outcomes[2] += 1
                case .rejected: outcomes[3] += 1
                }
                _ = try? SignalMessage(parsing: span).kind
                _ = try? SimplePayload(parsing: span).header
                _ = try? VenueBeaconPayload(parsing: span).locationCode
                _ = try? ExtendedDataReader.validate(span)
                _ = try? HeraldAdvertClassification(advertisingData: span).kind
                var it = SharedPayloadIterator(span)
                while let p = try? it.next() { _ = p.count }
            }
        }
        // The fuzz reached every outcome of the reassembler.
        #expect(outcomes.allSatisfy { $0 > 0 }, "\(outcomes)")
    }
}
