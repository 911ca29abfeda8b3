@testable import BluetoothHost
import Foundation
import Herald
import Testing
@testable import HeraldRuntime

private let peer = DeviceAddress(type: .randomDevice, address: BDAddress(displayOrder: 0xF0, 0xF1, 0xF2, 0xF3, 0xF4, 0xF5))
private let link = ConnectionSummary(handle: 0x0040, role: .central, peer: peer,
                                     timing: ConnectionTiming(interval: 24, latency: 0, supervisionTimeout: 72))

private func le(_ u: BluetoothUUID) -> [UInt8] { (0..<16).map { u.bytes[$0] } }

/// Feeds one ATT PDU from the "server" to the reader.
private func answer(_ r: inout BenchPayloadReader, _ pdu: [UInt8], now: UInt64, _ control: inout StackControl) {
    pdu.withUnsafeBufferPointer { b in r.didReceiveATT(handle: link.handle, pdu: Span(_unsafeElements: b), now: now, control: &control) }
}

private func queuedOpcodes(_ c: StackControl) -> [UInt16] { (0..<c.commands.count).compactMap { c.commands.opcode(at: $0)?.rawValue } }

@Suite struct BenchPayloadReaderTests {
    @Test func connectsOnlyToConnectableHeraldAdvertisersOnce() {
        var r = BenchPayloadReader(activeScanning: false)
        var c = StackControl()
        r.consider(peer, isHerald: false, connectable: true, now: 0, control: &c)
        r.consider(peer, isHerald: true, connectable: false, now: 0, control: &c)
        #expect(c.connecting == nil && r.isIdle)
        r.consider(peer, isHerald: true, connectable: true, now: 10, control: &c)
        #expect(c.connecting?.peer == peer && !r.isIdle)
        // A failed attempt is retried once, then given up with a reason.
        r.didFailToConnect(to: peer, status: .connectionTimeout, control: &c)
        #expect(r.isIdle && r.outcomes.isEmpty)
        var c2 = StackControl()
        r.consider(peer, isHerald: true, connectable: true, now: 20, control: &c2)
        r.didFailToConnect(to: peer, status: .connectionTimeout, control: &c2)
        guard case .failed(let why)? = r.outcomes[peer.address.description] else { Issue.record("no failure recorded"); return }
        #expect(why.contains("connection failed"))
        var c3 = StackControl()
        r.consider(peer, isHerald: true, connectable: true, now: 30, control: &c3)
        #expect(c3.connecting == nil)
    }

