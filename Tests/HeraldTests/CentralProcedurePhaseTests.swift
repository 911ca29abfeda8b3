import Testing
import BluetoothHost
@testable import Herald

/// The central procedure's phases carry what each step learnt, and the step the owner acts on is
/// where the procedure is: a link's GATT client reports into the procedure and the owner reads `step`.
@Suite("Central procedure phases")
struct CentralProcedurePhaseTests {
    /// A procedure taken through MTU exchange and discovery of a Herald service holding
    /// `characteristics`; returns it and the step discovery ended with.
    static func discovered(_ characteristics: [(BluetoothUUID, UInt16)], immediateSend: Bool = false, payload: Bool = true,
                           sharing: Bool = false) -> (HeraldCentralProcedure, HeraldGATTStep) {
        var p = HeraldCentralProcedure(wantsImmediateSend: immediateSend, wantsPayload: payload, wantsSharing: sharing)
        _ = p.start()
        _ = p.didComplete(succeeded: true)
        p.didDiscover(service: HeraldIdentifiers.serviceUUID, start: 1, end: 9)
        _ = p.didComplete(succeeded: true)
        for (uuid, handle) in characteristics { p.didDiscover(characteristic: uuid, valueHandle: handle) }
        let step = p.didComplete(succeeded: true)
        return (p, step)
    }

    @Test func eachPhaseCarriesWhatDiscoveryFound() {
        var p = HeraldCentralProcedure(wantsImmediateSend: false, wantsPayload: true, wantsSharing: true)
        #expect(p.phase == .idle && p.step == .done(.failed))
        #expect(p.start() == .exchangeMTU && p.step == .exchangeMTU)
        p.didExchangeMTU(185)
        #expect(p.didComplete(succeeded: true) == .discoverServices)
        #expect(p.phase == .discoveringServices(found: nil))
        p.didDiscover(service: BluetoothUUID(uuid16: 0x1800), start: 1, end: 5)
        p.didDiscover(service: HeraldIdentifiers.serviceUUID, start: 0x10, end: 0x18)
        // The first Herald service is the one used.
        p.didDiscover(service: HeraldIdentifiers.registeredServiceUUID, start: 0x20, end: 0x28)
        #expect(p.phase == .discoveringServices(found: HeraldServiceRange(start: 0x10, end: 0x18)))
        #expect(p.didComplete(succeeded: true) == .discoverCharacteristics(start: 0x10, end: 0x18))
        p.didDiscover(characteristic: HeraldIdentifiers.androidSignalCharacteristicUUID, valueHandle: 0x14)
        p.didDiscover(characteristic: HeraldIdentifiers.payloadCharacteristicUUID, valueHandle: 0x12)
        #expect(p.os == .android)
        // Android: no sharing, so the payload read is the only work.
        let peer = HeraldPeerCharacteristics(payload: 0x12, signal: HeraldSignalCharacteristic(handle: 0x14, os: .android))
        #expect(p.didComplete(succeeded: true) == .readPayload(handle: 0x12))
        #expect(p.phase == .reading(peer, inOrder: true))
        #expect(!p.wantsSharing)
        p.didRead(offset: 0, value: simplePayload(1).span)
        #expect(p.didComplete(succeeded: true) == .done(.completed))
        #expect(p.payloadComplete && array(p.payload) == simplePayload(1))
        #expect(p.isFinished && p.result == .completed)
    }

    /// The walk tells its GATT client when it has what it needs: the first Herald service; in it, the
    /// payload and the iOS signal characteristic (an Android one may still be followed by an iOS one).
    @Test func theWalkSaysWhenItHasWhatItNeeds() {
        var p = HeraldCentralProcedure(wantsImmediateSend: false, wantsPayload: true, wantsSharing: true)
        _ = p.start()
        _ = p.didComplete(succeeded: true)
        p.didDiscover(service: BluetoothUUID(uuid16: 0x1800), start: 1, end: 5)
        #expect(!p.gattClientHasFoundWhatItNeeds)
        p.didDiscover(service: HeraldIdentifiers.serviceUUID, start: 0x10, end: 0x18)
        #expect(p.gattClientHasFoundWhatItNeeds)
        _ = p.didComplete(succeeded: true)
        #expect(!p.gattClientHasFoundWhatItNeeds)
        p.didDiscover(characteristic: HeraldIdentifiers.payloadCharacteristicUUID, valueHandle: 0x12)
        p.didDiscover(characteristic: HeraldIdentifiers.androidSignalCharacteristicUUID, valueHandle: 0x14)
        #expect(!p.gattClientHasFoundWhatItNeeds)
        p.didDiscover(characteristic: HeraldIdentifiers.iosSignalCharacteristicUUID, valueHandle: 0x16)
        #expect(p.gattClientHasFoundWhatItNeeds)
    }

