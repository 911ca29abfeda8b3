import Testing
@testable import BluetoothHost
@testable import Herald

/// What the simulated controller writes back and when.
struct PeripheralWire: H4Output {
    var packets: [[UInt8]] = []
    mutating func send(h4 packet: Span<UInt8>) { packets.append((0..<packet.count).map { packet[$0] }) }
}

/// A controller simulated at the level the rotation depends on: bring-up answers, LE Rand, LE Encrypt
/// (real AES-128), the random address and advertising state, and the rule that LE Set Random Address
/// is refused with Command Disallowed while advertising (Core 5.4 Vol 4 Part E 7.8.4).
struct SimulatedAdvertisingController {
    var randomAddress = BDAddress.zero
    var advertising = false
    var ownAddressType: UInt8 = 0xFF
    var disallowed = 0
    var randomCounter: UInt64 = 0x1234_5678_9ABC_DEF0
    /// LE Rand calls (0, 1, …) answered with Unspecified Error, or all of them.
    var failRandomCalls: Set<Int> = []
    var failAllRandom = false
    /// Like Bumble's virtual controller: LE Encrypt is never answered at all.
    var ignoresEncrypt = false
    /// Like a controller built for one connection: no connectable advertising while connected
    /// (Zephyr's `ll_adv_enable` answers 0x07 Memory Capacity Exceeded when it has no connection
    /// context left).
    var maximumConnections = 8
    /// Like Zephyr 2.5 (and the Core before 5.0): LE Set Advertising Enable in the state already
    /// held is refused with 0x0C Command Disallowed (Zephyr 3.0 accepts it).
    var strictEnable = false
    var connections = 0
    var randomCalls = 0
    /// Milliseconds before LE Encrypt completes (a slow controller or a busy link).
    var encryptLatency: UInt64 = 2
    /// Replies waiting for their time: (due, H4 packet).
    var outbox: [(UInt64, [UInt8])] = []
    var opcodes: [UInt16] = []
    /// The last LE Set Advertising Data / Scan Response Data (significant octets only).
    var advertisingData: [UInt8] = []
    var scanResponseData: [UInt8] = []
    /// When each LE Set Random Address was accepted.
    var addressChanges: [UInt64] = []

    static func complete(_ opcode: UInt16, _ params: [UInt8]) -> [UInt8] {
        [0x04, 0x0E, UInt8(3 + params.count), 0x01, UInt8(opcode & 0xFF), UInt8(opcode >> 8)] + params
    }

    /// LE Encrypt as the controller computes it: HCI order in and out, FIPS-197 order inside.
    static func leEncrypt(key: [UInt8], plaintext: [UInt8]) -> [UInt8] {
        let aes = AES128(key: inline16(key.reversed()))
        return bytes(aes.encrypt(inline16(plaintext.reversed()))).reversed()
    }