    @Test(arguments: [0x3E, 0x13, 0x08])
    func aLinkLostBeforeTheReadIsRetriedLaterUpToFourTimes(reason: UInt8) {
        var r = BenchPayloadReader(activeScanning: false)
        var now: UInt64 = 0
        for attempt in 1...4 {
            var c = StackControl()
            // Each try waits longer than the last (1 s times the tries so far) after a 0x3E.
            if attempt > 1 {
                r.consider(peer, isHerald: true, connectable: true, now: now + r.lostLinkBackoff * UInt64(attempt - 1) - 1, control: &c)
                #expect(c.connecting == nil, "try \(attempt) came early")
                now += r.lostLinkBackoff * UInt64(attempt - 1)
            }
            r.consider(peer, isHerald: true, connectable: true, now: now, control: &c)
            #expect(c.connecting?.peer == peer, "try \(attempt)")
            r.didConnect(link, now: now + 10, control: &c)
            // 0x3E: the link came up and never carried a packet (the reference's C++ apps, busy); 0x13:
            // the peer ended it (the reference's periodic restart); 0x08: lost.
            r.didDisconnect(handle: link.handle, reason: HCIStatus(rawValue: reason), control: &c)
            now += 10
            if attempt < 4 { #expect(r.isIdle && r.outcomes.isEmpty, "try \(attempt)") }
        }
        guard case .failed(let why)? = r.outcomes[peer.address.description] else { Issue.record("no failure recorded"); return }
        #expect(why == "disconnected (reason 0x\(hex(reason))) before the payload was read")
        var c5 = StackControl()
        r.consider(peer, isHerald: true, connectable: true, now: now + 60_000, control: &c5)
        #expect(c5.connecting == nil)
    }

    @Test func aReadCutShortByTheEndOfTheScanSaysSo() {
        var r = BenchPayloadReader(activeScanning: false)
        var c = StackControl()
        r.consider(peer, isHerald: true, connectable: true, now: 0, control: &c)
        r.didConnect(link, now: 10, control: &c)
        r.scanEnded()
        #expect(r.outcomes[peer.address.description] == .failed("the scan ended before the payload was read"))
        // The link's end that follows (our own Disconnect, 0x16) changes nothing.
        r.didDisconnect(handle: link.handle, reason: .localHostTerminated, control: &c)
        #expect(r.outcomes[peer.address.description] == .failed("the scan ended before the payload was read"))
    }

    /// The scan's time is up while a link is being made (a reference wearable first heard 42 s into a
    /// 55 s scan on a loaded machine): that read is finished, scanning is not resumed, no other starts.
    @Test func aReadUnderWayWhenTheScanTimeIsUpIsFinishedAndNoOtherStarts() {
        var r = BenchPayloadReader(activeScanning: false)
        var c = StackControl()
        r.consider(peer, isHerald: true, connectable: true, now: 0, control: &c)
        r.finishReads()
        var c1 = StackControl()
        r.didConnect(link, now: 100, control: &c1)
        #expect(c1.acl.count == 1)  // discovery goes on
        answer(&r, [0x11, 20, 0x01, 0x00, 0x05, 0x00] + le(HeraldIdentifiers.serviceUUID), now: 110, &c1)
        answer(&r, [0x01, 0x10, 0x06, 0x00, 0x0A], now: 120, &c1)
        answer(&r, [0x09, 21, 0x02, 0x00, 0x02, 0x03, 0x00] + le(HeraldIdentifiers.payloadCharacteristicUUID), now: 130, &c1)
        answer(&r, [0x01, 0x08, 0x04, 0x00, 0x0A], now: 140, &c1)
        answer(&r, [0x0B, 0x10, 0x03, 0x3A, 0x00, 0x01], now: 150, &c1)
        #expect(r.outcomes[peer.address.description] == .payload([0x10, 0x03, 0x3A, 0x00, 0x01]))
        var c2 = StackControl()
        r.didDisconnect(handle: link.handle, reason: .localHostTerminated, control: &c2)
        #expect(r.isIdle && queuedOpcodes(c2).isEmpty)  // not scanning again
        let other = DeviceAddress(type: .randomDevice, address: BDAddress(displayOrder: 0xE0, 0xE1, 0xE2, 0xE3, 0xE4, 0xE5))
        var c3 = StackControl()
        r.consider(other, isHerald: true, connectable: true, now: 200, control: &c3)
        #expect(c3.connecting == nil && r.isIdle)
    }

    @Test func aLinkLostWhileFinishingIsReportedNotRetried() {
        var r = BenchPayloadReader(activeScanning: false)
        var c = StackControl()
        r.consider(peer, isHerald: true, connectable: true, now: 0, control: &c)
        r.didConnect(link, now: 10, control: &c)
        r.finishReads()
        var c1 = StackControl()
        r.didDisconnect(handle: link.handle, reason: HCIStatus(rawValue: 0x13), control: &c1)
        #expect(r.isIdle && queuedOpcodes(c1).isEmpty)
        #expect(r.outcomes[peer.address.description] == .failed("disconnected (reason 0x13) before the payload was read"))
    }

    @Test func discoversAndReadsThePayloadThenDisconnects() throws {
        var r = BenchPayloadReader(activeScanning: true)
        var c = StackControl()
        r.consider(peer, isHerald: true, connectable: true, now: 0, control: &c)
        var c1 = StackControl()
        r.didConnect(link, now: 100, control: &c1)
        #expect(c1.acl.count == 1)  // Read By Group Type Request
        var c2 = StackControl()
        // Read By Group Type Response: one 128-bit service, handles 1…5, then Attribute Not Found.
        answer(&r, [0x11, 20, 0x01, 0x00, 0x05, 0x00] + le(HeraldIdentifiers.serviceUUID), now: 110, &c2)
        answer(&r, [0x01, 0x10, 0x06, 0x00, 0x0A], now: 120, &c2)
        // Read By Type Response: the payload characteristic, declaration 2, value 3, readable.
        answer(&r, [0x09, 21, 0x02, 0x00, 0x02, 0x03, 0x00] + le(HeraldIdentifiers.payloadCharacteristicUUID), now: 130, &c2)
        answer(&r, [0x01, 0x08, 0x04, 0x00, 0x0A], now: 140, &c2)
        #expect(r.outcomes.isEmpty)
        // Read Response shorter than ATT_MTU − 1: the long read ends here.
        answer(&r, [0x0B, 0x10, 0x03, 0x3A, 0x00, 0x01], now: 150, &c2)
        #expect(r.outcomes[peer.address.description] == .payload([0x10, 0x03, 0x3A, 0x00, 0x01]))
        #expect(r.takeNewOutcomes().count == 1 && r.takeNewOutcomes().isEmpty)
        #expect(queuedOpcodes(c2) == [HCIDisconnect.opcode.rawValue])
        var c3 = StackControl()
        r.didDisconnect(handle: link.handle, reason: .localHostTerminated, control: &c3)
        #expect(r.isIdle)
        #expect(queuedOpcodes(c3).count == 2)  // scan parameters + enable: scanning again
    }

    @Test func aPeerWithoutTheHeraldServiceOrThatGoesQuietIsReported() {
        var r = BenchPayloadReader(activeScanning: false)
        var c = StackControl()
        r.consider(peer, isHerald: true, connectable: true, now: 0, control: &c)
        r.didConnect(link, now: 0, control: &c)
        // Only the GAP service (0x1800) on handles 1…0xFFFF.
        answer(&r, [0x11, 6, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x18], now: 10, &c)
        #expect(r.outcomes[peer.address.description] == .failed("no Herald service"))

        var q = BenchPayloadReader(activeScanning: false)
        var d = StackControl()
        q.consider(peer, isHerald: true, connectable: true, now: 0, control: &d)
        q.didConnect(link, now: 0, control: &d)
        #expect(q.nextDeadline == 10_000)
        var e = StackControl()
        q.timerFired(now: 9_999, control: &e)
        #expect(q.outcomes.isEmpty)
        q.timerFired(now: 10_000, control: &e)
        guard case .failed(let why)? = q.outcomes[peer.address.description] else { Issue.record("no timeout"); return }
        #expect(why.contains("no payload within"))
        #expect(queuedOpcodes(e) == [HCIDisconnect.opcode.rawValue])
        // The disconnection never completes: after 3 s the reader scans again anyway.
        var f = StackControl()
        q.timerFired(now: 13_000, control: &f)
        #expect(q.isIdle && queuedOpcodes(f).count == 2)
    }
}
