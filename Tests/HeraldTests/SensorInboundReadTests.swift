import BluetoothHost
import Testing
@testable import Herald

/// Reading a peer's payload over the link it made to us: the link costs no connection of ours, and
/// on Zephyr's radio waiting for our own instead put first reads seconds later (Tools/bench/phases.py).
@Suite("Sensor central: reading over links peers made")
struct SensorInboundReadTests {
    /// A peer that connected to us before we heard it is read over its link as soon as its first
    /// advert files it: waiting let its link end with its own read, and the crossing-connection hold
    /// then put our first read of it seconds later (Tools/bench/phases.py on Zephyr's radio).
    @Test func aPeerLinkedToUsBeforeItsFirstAdvertIsReadOverThatLink() {
        var h = CentralHarness<8, 2>()
        let a = address(1)
        #expect(h.central.didConnect(handle: 7, peer: a, isCentral: false, now: h.now, control: &h.control) == nil)
        let read = h.advert(a, AdvertData.heraldUUID16)
        #expect(read?.handle == 7)
        #expect(h.central.linkIndex(handle: 7) != nil)
        let payload: [UInt8] = [0x10, 0x03, 0x3A, 0x00, 0x01] + [UInt8](repeating: 0x5B, count: 16)
        var peer = FakePeer.herald(payload: payload)
        _ = h.drive(7, peer: &peer, from: read?.step)
        #expect(h.delegate.events.contains { if case .read(_, let p) = $0 { return p == payload } else { return false } })
        // Its link is the peer's to close; a later advert asks for nothing more.
        #expect(!h.control.disconnects.contains(7))
        h.now += 100
        #expect(h.advert(a, AdvertData.heraldUUID16) == nil)
        #expect(h.control.connects.isEmpty)
    }

    /// Both our slots were busy when the peer connected and when it was first heard: the first slot
    /// to free goes to reading it over its link, before any new connection of ours.
    @Test func aFreedSlotReadsAPeerStillLinkedToUs() {
        var h = CentralHarness<8, 2>()
        let a = address(1), b = address(2), c = address(3)
        h.advert(a, AdvertData.heraldUUID16)
        _ = h.connect(a, handle: 1)
        h.advert(b, AdvertData.heraldUUID16)
        _ = h.connect(b, handle: 2)
        #expect(h.central.openLinks == 2)
        #expect(h.central.didConnect(handle: 9, peer: c, isCentral: false, now: h.now, control: &h.control) == nil)
        #expect(h.advert(c, AdvertData.heraldUUID16) == nil)
        let connects = h.control.connects.count
        let read = h.central.didDisconnect(handle: 2, reason: .remoteUserTerminated, now: h.now, control: &h.control)
        #expect(read?.handle == 9)
        #expect(h.central.linkIndex(handle: 9) != nil)
        #expect(h.control.connects.count == connects)
        // Once read, its link leaves the slot, and a later freed slot asks for nothing more of it.
        let payload: [UInt8] = [0x10, 0x03, 0x3A, 0x00, 0x01] + [UInt8](repeating: 0x5C, count: 16)
        var peer = FakePeer.herald(payload: payload)
        _ = h.drive(9, peer: &peer, from: read?.step)
        #expect(h.delegate.events.contains { if case .read(_, let p) = $0 { return p == payload } else { return false } })
        #expect(h.central.didDisconnect(handle: 1, reason: .remoteUserTerminated, now: h.now, control: &h.control) == nil)
    }

    /// One slot free and our attempt on `b` under way: a peer linking to us waits, and the attempt's
    /// link gets the slot. Taking it closed the attempt's link the moment it came up, and the
    /// controller then refused the next attempts 0x0B for the 2 s the closing link lingered
    /// (issue 39's bench). When the attempt fails instead, its slot reads the waiting peer.
    @Test func anAttemptUnderWayKeepsTheLastSlotForItsLink() {
        for attemptSucceeds in [true, false] {
            var h = CentralHarness<8, 2>()
            let a = address(1), b = address(2), c = address(3)
            h.advert(a, AdvertData.heraldUUID16)
            _ = h.connect(a, handle: 1)
            h.advert(b, AdvertData.heraldUUID16)
            h.advert(c, AdvertData.heraldUUID16)
            #expect(h.control.connects == [a, b])
            #expect(h.central.didConnect(handle: 9, peer: c, isCentral: false, now: h.now, control: &h.control) == nil)
            if attemptSucceeds {
                #expect(h.connect(b, handle: 2) != nil)
                #expect(h.control.disconnects.isEmpty)
            } else {
                let read = h.central.didFailToConnect(to: b, status: .connectionTimeout, now: h.now, control: &h.control)
                #expect(read?.handle == 9)
            }
        }
    }

    /// The attempt under way is on the peer that linked to us: it will bring no link (the stack
    /// cancels it), so the last slot reads the peer over its own link at once.
    @Test func anAttemptOnThePeerThatLinkedToUsKeepsNoSlot() {
        var h = CentralHarness<8, 2>()
        let a = address(1), b = address(2)
        h.advert(a, AdvertData.heraldUUID16)
        _ = h.connect(a, handle: 1)
        h.advert(b, AdvertData.heraldUUID16)
        #expect(h.control.connects == [a, b])
        #expect(h.central.didConnect(handle: 9, peer: b, isCentral: false, now: h.now, control: &h.control) != nil)
    }
}
