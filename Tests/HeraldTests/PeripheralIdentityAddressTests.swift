import Testing
@testable import BluetoothHost
@testable import Herald

/// A venue beacon's events: it never rotates its address (so its image has no address machinery).
struct IdentityBeaconEvents: HeraldPeripheralDelegate {
    var changes = 0
    var failures: [UInt16] = []
    mutating func heraldPeripheral(didChangeAddress address: BDAddress, unixMillis: Int64) { changes += 1 }
    mutating func heraldPeripheral(commandFailed opcode: HCIOpcode, status: HCIStatus) { failures.append(opcode.rawValue) }
    static var rotatesAddress: Bool { false }
}

@Suite struct PeripheralIdentityAddressTests {
    typealias Beacon = HeraldPeripheralApplication<FixedPayloadSource<32>, IdentityBeaconEvents, 1, 32, 64, StandardServerOffer>

    static func peripheral(irk: InlineArray<16, UInt8>? = nil) throws -> HeraldPeripheral<FixedPayloadSource<32>, StandardServerOffer, 1, 32, 64> {
        try HeraldPeripheral<FixedPayloadSource<32>, StandardServerOffer, 1, 32, 64>(
            source: try FixedPayloadSource<32>(bytes: hex("30033a0003").span),
            advertising: HeraldAdvertisingConfiguration(irk: irk), clock: HeraldClock(unixMillisAtZero: testUnixMillis))
    }

    @Test func theDefaultIsToRotate() {
        #expect(PeripheralEventLog.rotatesAddress)
        #expect(!IdentityBeaconEvents.rotatesAddress)
        #expect(!Beacon.scans && !Beacon.connectsAsCentral, "a peripheral application only advertises and is connected to")
    }

    /// Across two period boundaries, against the simulated controller: one address (the static one
    /// bring-up sets), advertising without a gap, and neither LE Rand nor LE Encrypt ever sent.
    @Test func aBeaconThatDoesNotRotateAdvertisesOneAddressWithoutAGap() throws {
        var peripheral = try Self.peripheral()
        var db = try GATTDatabase<24, 128, 1>(deviceName: Array("beacon".utf8).span)
        try peripheral.install(into: &db)
        var stack = BluetoothStack(configuration: HostConfiguration(randomAddressSeed: [1, 2, 3, 4, 5, 6]), database: db,
                                   app: Beacon(peripheral: peripheral, delegate: IdentityBeaconEvents()))
        var controller = SimulatedAdvertisingController()
        var wire = PeripheralWire()
        var samples: [(UInt64, BDAddress?)] = []
        var now: UInt64 = 0
        var nextSample: UInt64 = 50
        stack.start(now: now, output: &wire)
        while now <= 2 * 360_000 + 20_000 {
            controller.take(&wire, now: now)
            controller.answer(&stack, wire: &wire, now: now)
            if !wire.packets.isEmpty { continue }
            if now >= nextSample {
                samples.append((now, controller.advertising ? controller.randomAddress : nil))
                nextSample += 1_000
            }
            var next = nextSample
            if let d = stack.nextDeadline { next = min(next, d) }
            if let o = controller.outbox.first { next = min(next, o.0) }
            now = max(next, now + 1)
        }
        #expect(!controller.opcodes.contains(0x2018), "no LE Rand")
        #expect(!controller.opcodes.contains(0x2017), "no LE Encrypt")
        #expect(controller.addressChanges.count == 1, "only bring-up's static address")
        #expect(controller.ownAddressType == 0x01, "the static random address: this controller has no public one")
        let advertised = samples.dropFirst().compactMap(\.1)
        #expect(advertised.count == samples.count - 1, "advertising from the first second on, with no gap")
        #expect(Set(advertised).count == 1)
        #expect(advertised.first?.randomSubtype == .staticAddress)
        #expect(stack.app.delegate.changes == 0 && stack.app.delegate.failures.isEmpty)
        // A fixed payload under a fixed address: no period grid, so no timer ever woke the beacon.
        #expect(stack.app.applicationDeadline == nil)
        #expect(!stack.app.peripheral.advertiser.tracksPeriods && stack.app.peripheral.advertiser.period == 0)
    }

    @Test func onlyAChangingPayloadOrARotatingAddressFollowsThePeriodGrid() {
        typealias Fixed = HeraldPeripheral<FixedPayloadSource<32>, StandardServerOffer, 1, 32, 64>
        typealias Counting = HeraldPeripheral<CountingSource, StandardServerOffer, 1, 32, 64>
        #expect(!FixedPayloadSource<32>.changesWithTime && CountingSource.changesWithTime)
        #expect(!Fixed.tracksPeriods(IdentityBeaconEvents.self))
        #expect(Fixed.tracksPeriods(PeripheralEventLog.self), "a rotating address changes at each boundary")
        #expect(Counting.tracksPeriods(IdentityBeaconEvents.self), "so does a time-dependent payload")
    }

