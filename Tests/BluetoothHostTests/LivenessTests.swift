import Testing
@testable import BluetoothHost

/// The liveness probe: a ready controller that goes quiet is asked Read BD_ADDR, and one that does
/// not answer is failed, so a supervisor can bring it up again (issue 7, controller dies behind an
/// open port).
@Suite struct LivenessTests {
    func readyHarness(liveness: UInt64?) throws -> BringUpHarness {
        var h = BringUpHarness(FakeController())
        h.host.configuration.livenessInterval = liveness
        h.run()
        _ = try #require(h.delegate.ready)
        #expect(h.host.state == .ready)
        return h
    }

    @Test func aQuietControllerIsProbedAndStaysReadyWhenItAnswers() throws {
        var h = try readyHarness(liveness: 2_000)
        let readyAt = h.now
        h.controller.seen.removeAll()
        #expect(h.host.nextDeadline == readyAt + 2_000)
        h.now = readyAt + 1_999
        h.host.tick(now: h.now, delegate: &h.delegate, output: &h.wire)
        #expect(h.wire.packets.isEmpty)
        h.now = readyAt + 2_000
        h.host.tick(now: h.now, delegate: &h.delegate, output: &h.wire)
        h.deliverPending()
        #expect(h.controller.seen == [0x1009])
        #expect(h.host.state == .ready)
        #expect(h.delegate.failures.isEmpty)
        // The probe's answer is the host's own business, not the application's.
        #expect(!h.delegate.completions.contains { $0.0 == .liveness })
        // The next probe is due one interval after the answer.
        #expect(h.host.nextDeadline == readyAt + 4_000)
    }

    @Test func aDeadControllerFailsWithinIntervalPlusCommandTimeout() throws {
        var h = try readyHarness(liveness: 2_000)
        let readyAt = h.now
        h.controller.silent = true
        while h.delegate.failures.isEmpty, let d = h.host.nextDeadline, d <= readyAt + 10_000 {
            h.now = d
            h.host.tick(now: h.now, delegate: &h.delegate, output: &h.wire)
            h.deliverPending()
        }
        #expect(h.delegate.failures == [.commandTimeout(HCIOpcode(rawValue: 0x1009))])
        #expect(h.now - readyAt <= 2_000 + h.host.configuration.commandTimeout)
    }

    @Test func trafficFromTheControllerPostponesTheProbe() throws {
        var h = try readyHarness(liveness: 2_000)
        let readyAt = h.now
        // An event (here a Number of Completed Packets with no handles) counts as a sign of life.
        h.now = readyAt + 1_500
        let event: [UInt8] = [0x04, 0x13, 0x01, 0x00]
        h.host.receive(event.span, now: h.now, delegate: &h.delegate, output: &h.wire)
        #expect(h.host.nextDeadline == readyAt + 3_500)
    }

    @Test func offByDefault() throws {
        let h = try readyHarness(liveness: nil)
        #expect(h.host.nextDeadline == nil)
    }

    /// A delegate whose type leaves the probe out (`HostDelegate.probesLiveness`, firmware's
    /// `LEApplication.probesControllerLiveness`): no liveness timer and no probe, whatever the interval.
    struct UnprobedDelegate: HostDelegate {
        static var probesLiveness: Bool { false }
    }

    @Test func aDelegateWithoutProbesHasNoLivenessTimer() throws {
        var h = try readyHarness(liveness: 2_000)
        let readyAt = h.now
        h.controller.seen.removeAll()
        #expect(h.host.nextDeadline(for: UnprobedDelegate.self) == nil)
        #expect(h.host.nextDeadline(for: type(of: h.delegate)) == readyAt + 2_000)
        var unprobed = UnprobedDelegate()
        h.now = readyAt + 10_000
        h.host.tick(now: h.now, delegate: &unprobed, output: &h.wire)
        #expect(h.wire.packets.isEmpty)
        #expect(h.host.state == .ready)
    }
}
