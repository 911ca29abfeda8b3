import Testing
import Foundation
import BluetoothHost
@testable import Herald

/// The reference apps' cross-platform vectors: secret key of 2048 zero bytes, epoch 2020-09-24.
@Suite struct KeyScheduleTests {
    static let secret = [UInt8](repeating: 0, count: 2048)

    func withSecret<R>(_ body: (Span<UInt8>) -> R) -> R {
        Self.secret.withUnsafeBufferPointer { body(Span(_unsafeElements: $0)) }
    }

    @Test func everyMatchingKeyRowFromTheCachedChain() throws {
        let rows = try vectorRows("matchingKey.csv")
        #expect(rows.count == 2001)
        let cache = withSecret { MatchingKeySeedCache<2001>(secretKey: $0) }
        #expect(cache.lastDay == 2000)
        var checked = 0
        for row in rows {
            let day = try #require(Int(row[0]))
            let seed = try #require(cache.seed(day: day))
            let key = try #require(cache.matchingKey(day: day))
            #expect(bytes(seed) == base64(row[1]), "seed day \(day)")
            #expect(bytes(key) == base64(row[2]), "matching key day \(day)")
            checked += 1
        }
        #expect(checked == 2001)
        #expect(cache.seed(day: 2001) == nil)
    }

    @Test func walkingTheChainPerDayAgreesWithTheCache() throws {
        let rows = try vectorRows("matchingKey.csv")
        for day in [0, 1, 999, 1999, 2000] {
            let row = try #require(rows.first { $0[0] == String(day) })
            let key = try #require(withSecret { SimpleKeySchedule.matchingKey(secretKey: $0, day: day) })
            #expect(bytes(key) == base64(row[2]), "day \(day)")
        }
        #expect(withSecret { SimpleKeySchedule.matchingKeySeed(secretKey: $0, day: 2001) } == nil)
        #expect(withSecret { SimpleKeySchedule.matchingKeySeed(secretKey: $0, day: -1) } == nil)
    }

    @Test func partialCacheWindow() throws {
        let rows = try vectorRows("matchingKey.csv")
        let cache = withSecret { MatchingKeySeedCache<5>(secretKey: $0, firstDay: 1998) }
        #expect(cache.lastDay == 2000)
        #expect(cache.seed(day: 1997) == nil)
        for day in 1998...2000 {
            let row = try #require(rows.first { $0[0] == String(day) })
            #expect(bytes(try #require(cache.matchingKey(day: day))) == base64(row[2]))
        }
    }

    @Test func everyContactIdentifierRow() throws {
        let rows = try vectorRows("contactIdentifier.csv")
        #expect(rows.count == 11 * 241)
        let cache = withSecret { MatchingKeySeedCache<11>(secretKey: $0) }
        var perDay: [Int: (seeds: [Digest32], ids: [Int: [UInt8]])] = [:]
        var checked = 0
        for row in rows {
            let day = try #require(Int(row[0])), period = try #require(Int(row[1]))
            let seed = try #require(cache.seed(day: day))
            let matchingKey = try #require(cache.matchingKey(day: day))
            #expect(bytes(seed) == base64(row[2]))
            #expect(bytes(matchingKey) == base64(row[3]))
            if perDay[day] == nil {
                // One walk per day: seeds 240 → 0, and the identifiers the matcher would see.
                var seeds = [Digest32](repeating: Digest32(repeating: 0), count: 241)
                var s = SHA256.hash(matchingKey.span)
                for p in stride(from: 240, through: 0, by: -1) { seeds[p] = s; s = SimpleKeySchedule.hashOfTruncation(s) }
                var ids: [Int: [UInt8]] = [:]
                SimpleKeySchedule.forEachContactIdentifier(matchingKey: matchingKey) { p, id in ids[p] = bytes(id) }
                perDay[day] = (seeds, ids)
            }
            let (seeds, ids) = perDay[day]!
            let contactKey = SimpleKeySchedule.key(fromSeed: seeds[period])
            #expect(bytes(seeds[period]) == base64(row[4]), "contact key seed \(day)/\(period)")
            #expect(bytes(contactKey) == base64(row[5]), "contact key \(day)/\(period)")
            #expect(bytes(SimpleKeySchedule.contactIdentifier(contactKey: contactKey)) == base64(row[6]))
            #expect(ids[period] == base64(row[6]), "streamed identifier \(day)/\(period)")
            checked += 1
        }
        #expect(checked == 2651)
    }

