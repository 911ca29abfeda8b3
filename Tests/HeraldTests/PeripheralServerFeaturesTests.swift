import Testing
@testable import BluetoothHost
@testable import Herald

/// A venue beacon's events: it offers only the mandatory server procedures.
struct MandatoryBeaconEvents: HeraldPeripheralDelegate {
    var served = 0
    mutating func heraldPeripheral(didServePayload payload: Span<UInt8>, to link: HeraldLink) { served += 1 }
    static var serverFeatures: GATTServerFeatures { .mandatory }
}

@Suite struct PeripheralServerFeaturesTests {
    typealias Beacon = HeraldPeripheralApplication<FixedPayloadSource<64>, MandatoryBeaconEvents, 1, 64, 32>

    @Test func theApplicationOffersWhatItsDelegateChose() {
        #expect(Beacon.serverFeatures == .mandatory)
        #expect(HeraldPeripheralApplication<FixedPayloadSource<64>, PeripheralEventLog, 1, 64, 32>.serverFeatures == .all)
    }

    @Test func aBeaconWithoutTheOptionalProceduresStillServesItsPayload() throws {
        let source = try FixedPayloadSource<64>.venueBeacon(
            header: PayloadHeader(protocolAndVersion: 0x30, countryCode: 826, stateCode: 3), locationCode: 0x0102_0304)
        var peripheral = try HeraldPeripheral<FixedPayloadSource<64>, 1, 64, 32>(
            source: source, advertising: HeraldAdvertisingConfiguration(), clock: HeraldClock(unixMillisAtZero: 0))
        var db = try GATTDatabase<24, 128, 1>(deviceName: Array("beacon".utf8).span, features: Beacon.serverFeatures)
        try peripheral.install(into: &db)
        let payload = try #require(peripheral.handles).payload.value
        #expect(db.databaseHashHandle == 0)
        var control = StackControl()
        var app = Beacon(peripheral: peripheral, delegate: MandatoryBeaconEvents())
        app.stackDidBecomeReady(ControllerInfo(), now: 0, control: &control)
        app.stackDidConnect(ConnectionSummary(handle: 0x40, role: .peripheral,
                                              peer: DeviceAddress(type: .randomDevice, address: BDAddress(bytes: [1, 2, 3, 4, 5, 6])),
                                              timing: ConnectionTiming(interval: 24, latency: 0, supervisionTimeout: 72)),
                            now: 0, control: &control)
        var bearer = ATTStandardBearer()
        func send(_ pdu: [UInt8]) -> [UInt8] {
            var out = ArraySink()
            _ = ATTServer().handle(pdu: pdu.span, bearer: &bearer, connection: 0, now: 0, database: &db,
                                   delegate: &app, response: &out)
            return out.bytes
        }
        let low = UInt8(payload & 0xFF), high = UInt8(payload >> 8)
        #expect(send([0x0A, low, high]) == [0x0B] + hex("30 033a 0003 01020304"))
        #expect(app.delegate.served == 1)
        // Read Multiple of the payload twice: Request Not Supported (0x06) on handle 0x0000.
        #expect(send([0x0E, low, high, low, high]) == [0x01, 0x0E, 0x00, 0x00, 0x06])
    }
}

/// A wearable's sensor events: everything but Read Multiple.
struct NoReadMultipleSensorEvents: SensorDelegate {
    static var serverFeatures: GATTServerFeatures { GATTServerFeatures(readMultiple: false) }
}

@Suite struct SensorServerFeaturesTests {
    @Test func theSensorOffersWhatItsDelegateChose() {
        typealias Sensor<D: SensorDelegate> = HeraldSensor<SimplePayloadDataSupplier<InlineSecretKey>, D, 4, 2, NoSensorPeripheral>
        #expect(Sensor<NoReadMultipleSensorEvents>.serverFeatures == GATTServerFeatures(readMultiple: false))
        #expect(Sensor<NoReadMultipleSensorEvents>.serverFeatures.queuedWrites)
        #expect(Sensor<NoReadMultipleSensorEvents>.serverFeatures.databaseHash)
        #expect(Sensor<RecordingDelegate>.serverFeatures == .all)
    }
}
