import Testing
@testable import BluetoothHost
@testable import HeraldRuntime

/// `herald bench-write` measures the PHY it asked for: with `waitsForPHY` the first Write Command
/// waits for the link's PHY Update to end, or for `phyWait` when none ends.
@Suite("Bench writer: writes start once the link is configured")
struct BenchWriterTests {
    static let peer = DeviceAddress(type: .randomDevice, address: BDAddress(displayOrder: 0xC0, 0, 0, 0, 0, 0x0D))

    func connected(waitsForPHY: Bool) -> (BenchWriter, StackControl) {
        var w = BenchWriter(peer: Self.peer, attribute: 3, count: 10, size: 0)
        w.waitsForPHY = waitsForPHY
        var control = StackControl()
        control.credits.configure(leDataLength: 251, leTotalPackets: 7)
        w.stackDidConnect(ConnectionSummary(handle: 0x40, role: .central, peer: Self.peer,
                                            timing: ConnectionTiming(interval: 6, latency: 0, supervisionTimeout: 200)),
                          now: 100, control: &control)
        #expect(w.state == .exchangingMTU)
        w.stackDidReceiveATT(handle: 0x40, pdu: [0x03, 0xF7, 0x00].span, now: 150, control: &control)
        #expect(w.mtu == 247)
        return (w, control)
    }

    @Test func withoutAPHYToWaitForItWritesAtOnce() {
        let (w, _) = connected(waitsForPHY: false)
        #expect(w.state == .writing)
        #expect(w.applicationDeadline == nil)
    }

    @Test func theFirstWriteWaitsForThePHYUpdate() {
        var (w, control) = connected(waitsForPHY: true)
        #expect(w.state == .awaitingPHY(until: 2_150))
        #expect(w.applicationDeadline == 2_150)
        // Another link's update changes nothing.
        w.stackDidUpdatePHY(handle: 0x41, LinkPHY(tx: .le2M, rx: .le2M), now: 200, control: &control)
        #expect(w.state == .awaitingPHY(until: 2_150))
        w.stackDidUpdatePHY(handle: 0x40, LinkPHY(tx: .le2M, rx: .le2M), now: 260, control: &control)
        #expect(w.state == .writing)
        #expect(w.phy == LinkPHY(tx: .le2M, rx: .le2M))
        #expect(w.applicationDeadline == nil)
    }

    @Test func aPHYUpdateThatNeverEndsHoldsTheWritesOnlyUntilTheWait() {
        var (w, control) = connected(waitsForPHY: true)
        w.stackTimerFired(now: 2_149, control: &control)
        #expect(w.state == .awaitingPHY(until: 2_150))
        w.stackTimerFired(now: 2_150, control: &control)
        #expect(w.state == .writing)
    }

    @Test func aPHYUpdateBeforeTheMTUExchangeIsNotWaitedFor() {
        var w = BenchWriter(peer: Self.peer, attribute: 3, count: 10, size: 0)
        w.waitsForPHY = true
        var control = StackControl()
        w.stackDidConnect(ConnectionSummary(handle: 0x40, role: .central, peer: Self.peer,
                                            timing: ConnectionTiming(interval: 6, latency: 0, supervisionTimeout: 200)),
                          now: 100, control: &control)
        w.stackDidUpdatePHY(handle: 0x40, LinkPHY(tx: .le2M, rx: .le2M), now: 120, control: &control)
        w.stackDidReceiveATT(handle: 0x40, pdu: [0x03, 0xF7, 0x00].span, now: 150, control: &control)
        #expect(w.state == .writing)
    }
}
