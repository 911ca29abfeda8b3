import Testing
import BluetoothHost
@testable import Herald

/// The central scans actively only while an address it hears has yet to answer a scan request
/// (`HeraldCentral+Scanning`): other centrals' connection requests then do not meet our scan requests.
@Suite("Sensor central: active scanning only while a scan response is missing")
struct SensorScanningTests {
    /// Legacy report kinds (`AdvertisingReportKind(legacyEventType:)`): ADV_IND, SCAN_RSP, ADV_NONCONN_IND.
    static let advInd: UInt16 = 0x13, scanRsp: UInt16 = 0x1B, nonconnInd: UInt16 = 0x10

    @Test func startsActiveAndTurnsPassiveOnceEveryAddressAnswered() {
        var h = CentralHarness<8, 2>()
        // Nothing has answered yet: active, for the hold.
        #expect(h.control.actions == [.scan(.active)])
        #expect(h.central.nextDeadline == 2_000)
        h.advert(address(1), AdvertData.heraldUUID16, kind: Self.advInd)
        h.now += 1
        h.advert(address(1), [], kind: Self.scanRsp)
        #expect(h.central.database[0]?.answeredScan == true)
        // Its next adverts need nothing: passive once the hold since its last unanswered advert is over.
        h.now = 1_500
        h.advert(address(1), AdvertData.heraldUUID16, kind: Self.advInd)
        #expect(h.central.scan == .active)
        h.now = 2_001
        h.central.tick(now: h.now, control: &h.control, delegate: &h.delegate)
        #expect(h.central.scan == .passive)
        #expect(h.control.actions.filter { if case .scan = $0 { true } else { false } } == [.scan(.active), .scan(.passive)])
        // Passive: no deadline of its own.
        #expect(h.central.nextDeadline == 1_000 + 60_000)
    }

    @Test func aNewAddressTurnsItActiveAgainForTheHold() {
        var h = CentralHarness<8, 2>()
        h.now = 3_000
        h.central.tick(now: h.now, control: &h.control, delegate: &h.delegate)
        #expect(h.central.scan == .passive)
        h.advert(address(2), AdvertData.heraldUUID16, kind: Self.advInd)
        #expect(h.central.scan == .active)
        #expect(h.central.nextDeadline == 4_000)
        // Still unanswered at its next advert: the hold runs from that one.
        h.now = 3_800
        h.advert(address(2), AdvertData.heraldUUID16, kind: Self.advInd)
        h.now = 4_500
        h.central.tick(now: h.now, control: &h.control, delegate: &h.delegate)
        #expect(h.central.scan == .active)
        h.now = 4_800
        h.central.tick(now: h.now, control: &h.control, delegate: &h.delegate)
        #expect(h.central.scan == .passive)
    }

    @Test func aDeviceThatCannotBeScannedNeedsNoActiveScan() {
        var h = CentralHarness<8, 2>()
        h.now = 3_000
        h.central.tick(now: h.now, control: &h.control, delegate: &h.delegate)
        h.advert(address(3), AdvertData.heraldUUID16, kind: Self.nonconnInd)
        #expect(h.central.database.count == 1)
        #expect(h.central.scan == .passive)
    }

    @Test func aNonHeraldDeviceIsRememberedOnceItAnswered() {
        var h = CentralHarness<8, 2>()
        h.now = 3_000
        h.central.tick(now: h.now, control: &h.control, delegate: &h.delegate)
        let other: [UInt8] = [0x02, 0x01, 0x06, 0x03, 0x03, 0x0F, 0x18]  // Battery Service only
        h.advert(address(4), other, kind: Self.advInd)
        #expect(h.central.database.count == 0)
        #expect(h.central.scan == .active)
        h.advert(address(4), [], kind: Self.scanRsp)
        h.now = 4_500
        h.advert(address(4), other, kind: Self.advInd)
        h.central.tick(now: h.now, control: &h.control, delegate: &h.delegate)
        #expect(h.central.scan == .passive)
        // Eight more such devices push it out: it costs one more scan response, nothing else.
        for i in 10..<18 {
            h.advert(address(UInt8(i)), [], kind: Self.scanRsp)
        }
        h.advert(address(4), other, kind: Self.advInd)
        #expect(h.central.scan == .active)
    }

    @Test func theDutyCycleStillTurnsTheScanOff() {
        var config = HeraldSensorConfiguration.unspread
        config.scanWindow = 10_000
        var h = CentralHarness<8, 2>(configuration: config)
        h.now = 11_000
        h.central.tick(now: h.now, control: &h.control, delegate: &h.delegate)
        #expect(h.central.scan == nil)
        #expect(h.control.actions == [.scan(.active), .scan(nil)])
        h.now = 31_000
        h.central.tick(now: h.now, control: &h.control, delegate: &h.delegate)
        // Back on: passive, since nothing heard is waiting for a scan response.
        #expect(h.control.actions == [.scan(.active), .scan(nil), .scan(.passive)])
    }

    @Test func stoppedCentralAsksForNoScan() {
        var h = CentralHarness<8, 2>()
        h.central.stop(control: &h.control)
        #expect(h.control.actions == [.scan(.active), .scan(nil)])
        h.advert(address(5), AdvertData.heraldUUID16, kind: Self.advInd)
        #expect(h.control.actions == [.scan(.active), .scan(nil)])
    }
}
