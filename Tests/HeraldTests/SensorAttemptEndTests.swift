import Testing
@testable import BluetoothHost
@testable import Herald

/// The sensor's connection attempts on the stack itself (`LEStack` with the sensor as its
/// application, events handed in parsed): each attempt ends once, and the central hears it.
@Suite("Sensor on the stack: every connection attempt ends")
struct SensorAttemptEndTests {
    typealias Sensor = HeraldSensor<SimplePayloadLayout, RecordingDelegate, 8, 4, NoSensorPeripheral>
    typealias Stack = LEStack<Sensor, 4, 24, 256>

    static func started() throws -> Stack {
        let db = try GATTDatabase<24, 256, 4>(deviceName: Array("herald".utf8).span)
        var le = Stack(app: Sensor(supplier: SimplePayloadLayout(), delegate: RecordingDelegate(), configuration: .unspread), database: db)
        var info = ControllerInfo()
        info.aclDataPacketLength = 251
        info.aclDataPacketCount = 8
        le.hostDidBecomeReady(info)
        le.app.start(now: 0, control: &le.control)
        return le
    }

    static func advert(_ le: inout Stack, _ peer: DeviceAddress, at now: UInt64) {
        le.tick(now: now)
        let data = AdvertData.heraldUUID16
        let report = AdvertisingReport(kind: AdvertisingReportKind(rawValue: 0x13), address: peer, rssi: -58, txPower: nil,
                                       advertisingSID: nil, data: data.span)
        le.hostDidReceive(advertisingReport: report)
    }

    static func linkUp(_ le: inout Stack, handle: UInt16, role: HCIRole, peer: DeviceAddress) {
        le.hostDidReceive(connectionComplete: HCILEConnectionCompleteEvent(
            status: .success, handle: handle, role: role, peer: peer, connectionInterval: 12, peripheralLatency: 0,
            supervisionTimeout: 200, centralClockAccuracy: 0))
    }

    /// The firmware wearable's case: a 4-link stack whose sensor reads over 4 links of its own, and a
    /// phone connected to it. Three links of ours and the phone's fill the table, so the fourth
    /// link's Connection Complete is refused: the central must hear its attempt ended (no failure of
    /// the peer's), and connect again once a link has gone.
    @Test func aLinkRefusedForAFullTableEndsTheCentralsAttempt() throws {
        var le = try Self.started()
        var now: UInt64 = 100
        for i in 1...3 {
            Self.advert(&le, address(UInt8(i)), at: now)
            #expect(le.control.connecting?.peer == address(UInt8(i)))
            Self.linkUp(&le, handle: 0x40 + UInt16(i), role: .central, peer: address(UInt8(i)))
            now += 10
        }
        #expect(le.app.central.openLinks == 3)
        // The phone connects to us: one inbound link is always admitted (`LEStack.inboundQuota`).
        Self.linkUp(&le, handle: 0x50, role: .peripheral, peer: address(0x50, 0x40))
        #expect(le.connections.count == 4)
        let fourth = address(4)
        Self.advert(&le, fourth, at: now)
        #expect(le.app.central.pending?.address == fourth)
        Self.linkUp(&le, handle: 0x44, role: .central, peer: fourth)
        #expect(le.counters.rejectedConnections == 1)
        #expect(le.control.connecting == nil)
        #expect(le.app.central.pending == nil)
        // Our table was full: no failure of the device's.
        let index = le.app.central.database.index(of: fourth)
        let device = try #require(index)
        #expect(le.app.central.database[device]?.consecutiveFailures == 0)
        // While the table stays full, adverts start no attempt that would only be refused again.
        now += 10
        Self.advert(&le, fourth, at: now)
        #expect(le.control.connecting == nil)
        // The phone leaves: the central connects to the fourth device.
        le.hostDidReceive(disconnectionComplete: HCIDisconnectionCompleteEvent(status: .success, handle: 0x50,
                                                                               reason: .remoteUserTerminated))
        #expect(le.control.connecting?.peer == fourth)
        #expect(le.app.central.pending?.address == fourth)
    }

    /// A central link from an address no attempt of ours is for: the late link of an attempt the
    /// stack already ended. Nothing would use it or close it, so it is closed at once (HCI Disconnect,
    /// 0x13 by `StackControl.disconnect`), and the attempt under way is still awaited.
    @Test func aLateCentralLinkNoAttemptOwnsIsClosed() {
        var h = CentralHarness<8, 2>()
        h.advert(address(1), AdvertData.heraldUUID16)
        #expect(h.central.pending?.address == address(1))
        #expect(h.connect(address(9), handle: 0x47) == nil)
        #expect(h.control.disconnects == [0x47])
        #expect(h.central.pending?.address == address(1))
        #expect(h.connect(address(1), handle: 0x48) == .exchangeMTU)
        #expect(h.central.pending == nil)
        // With no attempt under way at all.
        #expect(h.connect(address(9), handle: 0x49) == nil)
        #expect(h.control.disconnects == [0x47, 0x49])
        #expect(h.central.openLinks == 1)
        #expect(h.central.unownedLinksClosed == 2)
    }
}