    @Test func aWriteIsOnlyEverAskedOfAPeerWithASignalCharacteristic() {
        let (p, step) = Self.discovered([(HeraldIdentifiers.payloadCharacteristicUUID, 3)], immediateSend: true, payload: false,
                                        sharing: true)
        // No signal characteristic: neither write is asked for, and nothing else was wanted.
        #expect(step == .done(.completed))
        #expect(!p.wantsImmediateSend && !p.wantsSharing && !p.immediateSendWritten)
    }

    @Test func aWriteCarriesItsProgressAndAnIOSPeerGetsOneRequest() {
        var (p, step) = Self.discovered([(HeraldIdentifiers.payloadCharacteristicUUID, 3),
                                         (HeraldIdentifiers.iosSignalCharacteristicUUID, 5)], immediateSend: true, payload: false)
        #expect(step == .needMessage(.immediateSend) && p.mtu == 23)
        // Longer than one Write Request at this MTU: an iOS peer would refuse each fragment.
        #expect(p.load(length: 21) == .done(.completed))
        #expect(!p.immediateSendWritten)

        var (q, _) = Self.discovered([(HeraldIdentifiers.payloadCharacteristicUUID, 3),
                                      (HeraldIdentifiers.androidSignalCharacteristicUUID, 5)], immediateSend: true, payload: false)
        // An Android peer reassembles: 45 octets go as 20 + 20 + 5, each step naming its place.
        #expect(q.load(length: 45) == .writeSignal(handle: 5, offset: 0, length: 20))
        #expect(q.didComplete(succeeded: true) == .writeSignal(handle: 5, offset: 20, length: 20))
        #expect(q.step == .writeSignal(handle: 5, offset: 20, length: 20))
        #expect(q.didComplete(succeeded: true) == .writeSignal(handle: 5, offset: 40, length: 5))
        #expect(q.didComplete(succeeded: true) == .done(.completed))
        #expect(q.immediateSendWritten)
    }

    /// The sensor's path: the link's GATT client reports into the procedure in place, and the
    /// central sees that the operation ended from the client going idle, not from a field.
    @Test func theLinksGATTClientDrivesItsProcedure() {
        var h = CentralHarness<8, 2>()
        h.advert(address(1), AdvertData.heraldUUID16)
        guard let peer = h.central.pending?.address else { Issue.record("no connection attempt"); return }
        #expect(h.connect(peer, handle: 0x40) == .exchangeMTU)
        guard let s = h.central.linkIndex(handle: 0x40) else { Issue.record("no link"); return }
        var request = FixedBytes<247>()
        #expect(h.central.startGATT(.exchangeMTU, link: s, now: h.now, into: &request) == .send)
        #expect(array(request).first == 0x02)  // Exchange MTU Request
        // The peer's Exchange MTU Response (its receive MTU 64) ends the exchange: ATT_MTU 64.
        var reply = FixedBytes<247>()
        let outcome = h.central.receiveATT(pdu: [0x03, 0x40, 0x00].span, link: s, now: h.now, reply: &reply)
        #expect(outcome?.operationEnded == true)
        #expect(h.central.slots[s]?.procedure.mtu == 64)
        #expect(h.central.gattProcedureDidEnd(link: s, now: h.now, control: &h.control, delegate: &h.delegate) == .readPayloadByUUID)
        // A stray response while the client is idle ends nothing.
        let stray = h.central.receiveATT(pdu: [0x03, 0x40, 0x00].span, link: s, now: h.now, reply: &reply)
        #expect(stray?.operationEnded == false)
    }
}
