import BluetoothHost
import Testing
@testable import Herald

/// No scan while a read of ours is under way (`HeraldCentral+Scanning.readPausingScan`): on Zephyr's
/// controller a scan window takes the radio from our links' connection events, and each ATT round
/// trip of the read waited for it.
@Suite("Sensor central: no scan while a read of ours is under way")
struct SensorScanPauseTests {
    typealias Central = HeraldCentral<8, 2>
    static let payload: [UInt8] = [0x10, 0x03, 0x3A, 0x00, 0x01] + [UInt8](repeating: 0x5D, count: 16)

    @Test func aLinkOfOursPausesTheScanUntilItsReadIsDone() {
        var h = CentralHarness<8, 2>()
        let a = address(1)
        h.advert(a, AdvertData.heraldUUID16)
        #expect(h.control.connects == [a])
        #expect(h.central.scan != nil)
        let first = h.connect(a, handle: 1)
        #expect(h.central.scan == nil)
        var peer = FakePeer.herald(payload: Self.payload)
        _ = h.drive(1, peer: &peer, from: first)
        // Read: the link is closing, and the scan is back before its end.
        #expect(h.control.disconnects == [1])
        #expect(h.central.scan != nil)
    }

    /// A peer that answers slowly keeps its read going, but not the pause: after `scanPauseLimit` the
    /// central scans again, woken by its own deadline.
    @Test func aSlowReadPausesTheScanForTheLimitAtMost() {
        var h = CentralHarness<8, 2>()
        let a = address(1)
        h.advert(a, AdvertData.heraldUUID16)
        _ = h.connect(a, handle: 1)
        #expect(h.central.scan == nil)
        #expect(h.central.nextDeadline == h.now + Central.scanPauseLimit)
        h.now += Central.scanPauseLimit - 1
        h.central.tick(now: h.now, control: &h.control, delegate: &h.delegate)
        #expect(h.central.scan == nil)
        h.now += 1
        h.central.tick(now: h.now, control: &h.control, delegate: &h.delegate)
        #expect(h.central.scan != nil)
        #expect(h.central.linkIndex(handle: 1) != nil)
    }

    /// A read over the link a peer made to us pauses it too, and its end (the slot freed, the link
    /// left to the peer) brings the scan back.
    @Test func aReadOverAPeersLinkPausesTheScanToo() {
        var h = CentralHarness<8, 2>()
        let a = address(1)
        #expect(h.central.didConnect(handle: 7, peer: a, isCentral: false, now: h.now, control: &h.control) == nil)
        #expect(h.central.scan != nil)
        let read = h.advert(a, AdvertData.heraldUUID16)
        #expect(read?.handle == 7)
        #expect(h.central.scan == nil)
        var peer = FakePeer.herald(payload: Self.payload)
        _ = h.drive(7, peer: &peer, from: read?.step)
        #expect(h.central.linkIndex(handle: 7) == nil)
        #expect(h.central.scan != nil)
    }

    /// With the scan paused no advert calls the scheduler: the next due device's attempt starts as
    /// our link comes up, and runs while that link is read.
    @Test func theNextAttemptStartsAsOurLinkComesUp() {
        var h = CentralHarness<8, 2>()
        let a = address(1), b = address(2)
        h.advert(a, AdvertData.heraldUUID16)
        h.advert(b, AdvertData.heraldUUID16)
        #expect(h.control.connects == [a])
        _ = h.connect(a, handle: 1)
        #expect(h.control.connects == [a, b])
        #expect(h.central.scan == nil)
    }
}
