import Testing
import BluetoothHost
@testable import Herald

/// Devices on one payload period grid change address together (see HeraldCentral+Rotation): two that
/// find each other at once must not both connect, and a peer's address of the period just ended is
/// not connected to.
@Suite("Sensor central: rotating together with the devices around us")
struct SensorRotationTests {
    /// Ours is larger than `peer` (4C:…:01, a resolvable private address: a Herald device that
    /// rotates, as we do) in the first octet of display order.
    static let larger = BDAddress(displayOrder: 0xD0, 0x11, 0x22, 0x33, 0x44, 0x01)
    static let smaller = BDAddress(displayOrder: 0x40, 0x11, 0x22, 0x33, 0x44, 0x01)
    let peer = address(1, 0x4C)

    /// A static address (C0:…:01: a venue beacon, which never connects) is not held back: the larger
    /// address connects at once, as to any device that cannot be a central on the period grid.
    @Test func theLargerAddressConnectsToAStaticAddressAtOnce() {
        var h = CentralHarness<8, 2>()
        h.central.advertisedAddress = (Self.larger, 0)
        let beacon = address(1)
        h.advert(beacon, AdvertData.heraldUUID16)
        #expect(h.control.connects == [beacon])
    }

    @Test func theLargerAddressWaitsAndReadsOverThePeersLink() {
        var h = CentralHarness<8, 2>()
        h.central.advertisedAddress = (Self.larger, 0)
        h.advert(peer, AdvertData.heraldUUID16)
        h.now += 300
        h.advert(peer, AdvertData.heraldUUID16)
        #expect(h.control.connects.isEmpty, "the smaller address connects first")
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

    @Test func theLargerAddressConnectsAfterTheHoldWhenThePeerDoesNot() {
        var h = CentralHarness<8, 2>()
        h.central.advertisedAddress = (Self.larger, 0)
        h.advert(peer, AdvertData.heraldUUID16)
        h.now += HeraldCentral<8, 2>.crossingHold - 1
        h.advert(peer, AdvertData.heraldUUID16)
        #expect(h.control.connects.isEmpty)
        h.now += 1
        h.advert(peer, AdvertData.heraldUUID16)
        #expect(h.control.connects == [peer])
    }

    @Test func theSmallerAddressAndAScanOnlySensorConnectAtOnce() {
        var smaller = CentralHarness<8, 2>()
        smaller.central.advertisedAddress = (Self.smaller, 0)
        smaller.advert(peer, AdvertData.heraldUUID16)
        #expect(smaller.control.connects == [peer])
        var scanOnly = CentralHarness<8, 2>()
        scanOnly.advert(peer, AdvertData.heraldUUID16)
        #expect(scanOnly.control.connects == [peer])
    }

    /// The payload read just after a boundary falls due again just after the next: by then the peer
    /// has a new address, and the one we heard last period must not be connected to.
    @Test func aDeviceLastHeardBeforeOurAddressChangedWaitsUntilItIsHeardAgain() {
        var h = CentralHarness<8, 2>()
        h.central.advertisedAddress = (Self.smaller, 0)
        h.advert(peer, AdvertData.heraldUUID16)
        #expect(h.control.connects == [peer])
        h.central.didFailToConnect(to: peer, status: .operationCancelledByHost, now: h.now, control: &h.control)
        // Our address changes (a period boundary); the peer is not heard after it.
        h.now += 500
        h.central.advertisedAddress = (Self.smaller, h.now)
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
        #expect(!C.isLarger(Self.larger, than: Self.larger))
    }

    /// The sensor learns its advertised address from its own advertiser at every rotation.
    @Test func theSensorKnowsTheAddressItAdvertises() {
        var core = SensorCore(supplier: SimplePayloadLayout(), delegate: RecordingDelegate(), central: HeraldCentral<4, 1>())
        core.now = 7_000
        core.heraldPeripheral(didChangeAddress: Self.larger, unixMillis: 0)
        #expect(core.central.advertisedAddress?.address == Self.larger)
        #expect(core.central.advertisedAddress?.since == 7_000)
    }
}
