import BluetoothHost
import Testing
@testable import Herald

/// The payload read by its UUID before the discovery walk (Core 5.4 Vol 3 Part G 4.8.2): one round
/// trip after the MTU exchange instead of the walk's five, and the walk as before when it fails.
@Suite("Central: the payload read by its UUID first")
struct CentralReadByUUIDTests {
    @Test func theProcedureReadsFirstThenWalksOnlyForAWrite() {
        var p = HeraldCentralProcedure(wantsImmediateSend: false, wantsPayload: true, wantsSharing: false, readsPayloadFirst: true)
        #expect(p.start() == .exchangeMTU)
        #expect(p.didComplete(succeeded: true) == .readPayloadByUUID)
        let payload = simplePayload(5)
        p.didRead(offset: 0, value: Array(payload[0..<10]).span, handle: 0x21)
        p.didRead(offset: 10, value: Array(payload[10...]).span, handle: 0x21)
        // Nothing to write: done without a walk.
        #expect(p.didComplete(succeeded: true) == .done(.completed))
        #expect(p.payloadComplete && array(p.payload) == payload)

        // Sharing may be due: the walk follows the read, and the read is not repeated.
        var s = HeraldCentralProcedure(wantsImmediateSend: false, wantsPayload: true, wantsSharing: true, readsPayloadFirst: true)
        _ = s.start()
        _ = s.didComplete(succeeded: true)
        s.didRead(offset: 0, value: payload.span, handle: 0x21)
        #expect(s.didComplete(succeeded: true) == .discoverServices)
        #expect(s.payloadComplete && !s.wantsPayload)

        // An immediate send goes first, so the walk does too.
        var i = HeraldCentralProcedure(wantsImmediateSend: true, wantsPayload: true, wantsSharing: false, readsPayloadFirst: true)
        _ = i.start()
        #expect(i.didComplete(succeeded: true) == .discoverServices)
    }

    @Test func aFailedOrBrokenReadFallsBackToTheWalk() {
        let payload = simplePayload(6)
        // The server refused it (or the peer has no payload characteristic): the walk decides.
        var refused = HeraldCentralProcedure(wantsImmediateSend: false, wantsPayload: true, wantsSharing: false, readsPayloadFirst: true)
        _ = refused.start()
        _ = refused.didComplete(succeeded: true)
        #expect(refused.didComplete(succeeded: false) == .discoverServices)
        #expect(!refused.payloadComplete && refused.payload.count == 0)
        // Chunks of two attributes, or out of order, are not a payload.
        var mixed = HeraldCentralProcedure(wantsImmediateSend: false, wantsPayload: true, wantsSharing: false, readsPayloadFirst: true)
        _ = mixed.start()
        _ = mixed.didComplete(succeeded: true)
        mixed.didRead(offset: 0, value: Array(payload[0..<10]).span, handle: 0x21)
        mixed.didRead(offset: 10, value: Array(payload[10...]).span, handle: 0x30)
        #expect(mixed.didComplete(succeeded: true) == .discoverServices)
        #expect(!mixed.payloadComplete && mixed.payload.count == 0)
        // An empty value is no payload either.
        var empty = HeraldCentralProcedure(wantsImmediateSend: false, wantsPayload: true, wantsSharing: false, readsPayloadFirst: true)
        _ = empty.start()
        _ = empty.didComplete(succeeded: true)
        empty.didRead(offset: 0, value: [UInt8]().span, handle: 0x21)
        #expect(empty.didComplete(succeeded: true) == .discoverServices)
    }

    /// A peer whose server does not answer Read By Type is still read, by handle after the walk.
    @Test func aServerWithoutReadByTypeIsReadAfterTheWalk() {
        var h = CentralHarness<8, 2>()
        let a = address(1)
        h.advert(a, AdvertData.heraldUUID16)
        let payload = simplePayload(0x41)
        var peer = FakePeer.herald(payload: payload)
        peer.readsByType = false
        let steps = h.drive(0x40, peer: &peer, from: h.connect(a, handle: 0x40))
        #expect(steps == [.exchangeMTU, .readPayloadByUUID, .discoverServices, .discoverCharacteristics(start: 6, end: 12),
                          .readPayload(handle: 8), .done(.completed)])
        #expect(h.delegate.events.contains(.read(1, payload)))
        #expect(h.central.database[h.central.database.index(of: a)!]!.consecutiveFailures == 0)
    }

    /// Configured off, the central walks first, as the reference apps do.
    @Test func configuredOffTheCentralWalksFirst() {
        var config = HeraldSensorConfiguration.unspread
        config.readsPayloadByUUID = false
        var h = CentralHarness<8, 2>(configuration: config)
        let a = address(1)
        h.advert(a, AdvertData.heraldUUID16)
        var peer = FakePeer.herald(payload: simplePayload(0x42))
        let steps = h.drive(0x40, peer: &peer, from: h.connect(a, handle: 0x40))
        #expect(steps == [.exchangeMTU, .discoverServices, .discoverCharacteristics(start: 6, end: 12),
                          .readPayload(handle: 8), .done(.completed)])
    }
}

/// A link we made whose peer never answers anything (Bumble's virtual radio: its host never saw the
/// link) is closed after `firstAnswerTimeout`, not the 30 s ATT timeout.
@Suite("Central: a link whose peer never answers")
struct CentralFirstAnswerTests {
    @Test func aSilentNewLinkIsClosedAsAFailedAttempt() {
        var h = CentralHarness<8, 2>()
        let a = address(1)
        h.advert(a, AdvertData.heraldUUID16)
        #expect(h.connect(a, handle: 0x40) == .exchangeMTU)
        #expect(h.central.gattDeadline == h.now + 5_000)
        h.now += 4_999
        h.central.tick(now: h.now, control: &h.control, delegate: &h.delegate)
        #expect(h.control.disconnects.isEmpty)
        h.now += 1
        h.central.tick(now: h.now, control: &h.control, delegate: &h.delegate)
        #expect(h.control.disconnects == [0x40])
        h.central.didDisconnect(handle: 0x40, reason: .remoteUserTerminated, now: h.now, control: &h.control)
        #expect(h.central.database[h.central.database.index(of: a)!]!.consecutiveFailures == 1)
    }

    @Test func aPeerThatAnsweredIsLeftToTheATTTimeout() {
        var h = CentralHarness<8, 2>()
        let a = address(1)
        h.advert(a, AdvertData.heraldUUID16)
        _ = h.connect(a, handle: 0x40)
        guard let s = h.central.linkIndex(handle: 0x40) else { Issue.record("no link"); return }
        var request = FixedBytes<247>()
        #expect(h.central.startGATT(.exchangeMTU, link: s, now: h.now, into: &request) == .send)
        var reply = FixedBytes<247>()
        _ = h.central.receiveATT(pdu: [0x03, 0x40, 0x00].span, link: s, now: h.now, reply: &reply)
        h.now += 10_000
        h.central.tick(now: h.now, control: &h.control, delegate: &h.delegate)
        #expect(h.control.disconnects.isEmpty)
        #expect(h.central.gattDeadline == nil)
    }
}