    @Test func singlePeriodDerivationMatchesVectors() throws {
        let rows = try vectorRows("contactIdentifier.csv")
        for (day, period) in [(0, 0), (3, 17), (10, 240)] {
            let row = try #require(rows.first { $0[0] == String(day) && $0[1] == String(period) })
            let mk = try #require(withSecret { SimpleKeySchedule.matchingKey(secretKey: $0, day: day) })
            #expect(bytes(try #require(SimpleKeySchedule.contactKeySeed(matchingKey: mk, period: period))) == base64(row[4]))
            #expect(bytes(try #require(SimpleKeySchedule.contactIdentifier(matchingKey: mk, period: period))) == base64(row[6]))
        }
        let mk = Digest32(repeating: 0)
        #expect(SimpleKeySchedule.contactKey(matchingKey: mk, period: 241) == nil)
        #expect(SimpleKeySchedule.contactKey(matchingKey: mk, period: -1) == nil)
    }
}

@Suite struct KeyEpochTests {
    @Test func dayAndPeriodFromUTCSeconds() {
        let e = KeyEpoch.reference
        #expect(e.day(at: 1_600_905_600) == 0)
        #expect(e.period(at: 1_600_905_600) == 0)
        #expect(e.period(at: 1_600_905_600 + 359) == 0)
        #expect(e.period(at: 1_600_905_600 + 360) == 1)
        #expect(e.period(at: 1_600_905_600 + 86_399) == 239)
        #expect(e.day(at: 1_600_905_600 + 86_400) == 1)
        #expect(e.day(at: 1_600_905_599) == nil)
        // Vector README: day 2000 of the reference epoch is 2026-03-17.
        #expect(e.day(at: 1_773_705_600) == 2000) // 2026-03-17T00:00:00Z
        #expect(KeyEpoch.standard.day(at: 1_767_225_600 + 3 * 86_400 + 1000) == 3)
    }

    @Test func horizon() {
        let e = KeyEpoch.standard
        #expect(e.horizon(at: e.unixSeconds - 1) == .beforeEpoch)
        #expect(e.horizon(at: e.start(day: 10, period: 5)) == .ok(day: 10))
        #expect(e.horizon(at: e.start(day: 1970, period: 0)) == .ok(day: 1970))
        #expect(e.horizon(at: e.start(day: 1971, period: 0)) == .nearHorizon(day: 1971, daysLeft: 29))
        #expect(e.horizon(at: e.start(day: 2000, period: 239)) == .nearHorizon(day: 2000, daysLeft: 0))
        #expect(e.horizon(at: e.start(day: 2001, period: 0)) == .pastHorizon(day: 2001))
        #expect(!KeyEpoch.reference.horizon(at: 1_779_321_600).isUsable) // 2026-05-21, past the reference horizon
    }

    /// A shortened test period: 240 periods still make a day of the key schedule, so each period
    /// still has a contact identifier of its own (and the same one as the specification's grid gives
    /// its day and period numbers); only their length changes.
    @Test func aShortenedPeriodKeepsTwoHundredFortyPeriodsADay() throws {
        let e = try #require(KeyEpoch(unixSeconds: 1_000_000, secondsPerPeriod: 20))
        #expect(e.secondsPerPeriod == 20 && e.secondsPerDay == 4_800)
        #expect(e.period(at: 1_000_000 + 19) == 0 && e.period(at: 1_000_000 + 20) == 1)
        #expect(e.period(at: 1_000_000 + 4_799) == 239)
        #expect(e.day(at: 1_000_000 + 4_800) == 1 && e.period(at: 1_000_000 + 4_800) == 0)
        #expect(e.start(day: 2, period: 3) == 1_000_000 + 2 * 4_800 + 60)
        #expect(e.nextRotation(after: 1_000_000 + 25) == 1_000_000 + 40)
        // 2,000 days of 240 × 20 s: the horizon comes after 111 days, not 5.5 years.
        #expect(e.horizon(at: e.start(day: 2001, period: 0)) == .pastHorizon(day: 2001))
        #expect(KeyEpoch(unixSeconds: 1_000_000).secondsPerPeriod == KeyEpoch.specificationSecondsPerPeriod)
        #expect(KeyEpoch(unixSeconds: 0, secondsPerPeriod: 9) == nil)
        #expect(KeyEpoch(unixSeconds: 0, secondsPerPeriod: 361) == nil)
        #expect(KeyEpoch(unixSeconds: 0, secondsPerPeriod: 360) == KeyEpoch(unixSeconds: 0))
    }

    @Test func rotationInstant() {
        let e = KeyEpoch.standard
        let t = e.start(day: 2, period: 7) + 100
        #expect(e.nextRotation(after: t) == e.start(day: 2, period: 8))
        #expect(e.nextRotation(after: e.start(day: 2, period: 239) + 359) == e.start(day: 3, period: 0))
    }
}
