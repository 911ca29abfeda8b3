import Testing
@testable import BluetoothHost

/// Every connection attempt ends exactly once, and the application hears how: a link
/// (`stackDidConnect`) or a failure (`stackDidFailToConnect`), whichever way the controller ends it.
@Suite("GAP: every connection attempt's end is reported")
struct ConnectionAttemptEndTests {
    /// LE Connection Complete (subevent 0x01) from `peer`'s address, as `StackHarness.connectionComplete`.
    static func connectionComplete(handle: UInt16, role: UInt8, status: UInt8 = 0, peer: [UInt8]) -> [UInt8] {
        [0x04, 0x3E, 0x13, 0x01, status, UInt8(handle & 0xFF), UInt8(handle >> 8), role, 0x01]
            + peer + [0x18, 0x00, 0x00, 0x00, 0x48, 0x00, 0x00]
    }

    /// The attempt's link comes up when the table has no room for it (three central links and a
    /// phone's fill a 4-link stack, as on the firmware wearable): the stack refuses the link, and the
    /// application must hear that its attempt ended, or it waits for it for ever and never connects
    /// again.
    @Test func aLinkRefusedForAFullTableEndsTheAttemptAndTheNextOneStarts() throws {
        var h = try CentralHarness()
        for i in 0..<3 {
            h.feed(Self.connectionComplete(handle: UInt16(0x40 + i), role: 0x00, peer: [UInt8(i), 0, 0, 0, 0, 0xC0]))
        }
        h.feed(Self.connectionComplete(handle: 0x43, role: 0x01, peer: [0x50, 0, 0, 0, 0, 0xC0]))
        #expect(h.stack.app.connected.count == 4)
        do { let ok = h.connect(); #expect(ok) }
        h.commands.removeAll()
        // The attempt's link (peer F0:F1:F2:F3:F4:F5, CentralHarness.peer) on handle 0x44.
        h.feed(StackHarness.connectionComplete(handle: 0x44, role: 0x00))
        #expect(h.stack.le.counters.rejectedConnections == 1)
        // HCI Disconnect of the refused link (0x14, low resources), and the scan resumed.
        #expect(h.commands == [0x0406] + CentralHarness.resume)
        #expect(h.stack.app.connected.count == 4)
        // Reported as 0x0D Connection Rejected due to Limited Resources (Core 5.4 Vol 1 Part F 2.13).
        #expect(h.stack.app.failed.map(\.0) == [CentralHarness.peer])
        #expect(h.stack.app.failed.map(\.1) == [HCIStatus(rawValue: 0x0D)])
        #expect(h.stack.le.control.connecting == nil)
        // Its Disconnection Complete ends a link the application never had: nothing to report.
        h.feed([0x04, 0x05, 0x04, 0x00, 0x44, 0x00, 0x16])
        #expect(h.stack.app.disconnected.isEmpty)
        // The phone leaves; the next attempt starts and its link is the application's.
        h.feed([0x04, 0x05, 0x04, 0x00, 0x43, 0x00, 0x13])
        do { let ok = h.connect(); #expect(ok) }
        h.feed(StackHarness.connectionComplete(handle: 0x45, role: 0x00))
        #expect(h.stack.app.connected.last?.handle == 0x45)
        #expect(h.stack.app.failed.count == 1)
        #expect(h.stack.le.control.connecting == nil)
    }

    /// A failed LE Connection Complete of the advertising side (high duty cycle directed advertising
    /// timed out, 0x3C, Core 5.4 Vol 4 Part E 7.8.9) is no end of our attempt: neither with role
    /// peripheral (7.7.65.1) nor with the role Zephyr's controller gives every failed event (it
    /// clears all but the status: role 0x00).
    @Test func anAdvertisingSideFailureLeavesTheAttemptRunning() throws {
        var h = try CentralHarness()
        do { let ok = h.connect(); #expect(ok) }
        h.feed(StackHarness.connectionComplete(handle: 0, role: 0x01, status: 0x3C))
        h.feed(StackHarness.connectionComplete(handle: 0, role: 0x00, status: 0x3C))
        #expect(h.stack.app.failed.isEmpty)
        #expect(h.stack.le.control.connecting?.peer == CentralHarness.peer)
        // The attempt's own failure still ends it (after our cancel: 0x02, reported as the timeout).
        h.feed(StackHarness.connectionComplete(handle: 0, role: 0x00, status: 0x3E))
        #expect(h.stack.app.failed.map(\.1) == [HCIStatus(rawValue: 0x3E)])
        #expect(h.stack.le.control.connecting == nil)
    }

    /// A central link from another address than the attempt's is the late link of an attempt that
    /// already ended (the controller allows one LE Create Connection at a time, Core 5.4 Vol 4 Part E
    /// 7.8.12): it is no end of the attempt under way, which goes on to its own end.
    @Test func aCentralLinkFromAnotherAddressDoesNotEndTheAttempt() throws {
        var h = try CentralHarness()
        do { let ok = h.connect(); #expect(ok) }
        h.feed(Self.connectionComplete(handle: 0x40, role: 0x00, peer: [0x01, 0, 0, 0, 0, 0xC0]))
        #expect(h.stack.app.connected.map(\.handle) == [0x40])
        #expect(h.stack.le.control.connecting?.peer == CentralHarness.peer)
        h.feed(StackHarness.connectionComplete(handle: 0x41, role: 0x00))
        #expect(h.stack.app.connected.map(\.handle) == [0x40, 0x41])
        #expect(h.stack.le.control.connecting == nil)
        #expect(h.stack.app.failed.isEmpty)
    }
}
