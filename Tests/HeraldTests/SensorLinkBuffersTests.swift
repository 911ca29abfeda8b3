import Testing
@testable import BluetoothHost
@testable import Herald

/// A sensor's stack buffers are its peripheral's offer's (`HeraldServerOffer.LinkBuffers`,
/// `ControlBuffers`), as the firmware wearable sizes them: its GATT clients then offer no larger an
/// ATT_MTU than a link's buffers hold, on either way of building it.
@Suite("Sensor: link and control buffers from the server offer")
struct SensorLinkBuffersTests {
    /// The firmware wearable's sizes (Firmware/Wearable/main.swift).
    enum WearableLikeOffer: HeraldServerOffer {
        typealias PrepareQueue = ATTPreparedWrites<2, 64>
        typealias LinkBuffers = LinkPDUBuffers<136>
        enum ControlBuffers: StackControlBuffers {
            typealias Commands = HCICommandQueue<384>
            typealias ACL = ACLOutboundQueue<576>
            typealias Credits = ACLCredits<4>
        }
    }
    typealias Peripheral = HeraldPeripheral<NoPayloadSource, WearableLikeOffer, 4, 32, 64>
    typealias Sensor = HeraldSensor<SimplePayloadLayout, RecordingDelegate, 8, 4, Peripheral>
    typealias QuietSensor = HeraldSensor<SimplePayloadLayout, NoSensorDelegate, 8, 4, Peripheral>

    static func peripheral() throws -> Peripheral {
        try Peripheral(source: NoPayloadSource(), advertising: HeraldAdvertisingConfiguration(),
                       clock: HeraldClock(unixMillisAtZero: 1_700_000_000_000))
    }

    @Test func theSensorsStackTakesTheOffersBuffers() throws {
        #expect(Sensor.LinkBuffers.PDU.capacity == 136)
        #expect(Sensor.Control.self == StackControlOf<WearableLikeOffer.ControlBuffers>.self)
        #expect(Sensor.PrepareQueue.self == ATTPreparedWrites<2, 64>.self)
        // The standard offer keeps the standard buffers.
        typealias Standard = HeraldSensor<SimplePayloadLayout, NoSensorDelegate, 8, 4, NoSensorPeripheral>
        #expect(Standard.LinkBuffers.PDU.capacity == 247 && Standard.Control.self == StackControl.self)
        #expect(Standard(supplier: SimplePayloadLayout(), delegate: NoSensorDelegate()).central.clientMTU == 247)
        let sensor = Sensor(supplier: SimplePayloadLayout(), delegate: RecordingDelegate(), peripheral: try Self.peripheral())
        #expect(sensor.central.clientMTU == 136)
    }

    /// Our client's Exchange MTU Request offers the link buffers' 136 octets, not the standard 247: a
    /// peer may then answer with PDUs of up to 136 octets, which the link's reassembly buffer holds.
    @Test func theClientOffersWhatTheLinkBuffersHold() throws {
        var app = Sensor(supplier: SimplePayloadLayout(), delegate: RecordingDelegate(), peripheral: try Self.peripheral(),
                         configuration: .unspread)
        var control = Sensor.Control()
        control.credits.configure(leDataLength: 251, leTotalPackets: 8)
        app.start(now: 0, control: &control)
        app.stackDidBecomeReady(ControllerInfo(), now: 10, control: &control)
        control.commands.removeAll()
        let peer = address(0x31)
        let data = AdvertData.heraldUUID16
        let report = AdvertisingReport(kind: AdvertisingReportKind(rawValue: 0x13), address: peer, rssi: -58, txPower: nil,
                                       advertisingSID: nil, data: data.span)
        app.stackDidReceive(advertisingReport: report, now: 100, control: &control)
        #expect(control.connecting?.peer == peer)
        control.connecting = nil
        app.stackDidConnect(ConnectionSummary(handle: 0x40, role: .central, peer: peer,
                                              timing: ConnectionTiming(interval: 24, latency: 0, supervisionTimeout: 72)),
                            now: 150, control: &control)
        let sent = Self.takeATT(&control, handle: 0x40)
        #expect(sent.first == [0x02, 136, 0x00], "\(sent)")
        // The peer's server offers 247: the link's ATT_MTU is the smaller, 136.
        app.stackDidReceiveATT(handle: 0x40, pdu: [0x03, 0xF7, 0x00].span, now: 160, control: &control)
        #expect(app.central.slots[0]?.client.mtu == 136)
    }

    /// Built in place with the peripheral made in its own place (the firmware wearable's way), over
    /// any prior contents, the sensor equals what `init` builds, client MTU and link states included.
    @Test func inPlaceWithThePeripheralInPlaceEqualsInit() throws {
        let model = try Self.peripheral()
        let expected = QuietSensor(supplier: SimplePayloadLayout(), delegate: NoSensorDelegate(), peripheral: model)
        SensorInPlaceTests.expectBuiltInPlaceOverAnyFill(equalTo: expected) { memory in
            QuietSensor.initialize(memory, supplier: SimplePayloadLayout(), delegate: NoSensorDelegate()) { p in
                Peripheral.initialize(p, source: NoPayloadSource(), advertiser: model.advertiser)
            }
            #expect(memory.pointee.central.clientMTU == 136)
        }
    }

    /// ATT PDUs queued on `handle`, oldest first (as `SensorStackTests.takeATT`, for these buffers).
    static func takeATT(_ control: inout Sensor.Control, handle: UInt16) -> [[UInt8]] {
        _ = control.credits.open(handle: handle)
        var sink = ArraySink()
        control.acl.drain(credits: &control.credits, into: &sink)
        let out = SensorStackTests.attPDUs(inH4: sink.bytes)
        _ = control.credits.completed(handle: handle, count: UInt16(out.count))
        return out
    }
}