    mutating func receive(_ packet: [UInt8], now: UInt64) {
        guard packet.first == 0x01, packet.count >= 4 else { return }
        let opcode = UInt16(packet[1]) | UInt16(packet[2]) << 8
        let p = Array(packet[4...])
        opcodes.append(opcode)
        var due = now + 1
        let reply: [UInt8]
        switch opcode {
        case 0x2008: advertisingData = Array(p[1...].prefix(Int(p[0]))); reply = [0]
        case 0x2009: scanResponseData = Array(p[1...].prefix(Int(p[0]))); reply = [0]
        case 0x0C03, 0x0C01, 0x2001, 0x2024, 0x200B, 0x200C: reply = [0]
        case 0x1001: reply = [0, 0x0D, 0, 0, 0x0D, 0x59, 0x00, 0, 0]
        case 0x1002:
            var bitmap = [UInt8](repeating: 0, count: 64)
            bitmap[15] |= 0x02
            reply = [0] + bitmap
        case 0x1003: reply = [0] + [UInt8](repeating: 0, count: 8)
        case 0x2002: reply = [0, 27, 0, 4]
        case 0x2003: reply = [0, 0x01, 0, 0, 0, 0, 0, 0, 0]
        case 0x1009: reply = [0, 0, 0, 0, 0, 0, 0]
        case 0x2005:  // LE Set Random Address
            if advertising { disallowed += 1; reply = [0x0C] } else {
                randomAddress = BDAddress(bytes: InlineArray<6, UInt8>(repeating: 0))
                for i in 0..<6 { randomAddress.bytes[i] = p[i] }
                addressChanges.append(now)
                reply = [0]
            }
        case 0x2006: ownAddressType = p[5]; reply = [0]
        case 0x200A:
            if strictEnable && (p[0] == 1) == advertising {
                reply = [0x0C]
            } else if p[0] == 1 && connections >= maximumConnections {
                reply = [0x07]
            } else {
                advertising = p[0] == 1
                reply = [0]
            }
        case 0x2018 where failAllRandom || failRandomCalls.contains(randomCalls):
            randomCalls += 1
            reply = [0x1F]
        case 0x2018:  // LE Rand
            randomCalls += 1
            randomCounter = randomCounter &* 6364136223846793005 &+ 1442695040888963407
            reply = [0] + (0..<8).map { UInt8(truncatingIfNeeded: randomCounter >> (8 * UInt64($0))) }
        case 0x2017 where ignoresEncrypt:
            return
        case 0x2017:  // LE Encrypt
            due = now + encryptLatency
            reply = [0] + Self.leEncrypt(key: Array(p[0..<16]), plaintext: Array(p[16..<32]))
        default: reply = [0x01]
        }
        outbox.append((due, Self.complete(opcode, reply)))
    }

    /// Receives what the host wrote.
    mutating func take(_ wire: inout PeripheralWire, now: UInt64) {
        for packet in wire.packets { receive(packet, now: now) }
        wire.packets.removeAll()
    }

    /// Delivers the replies due by `now` to `stack`, then runs its timers if one is due.
    mutating func answer<App: LEApplication, let L: Int, let A: Int, let V: Int>(
        _ stack: inout BluetoothStack<App, L, A, V>, wire: inout PeripheralWire, now: UInt64
    ) {
        outbox.sort { $0.0 < $1.0 }
        while let first = outbox.first, first.0 <= now {
            outbox.removeFirst()
            stack.receive(first.1.span, now: now, output: &wire)
        }
        if let d = stack.nextDeadline, d <= now { stack.tick(now: now, output: &wire) }
    }

    /// A central connects to our advertisement: the controller stops advertising (Core 5.4 Vol 6
    /// Part B 4.4.2.3) and reports LE Connection Complete, role peripheral.
    mutating func acceptConnection(handle: UInt16, now: UInt64) {
        advertising = false
        connections += 1
        let params: [UInt8] = [0x01, 0x00, UInt8(handle & 0xFF), UInt8(handle >> 8), 0x01, 0x01,
                               0x11, 0x22, 0x33, 0x44, 0x55, 0xC6, 24, 0, 0, 0, 72, 0, 0]
        outbox.append((now + 1, [0x04, 0x3E, UInt8(params.count)] + params))
    }

    /// The central goes away: Disconnection Complete, reason 0x13.
    mutating func dropConnection(handle: UInt16, now: UInt64) {
        connections -= 1
        outbox.append((now + 1, [0x04, 0x05, 0x04, 0x00, UInt8(handle & 0xFF), UInt8(handle >> 8), 0x13]))
    }
}

@Suite struct PeripheralRotationTests {
    typealias App = HeraldPeripheralApplication<FixedPayloadSource<32>, PeripheralEventLog, 2, 32, 64, StandardServerOffer>
    static let irk = inline16(hex("9b7d390aa6101034 05adc857a33402ec"))

    struct Advert { var time: UInt64; var address: BDAddress }

