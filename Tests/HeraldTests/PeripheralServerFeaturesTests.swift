import Testing
@testable import BluetoothHost
@testable import Herald

/// A venue beacon's server: only the mandatory procedures.
enum MandatoryServer: HeraldServerOffer {
    static var serverFeatures: GATTServerFeatures { .mandatory }
}

/// A venue beacon's events.
struct MandatoryBeaconEvents: HeraldPeripheralDelegate {
    var served = 0
    mutating func heraldPeripheral(didServePayload payload: Span<UInt8>, to link: HeraldLink) { served += 1 }
}

@Suite struct PeripheralServerFeaturesTests {
    typealias Beacon = HeraldPeripheralApplication<FixedPayloadSource<64>, MandatoryBeaconEvents, 1, 64, 32, MandatoryServer>

    @Test func theApplicationOffersWhatItsPeripheralChose() {
        #expect(Beacon.serverFeatures == .mandatory)
        #expect(HeraldPeripheralApplication<FixedPayloadSource<64>, PeripheralEventLog, 1, 64, 32, StandardServerOffer>.serverFeatures == .all)
    }

    @Test func aBeaconWithoutTheOptionalProceduresStillServesItsPayload() throws {
        let source = try FixedPayloadSource<64>.venueBeacon(
            header: PayloadHeader(protocolAndVersion: 0x30, countryCode: 826, stateCode: 3), locationCode: 0x0102_0304)
        let peripheral = try HeraldPeripheral<FixedPayloadSource<64>, MandatoryServer, 1, 64, 32>(
            source: source, advertising: HeraldAdvertisingConfiguration(), clock: HeraldClock(unixMillisAtZero: 0))
        var server = try OneLinkHeraldServer(peripheral: peripheral, delegate: MandatoryBeaconEvents())
        let payload = server.handles.payload.value
        #expect(server.db.databaseHashHandle == 0)
        func send(_ pdu: [UInt8]) -> [UInt8] { server.send(pdu) }
        let low = UInt8(payload & 0xFF), high = UInt8(payload >> 8)
        #expect(send([0x0A, low, high]) == [0x0B] + hex("30 033a 0003 01020304"))
        #expect(server.app.delegate.served == 1)
        // Read Multiple of the payload twice: Request Not Supported (0x06) on handle 0x0000.
        #expect(send([0x0E, low, high, low, high]) == [0x01, 0x0E, 0x00, 0x00, 0x06])
    }
}

/// A wearable's server: everything but Read Multiple.
enum NoReadMultipleServer: HeraldServerOffer {
    static var serverFeatures: GATTServerFeatures { GATTServerFeatures(readMultiple: false) }
}

@Suite struct SensorServerFeaturesTests {
    @Test func theSensorOffersWhatItsPeripheralChose() {
        typealias Sensor<P: HeraldSensorPeripheral> = HeraldSensor<SimplePayloadDataSupplier<InlineSecretKey>, RecordingDelegate, 4, 2, P>
        typealias Peripheral = HeraldPeripheral<NoPayloadSource, NoReadMultipleServer, 2, 32, 64>
        #expect(Sensor<Peripheral>.serverFeatures == GATTServerFeatures(readMultiple: false))
        #expect(Sensor<Peripheral>.serverFeatures.queuedWrites)
        #expect(Sensor<Peripheral>.serverFeatures.databaseHash)
        #expect(Sensor<NoSensorPeripheral>.serverFeatures == .all)
    }
}