    /// A completion carrying the advertiser's address tags (which this build never sends) is
    /// consumed and changes nothing.
    @Test func aStrayAddressCompletionIsIgnored() throws {
        var app = Beacon(peripheral: try Self.peripheral(), delegate: IdentityBeaconEvents())
        var control = StackControl()
        app.stackDidBecomeReady(ControllerInfo(), now: 0, control: &control)
        let queued = control.commands.count
        let random = hex("0102030405060708")
        #expect(app.peripheral.stackCommandDidComplete(
            tag: HeraldCommandTag.random, opcode: HCILERand.opcode, status: .success, returnParameters: random.span,
            control: &control, delegate: &app.delegate))
        #expect(app.peripheral.stackCommandDidComplete(
            tag: HeraldCommandTag.encrypt, opcode: HCILEEncrypt.opcode, status: HCIStatus(rawValue: 0x01),
            returnParameters: [UInt8]().span, control: &control, delegate: &app.delegate))
        #expect(control.commands.count == queued)
        #expect(app.peripheral.advertiser.currentAddress == nil)
        #expect(app.delegate.changes == 0)
    }

    @Test func anIRKForADelegateThatDoesNotRotateIsRefused() async throws {
        await #expect(processExitsWith: .failure) {
            let irk = InlineArray<16, UInt8>(repeating: 7)
            _ = HeraldPeripheralApplication<FixedPayloadSource<32>, IdentityBeaconEvents, 1, 32, 64, StandardServerOffer>(
                peripheral: try! PeripheralIdentityAddressTests.peripheral(irk: irk), delegate: IdentityBeaconEvents())
        }
    }
}

/// A venue beacon that keeps no visitor list: every callback recorded, so none may fire for a write.
struct UnlistenedBeaconEvents: HeraldPeripheralDelegate {
    var events: [String] = []
    mutating func heraldPeripheral(didReceivePayload payload: Span<UInt8>, from link: HeraldLink) { events.append("payload") }
    mutating func heraldPeripheral(didMeasureRSSI rssi: Int16, from link: HeraldLink) { events.append("rssi") }
    mutating func heraldPeripheral(didKeepAwake link: HeraldLink) { events.append("awake") }
    mutating func heraldPeripheral(didRejectSignalWrite fragment: Span<UInt8>, from link: HeraldLink) { events.append("rejected") }
    mutating func heraldPeripheral(didReceiveImmediateSend data: Span<UInt8>, from link: HeraldLink) { events.append("immediate") }
    static var receivesSignals: Bool { false }
}

@Suite struct PeripheralUnreadSignalTests {
    /// Well-formed, malformed and empty writes alike get a Write Response, and nothing is kept.
    @Test func signalWritesAreAcceptedAndDroppedUnread() throws {
        var server = try OneLinkHeraldServer(peripheral: try PeripheralIdentityAddressTests.peripheral(),
                                             delegate: UnlistenedBeaconEvents())
        let signal = server.handles.signal.value
        func write(_ value: [UInt8]) -> [UInt8] { server.send([0x12, UInt8(signal & 0xFF), UInt8(signal >> 8)] + value) }
        let rssiMessage = SignalMessageTests.capturedRSSIWrite
        #expect(write(rssiMessage) == [0x13])
        #expect(write([0x01, 0xFF, 0xFF]) == [0x13], "a message that could never be valid is not refused either")
        #expect(write([]) == [0x13])
        #expect(server.app.delegate.events.isEmpty)
        #expect(server.app.peripheral.pendingSignalBytes(link: 0x40) == 0)
    }

    /// With no signal buffer at all (the firmware beacon's signal capacity 0) the writes are answered
    /// the same: nothing looks at the reassembler.
    @Test func withNoSignalBufferTheWritesAreAnsweredAlike() throws {
        let peripheral = try HeraldPeripheral<FixedPayloadSource<32>, StandardServerOffer, 1, 32, 0>(
            source: try FixedPayloadSource<32>(bytes: hex("30033a0003").span),
            advertising: HeraldAdvertisingConfiguration(), clock: HeraldClock(unixMillisAtZero: testUnixMillis))
        var server = try OneLinkHeraldServer(peripheral: peripheral, delegate: UnlistenedBeaconEvents())
        let signal = server.handles.signal.value
        func write(_ value: [UInt8]) -> [UInt8] { server.send([0x12, UInt8(signal & 0xFF), UInt8(signal >> 8)] + value) }
        #expect(write(SignalMessageTests.capturedRSSIWrite) == [0x13])
        #expect(write([0x01, 0xFF, 0xFF]) == [0x13])
        #expect(write([]) == [0x13])
        #expect(server.app.delegate.events.isEmpty)
    }
}
