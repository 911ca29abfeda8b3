import Testing
import BluetoothHost
@testable import Herald

/// Devices on one payload period grid change address together (see HeraldCentral+Rotation): two that
/// find each other at once must not both connect, and a peer's address of the period just ended is
/// not connected to.
@Suite("Sensor central: rotating together with the devices around us")
struct SensorRotationTests {
    /// Addresses of ours for which the pair's coin (`HeraldCentral.waits`) says we wait for `peer`
    /// (4C:…:01, a resolvable private address: a Herald device that rotates, as we do), and we connect.
    /// The coin is tossed so that here the smaller address waits (under the rule it replaced, the larger).
    static let waiting = BDAddress(displayOrder: 0x40, 0x11, 0x22, 0x33, 0x44, 0x01)
    static let connecting = BDAddress(displayOrder: 0xD0, 0x11, 0x22, 0x33, 0x44, 0x01)
    let peer = address(1, 0x4C)

    /// A static address (C0:…:01: a venue beacon, which never connects) is not held back: a device that
    /// would wait for a Herald peer connects at once, as to any device that cannot be a central on the period grid.
    @Test func theWaitingDeviceConnectsToAStaticAddressAtOnce() {
        var h = CentralHarness<8, 2>()
        h.central.advertisedAddress = (Self.waiting, 0)
        let beacon = address(1)
        h.advert(beacon, AdvertData.heraldUUID16)
        #expect(h.control.connects == [beacon])
    }

    @Test func theWaitingDeviceReadsOverThePeersLink() {
        var h = CentralHarness<8, 2>()
        h.central.advertisedAddress = (Self.waiting, 0)
        h.advert(peer, AdvertData.heraldUUID16)
        h.now += 300
        h.advert(peer, AdvertData.heraldUUID16)
        #expect(h.control.connects.isEmpty, "the peer connects first")
        // The peer's link arrives within the hold: we read its payload over it and make none of our own.
        let payload = simplePayload(0x41)
        var fake = FakePeer.herald(payload: payload)
        let first = h.central.didConnect(handle: 0x41, peer: peer, isCentral: false, now: h.now, control: &h.control)
        #expect(first == .exchangeMTU)
        let steps = h.drive(0x41, peer: &fake, from: first)
        #expect(steps.last == .done(.completed))
        #expect(h.delegate.events.contains(.read(1, payload)))
        h.now += HeraldCentral<8, 2>.crossingHold
        h.advert(peer, AdvertData.heraldUUID16)
        #expect(h.control.connects.isEmpty)
        #expect(h.control.disconnects.isEmpty, "the peer's link is the peer's to close")
    }

    @Test func theWaitingDeviceConnectsAfterTheHoldWhenThePeerDoesNot() {
        var h = CentralHarness<8, 2>()
        h.central.advertisedAddress = (Self.waiting, 0)
        h.advert(peer, AdvertData.heraldUUID16)
        h.expectFirstAttempt(on: peer, after: HeraldCentral<8, 2>.crossingHold)
    }

    @Test func theConnectingDeviceAndAScanOnlySensorConnectAtOnce() {
        var connecting = CentralHarness<8, 2>()
        connecting.central.advertisedAddress = (Self.connecting, 0)
        connecting.advert(peer, AdvertData.heraldUUID16)
        #expect(connecting.control.connects == [peer])
        var scanOnly = CentralHarness<8, 2>()
        scanOnly.advert(peer, AdvertData.heraldUUID16)
        #expect(scanOnly.control.connects == [peer])
    }