    /// Runs a stack with the peripheral for `duration` ms of simulated time, sampling the radio every
    /// 100 ms: each sample taken while advertising stands for an advertisement and its address.
    func simulate(encryptLatency: UInt64 = 2, lead: Int64 = 5_000, failRandom: Set<Int> = [], failAllRandom: Bool = false,
                  ignoresEncrypt: Bool = false, maximumConnections: Int = 8, strictEnable: Bool = false, duration: UInt64,
                  connectAt: UInt64? = nil, disconnectAt: UInt64? = nil, epoch: KeyEpoch = .standard)
        throws -> (adverts: [Advert], controller: SimulatedAdvertisingController, app: App, periodOf: (UInt64) -> Int64)
    {
        try simulate(PeripheralEventLog(), encryptLatency: encryptLatency, lead: lead, failRandom: failRandom,
                     failAllRandom: failAllRandom, ignoresEncrypt: ignoresEncrypt, maximumConnections: maximumConnections,
                     strictEnable: strictEnable, duration: duration, connectAt: connectAt, disconnectAt: disconnectAt, epoch: epoch)
    }

    /// `simulate` with a delegate of another type (its static choices are the image's).
    func simulate<L: HeraldPeripheralDelegate>(
        _ log: L, encryptLatency: UInt64 = 2, lead: Int64 = 5_000, failRandom: Set<Int> = [], failAllRandom: Bool = false,
        ignoresEncrypt: Bool = false, maximumConnections: Int = 8, strictEnable: Bool = false, duration: UInt64,
        connectAt: UInt64? = nil, disconnectAt: UInt64? = nil, epoch: KeyEpoch = .standard
    ) throws -> (adverts: [Advert], controller: SimulatedAdvertisingController,
                 app: HeraldPeripheralApplication<FixedPayloadSource<32>, L, 2, 32, 64, StandardServerOffer>,
                 periodOf: (UInt64) -> Int64) {
        let clock = HeraldClock(unixMillisAtZero: testUnixMillis)
        var peripheral = try HeraldPeripheral<FixedPayloadSource<32>, StandardServerOffer, 2, 32, 64>(
            source: try FixedPayloadSource<32>(bytes: hex("10033a0001").span),
            advertising: HeraldAdvertisingConfiguration(irk: Self.irk, epoch: epoch, preparationLead: lead), clock: clock)
        var db = try GATTDatabase<32, 256, 2>(deviceName: Array("herald".utf8).span)
        try peripheral.install(into: &db)
        let advertiser = peripheral.advertiser
        var stack = BluetoothStack(configuration: HostConfiguration(randomAddressSeed: [1, 2, 3, 4, 5, 6]), database: db,
                                   app: HeraldPeripheralApplication<FixedPayloadSource<32>, L, 2, 32, 64, StandardServerOffer>(
                                       peripheral: peripheral, delegate: log))
        var controller = SimulatedAdvertisingController(encryptLatency: encryptLatency)
        controller.failRandomCalls = failRandom
        controller.failAllRandom = failAllRandom
        controller.ignoresEncrypt = ignoresEncrypt
        controller.maximumConnections = maximumConnections
        controller.strictEnable = strictEnable
        var disconnectAt = disconnectAt
        var wire = PeripheralWire()
        var adverts: [Advert] = []
        var now: UInt64 = 0
        // Samples fall between boundaries (which are whole seconds): x50 ms.
        var nextSample: UInt64 = 50
        var connectAt = connectAt
        stack.start(now: now, output: &wire)
        while now <= duration {
            controller.take(&wire, now: now)
            if let c = connectAt, now >= c { controller.acceptConnection(handle: 0x0040, now: now); connectAt = nil }
            if let d = disconnectAt, now >= d { controller.dropConnection(handle: 0x0040, now: now); disconnectAt = nil }
            controller.answer(&stack, wire: &wire, now: now)
            // Commands just sent reach the controller before time moves on.
            if !wire.packets.isEmpty { continue }
            if now >= nextSample {
                if controller.advertising { adverts.append(Advert(time: now, address: controller.randomAddress)) }
                nextSample += 100
            }
            var next = nextSample
            if let d = stack.nextDeadline { next = min(next, d) }
            if let o = controller.outbox.first { next = min(next, o.0) }
            if let c = connectAt { next = min(next, c) }
            if let d = disconnectAt { next = min(next, d) }
            now = max(next, now + 1)
        }
        return (adverts, controller, stack.app, { advertiser.period(at: $0) })
    }