    /// The payload read just after a boundary falls due again just after the next: by then the peer
    /// has a new address, and the one we heard last period must not be connected to.
    @Test func aDeviceLastHeardBeforeOurAddressChangedWaitsUntilItIsHeardAgain() {
        var h = CentralHarness<8, 2>()
        h.central.advertisedAddress = (Self.connecting, 0)
        h.advert(peer, AdvertData.heraldUUID16)
        #expect(h.control.connects == [peer])
        h.central.didFailToConnect(to: peer, status: .operationCancelledByHost, now: h.now, control: &h.control)
        // Our address changes (a period boundary); the peer is not heard after it.
        h.now += 500
        h.central.advertisedAddress = (Self.connecting, h.now)
        h.now += 100
        h.central.tick(now: h.now, control: &h.control, delegate: &h.delegate)
        #expect(h.control.connects == [peer], "no attempt to an address last heard in the period that ended")
        // Heard again after the boundary (a phone on its own grid keeps its address): connected.
        h.advert(peer, AdvertData.heraldUUID16)
        #expect(h.control.connects == [peer, peer])
    }

    @Test func addressesCompareAsFortyEightBitNumbers() {
        typealias C = HeraldCentral<1, 1>
        #expect(C.isLarger(BDAddress(displayOrder: 0x01, 0, 0, 0, 0, 0), than: BDAddress(displayOrder: 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF)))
        #expect(!C.isLarger(BDAddress(displayOrder: 0x00, 0, 0, 0, 0, 2), than: BDAddress(displayOrder: 0x00, 0, 0, 0, 0, 3)))
        #expect(!C.isLarger(Self.waiting, than: Self.waiting))
    }

    /// Of any two different addresses exactly one waits for the other, seen from either side.
    @Test func exactlyOneOfTwoWaits() {
        typealias C = HeraldCentral<1, 1>
        var draws = CentralDraws()
        func next() -> BDAddress {
            let a = draws.next(), b = draws.next()
            return BDAddress(displayOrder: UInt8(truncatingIfNeeded: a >> 24) & 0x3F | 0x40, UInt8(truncatingIfNeeded: a >> 16),
                             UInt8(truncatingIfNeeded: a >> 8), UInt8(truncatingIfNeeded: a), UInt8(truncatingIfNeeded: b >> 8),
                             UInt8(truncatingIfNeeded: b))
        }
        for _ in 0..<500 {
            let a = next(), b = next()
            guard a != b else { continue }
            #expect(C.waits(a, for: b) != C.waits(b, for: a))
        }
    }

    /// Six wearables: under "the larger address waits" the smallest connected to all five others and
    /// the largest to none; with a coin per pair no device connects to more than four here, and every
    /// device both connects to some peers and waits for others (issue 39).
    @Test func aCrowdSharesTheConnecting() {
        typealias C = HeraldCentral<1, 1>
        let crowd = [
            BDAddress(displayOrder: 0x70, 0x63, 0x0D, 0xC5, 0x84, 0x6B), BDAddress(displayOrder: 0x4D, 0x5B, 0xB6, 0x82, 0x02, 0xCA),
            BDAddress(displayOrder: 0x59, 0x37, 0x04, 0xBB, 0x25, 0x96), BDAddress(displayOrder: 0x48, 0x99, 0xC8, 0x31, 0xD8, 0xB2),
            BDAddress(displayOrder: 0x40, 0xA4, 0x83, 0xDC, 0xEB, 0x22), BDAddress(displayOrder: 0x50, 0xA0, 0xC3, 0xF6, 0x60, 0x17),
        ]
        let byOrder = crowd.map { a in crowd.filter { $0 != a && !C.isLarger(a, than: $0) }.count }
        #expect(byOrder.sorted() == [0, 1, 2, 3, 4, 5])
        let byCoin = crowd.map { a in crowd.filter { $0 != a && !C.waits(a, for: $0) }.count }
        #expect(byCoin.max()! <= 4 && byCoin.min()! >= 1, "\(byCoin)")
    }

    /// The sensor learns its advertised address from its own advertiser at every rotation.
    @Test func theSensorKnowsTheAddressItAdvertises() {
        var core = SensorCore(supplier: SimplePayloadLayout(), delegate: RecordingDelegate(), central: HeraldCentral<4, 1>())
        core.now = 7_000
        core.heraldPeripheral(didChangeAddress: Self.waiting, unixMillis: 0)
        #expect(core.central.advertisedAddress?.address == Self.waiting)
        #expect(core.central.advertisedAddress?.since == 7_000)
    }
}