    /// ah(IRK, prand) by the spec's formula, computed here independently of the peripheral.
    func resolves(_ address: BDAddress) -> Bool {
        let prand = ResolvablePrivateAddress.prand(of: address)
        var plaintext = [UInt8](repeating: 0, count: 16)
        plaintext[0] = UInt8(prand & 0xFF); plaintext[1] = UInt8(prand >> 8 & 0xFF); plaintext[2] = UInt8(prand >> 16)
        let e = SimulatedAdvertisingController.leEncrypt(key: bytes(Self.irk), plaintext: plaintext)
        return address.bytes[0] == e[0] && address.bytes[1] == e[1] && address.bytes[2] == e[2]
    }

    @Test func periodGridAndClockMapping() throws {
        let epoch = KeyEpoch.standard
        let zero = (epoch.unixSeconds - 1) * 1_000 + 500  // stack time 0 = 0.5 s before the epoch
        let a = try HeraldAdvertiser(configuration: HeraldAdvertisingConfiguration(intervalMilliseconds: 200),
                                     clock: HeraldClock(unixMillisAtZero: zero))
        #expect(a.configuration.intervalMin == 320 && a.configuration.intervalMax == 320)  // 0.625 ms units
        #expect(a.period(at: 0) == -1, "before the epoch periods count down, not towards 0")
        #expect(a.period(at: 499) == -1 && a.period(at: 500) == 0)
        #expect(a.period(at: 500 + 359_999) == 0 && a.period(at: 500 + 360_000) == 1)
        #expect(a.start(ofPeriod: 1) == 360_500)
        #expect(a.start(ofPeriod: -5) == 0, "instants before stack time 0 clamp to it")
        #expect(a.unixSeconds(startOf: 240) == epoch.unixSeconds + 86_400)
        #expect(HeraldClock(unixMillisAtZero: -1_500).unixSeconds(now: 0) == -2)
        // Extreme intervals clamp to the 20 ms ... 10.24 s range legacy advertising allows.
        #expect(HeraldAdvertisingConfiguration(intervalMilliseconds: 1).intervalMin == 0x20)
        #expect(HeraldAdvertisingConfiguration(intervalMilliseconds: 100_000).intervalMax == 0x4000)
    }

    @Test func simulatedControllerComputesTheSpecificationsAhSample() {
        // Core 5.4 Vol 3 Part H D.7: IRK ec0234a3…7d9b, prand 708194 → ah 0dfbaa (HCI order here).
        let e = SimulatedAdvertisingController.leEncrypt(key: hex("9b7d390aa6101034 05adc857a33402ec"),
                                                         plaintext: hex("948170") + [UInt8](repeating: 0, count: 13))
        #expect(Array(e.prefix(3)) == hex("aafb0d"))
    }

    @Test func noAdvertBeforeARotationSharesAnAddressWithOneAfterIt() throws {
        // Starts 10 s before a boundary; runs across three boundaries.
        let run = try simulate(duration: 10_000 + 2 * 360_000 + 20_000)
        #expect(run.controller.disallowed == 0, "LE Set Random Address was never sent while advertising")
        #expect(run.controller.ownAddressType == 0x01, "advertising uses the random address")
        var byPeriod: [Int64: Set<BDAddress>] = [:]
        for a in run.adverts { byPeriod[run.periodOf(a.time), default: []].insert(a.address) }
        #expect(byPeriod.count == 4)
        for (period, addresses) in byPeriod {
            #expect(addresses.count == 1, "period \(period) advertised \(addresses.count) addresses")
        }
        let periods = byPeriod.keys.sorted()
        for (i, p) in periods.enumerated() {
            for q in periods[(i + 1)...] { #expect(byPeriod[p]!.isDisjoint(with: byPeriod[q]!), "periods \(p) and \(q)") }
        }
        for a in Set(run.adverts.map(\.address)) {
            #expect(a.randomSubtype == .resolvablePrivate)
            #expect(resolves(a), "every advertised address resolves with our IRK")
        }
        // Advertising starts with the first resolvable address (never with the static identity address)
        // and continues without a gap at each boundary, the next address being prepared in advance.
        #expect(run.adverts.first.map { $0.time <= 150 } == true)
        // Bring-up sets the static address first; every later change lands on a period boundary
        // (10 s, 370 s, 730 s) within the few milliseconds the commands take.
        let rotations = Array(run.controller.addressChanges.dropFirst(2))
        #expect(rotations.count == 3)
        for (t, boundary) in zip(rotations, [10_000, 370_000, 730_000] as [UInt64]) {
            #expect(t >= boundary && t < boundary + 10, "address changed at \(t)")
        }
        let times = run.adverts.map(\.time)
        #expect(zip(times, times.dropFirst()).allSatisfy { $1 - $0 == 100 })
        #expect(run.app.delegate.events.filter { $0.hasPrefix("address") }.count == 4)
        #expect(!run.app.delegate.events.contains { $0.hasPrefix("failed") })
    }

    /// A test period of 20 s (`herald wearable --payload-period 20`): the address rotates on that grid,
    /// each change on a boundary, each period's address its own.
    @Test func aShortenedPeriodRotatesTheAddressOnItsOwnGrid() throws {
        let epoch = try #require(KeyEpoch(unixSeconds: KeyEpoch.standard.unixSeconds, secondsPerPeriod: 20))
        // Starts 10 s before a boundary (360 s boundaries are 20 s ones too); runs across four.
        let run = try simulate(duration: 10_000 + 3 * 20_000 + 5_000, epoch: epoch)
        let rotations = Array(run.controller.addressChanges.dropFirst(2))
        #expect(rotations.count == 4)
        for (t, boundary) in zip(rotations, [10_000, 30_000, 50_000, 70_000] as [UInt64]) {
            #expect(t >= boundary && t < boundary + 10, "address changed at \(t)")
        }
        var byPeriod: [Int64: Set<BDAddress>] = [:]
        for a in run.adverts { byPeriod[run.periodOf(a.time), default: []].insert(a.address) }
        #expect(byPeriod.count == 5 && byPeriod.values.allSatisfy { $0.count == 1 })
        #expect(Set(byPeriod.values.map { $0.first! }).count == 5, "each period has an address of its own")
        #expect(run.controller.disallowed == 0)
    }

    @Test func aLateAddressKeepsAdvertisingOffInsteadOfReusingTheOldOne() throws {
        // The preparation for the 10 s boundary fails three times (at 5, 6 and 8 s; back-off 1, 2,
        // 4 s), so the next attempt is at 12 s, after the boundary.
        let run = try simulate(failRandom: [1, 2, 3], duration: 10_000 + 360_000 + 20_000)
        #expect(run.controller.disallowed == 0)
        var byPeriod: [Int64: Set<BDAddress>] = [:]
        for a in run.adverts { byPeriod[run.periodOf(a.time), default: []].insert(a.address) }
        #expect(byPeriod.count == 3)
        #expect(byPeriod.values.allSatisfy { $0.count == 1 })
        let all = byPeriod.values.flatMap { $0 }
        #expect(Set(all).count == all.count, "no address is used in two periods")
        #expect(run.adverts.contains { $0.time == 9_950 })
        #expect(!run.adverts.contains { $0.time >= 10_000 && $0.time < 12_000 }, "silent until the address exists")
        #expect(run.adverts.contains { $0.time == 12_050 })
        #expect(run.app.delegate.events.filter { $0.hasPrefix("failed 8216 31") }.count == 3)
        // The next boundary is prepared normally again: no gap at 370 s.
        #expect(run.adverts.contains { $0.time == 369_950 } && run.adverts.contains { $0.time == 370_050 })
    }

    @Test func aControllerThatCannotMakeAddressesAdvertisesItsIdentityAndKeepsTrying() throws {
        let run = try simulate(failAllRandom: true, duration: 20_000)
        #expect(!run.adverts.isEmpty)
        #expect(Set(run.adverts.map(\.address)).count == 1)
        #expect(run.adverts.allSatisfy { $0.address.randomSubtype == .staticAddress })
        // Attempts at ~0, 1, 3, 7 and 15 s: a doubling back-off, not a busy loop.
        #expect(run.controller.randomCalls == 5)
    }

    @Test func withoutLEEncryptTheHashIsComputedInSoftware() throws {
        let run = try simulate(ignoresEncrypt: true, duration: 10_000 + 360_000 + 20_000)
        #expect(run.controller.disallowed == 0)
        var byPeriod: [Int64: Set<BDAddress>] = [:]
        for a in run.adverts { byPeriod[run.periodOf(a.time), default: []].insert(a.address) }
        #expect(byPeriod.count == 3 && byPeriod.values.allSatisfy { $0.count == 1 })
        for a in Set(run.adverts.map(\.address)) {
            #expect(a.randomSubtype == .resolvablePrivate)
            #expect(resolves(a))
        }
        // The first address is hashed in software at once (nothing waits under the identity
        // address); the next one's LE Encrypt goes unanswered once (5 s watchdog), then software
        // only: no further stalls, and the boundaries at 10 s and 370 s change address without a gap.
        #expect(run.controller.opcodes.filter { $0 == 0x2017 }.count == 1)
        #expect(run.adverts.first.map { $0.time < 200 } == true)
        #expect(run.adverts.contains { $0.time == 9_950 } && run.adverts.contains { $0.time == 10_050 })
        #expect(run.adverts.contains { $0.time == 369_950 } && run.adverts.contains { $0.time == 370_050 })
        #expect(run.app.delegate.events.filter { $0 == "failed 8215 1" }.count == 1)
    }

    @Test func aControllerAtItsConnectionLimitAdvertisesAgainWhenTheLinkGoes() throws {
        let run = try simulate(maximumConnections: 1, duration: 5_000, connectAt: 2_000, disconnectAt: 3_000)
        #expect(run.adverts.contains { $0.time == 1_950 })
        #expect(!run.adverts.contains { $0.time > 2_000 && $0.time < 3_000 }, "refused while connected")
        #expect(run.adverts.contains { $0.time == 3_050 })
        #expect(run.app.delegate.events.contains("failed 8202 7"))
        #expect(run.app.delegate.links == ["up 64", "down 64 19"])
    }

    @Test func theAdvertisementCarriesTheServiceAndNoPseudoDeviceAddress() throws {
        let run = try simulate(duration: 1_000)
        let c = run.controller
        let facts = try c.advertisingData.withUnsafeBufferPointer { a throws(DecodeError) in
            try c.scanResponseData.withUnsafeBufferPointer { r throws(DecodeError) in
                try HeraldAdvertClassification(advertisingData: Span(_unsafeElements: a), scanResponse: Span(_unsafeElements: r))
            }
        }
        #expect(facts.hasSpecificationServiceUUID && facts.hasRegisteredServiceUUID)
        #expect(facts.pseudoDeviceAddress == nil, "the rotating address replaces it")
        #expect(facts.kind == .herald)
        // Flags, then the 128-bit UUID: what Herald scanners filter on.
        #expect(c.advertisingData == hex("020106 1107 9bfd5bd672451e80d3424647af328142"))
    }

    @Test func advertisingResumesAfterACentralConnects() throws {
        let run = try simulate(duration: 5_000, connectAt: 2_000)
        #expect(run.app.peripheral.link(handle: 0x0040) != nil)
        // The controller stopped at 2000 ms; the peripheral enabled it again in the same turn.
        #expect(run.adverts.contains { $0.time == 2_050 })
        #expect(Set(run.adverts.map(\.address)).count == 1)
        #expect(run.controller.advertising)
    }
}
