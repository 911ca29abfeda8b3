import Testing
import BluetoothHost
@testable import Herald

@Suite("Sensor payload sharing, signal messages and the central procedure")
struct SensorSharingTests {
    /// Files a device with a payload and OS directly, as if read earlier.
    static func file<let D: Int, let L: Int>(_ h: inout CentralHarness<D, L>, _ addr: DeviceAddress, payload: [UInt8]?,
                                             os: HeraldDeviceOS, kind: HeraldDeviceKind = .herald, seen: UInt64) -> Int {
        let r = h.central.database.observe(address: addr, pseudoAddress: nil, kind: kind, now: seen) { _ in }
        h.central.database.entries[r.index]!.lastSeen = seen
        h.central.database.entries[r.index]!.os = os
        h.central.database.entries[r.index]!.rssi = -66
        if let p = payload { _ = h.central.database.setPayload(p.span, at: r.index, now: seen) }
        return r.index
    }

    @Test func sharingListHasRecentIOSAndReceiveOnlyPayloadsButNeverThePeersOwn() {
        var h = CentralHarness<16, 2>()
        h.now = 400_000
        let peerPayload = simplePayload(0x70)
        let peer = Self.file(&h, address(1), payload: peerPayload, os: .ios, seen: 400_000)
        _ = Self.file(&h, address(2), payload: simplePayload(0x10), os: .ios, seen: 390_000)                 // shared
        _ = Self.file(&h, address(3), payload: simplePayload(0x20), os: .android, seen: 399_000)             // Android: no
        _ = Self.file(&h, address(4), payload: simplePayload(0x30), os: .ios, seen: 99_000)                  // 5 min + 1 s ago: no
        _ = Self.file(&h, address(5), payload: simplePayload(0x40), os: .unknown, kind: .receiveOnly, seen: 100_000) // exactly 5 min: yes
        _ = Self.file(&h, address(6), payload: nil, os: .ios, seen: 399_000)                                 // no payload yet
        var list = FixedBytes<510>()
        let n = h.central.sharingList(for: peer, now: h.now, into: &list)
        #expect(n == 2)
        #expect(array(list) == simplePayload(0x10) + simplePayload(0x40))
        // Another entry holding the peer's own payload (a stale address) is never shared back to it.
        var db = h.central.database
        let r = db.observe(address: address(7), pseudoAddress: nil, kind: .herald, now: 400_000) { _ in }
        db.entries[r.index]!.os = .ios
        db.entries[r.index]!.payload = PayloadBytes(peerPayload.span)
        db.entries[r.index]!.payloadTime = 400_000
        h.central.database = db
        var list2 = FixedBytes<510>()
        #expect(h.central.sharingList(for: peer, now: h.now, into: &list2) == 2)
        #expect(array(list2) == array(list))
    }

    @Test func sharingListStopsAt510Bytes() {
        var h = CentralHarness<32, 2>()
        let peer = Self.file(&h, address(0), payload: simplePayload(0xF0), os: .ios, seen: 1_000)
        for i in 1...30 { _ = Self.file(&h, address(UInt8(i)), payload: simplePayload(UInt8(i)), os: .ios, seen: 1_000) }
        var list = FixedBytes<510>()
        let n = h.central.sharingList(for: peer, now: 1_000, into: &list)
        // 24 × 21 = 504 bytes; a 25th would make 525.
        #expect(n == 24)
        #expect(list.count == 504)
        #expect(!list.overflowed)
    }

    @Test func iosPeerGetsTheCallingCardAtMostEvery15Seconds() {
        var h = CentralHarness<16, 2>()
        _ = Self.file(&h, address(2), payload: simplePayload(0x10), os: .ios, seen: 1_000)
        let a = address(1)
        h.advert(a, AdvertData.heraldUUID16, rssi: -48)
        var peer = FakePeer.herald(payload: simplePayload(0x70), ios: true, mtu: 185)
        let steps = h.drive(1, peer: &peer, from: h.connect(a, handle: 1))
        // 03, RSSI -48 (0xFFD0 LE), length 21, then the one payload: 26 bytes in one Write Request,
        // as the reference iOS peripheral decodes each request on its own.
        let expected: [UInt8] = [0x03, 0xD0, 0xFF, 0x15, 0x00] + simplePayload(0x10)
        #expect(steps == [.exchangeMTU, .readPayloadByUUID, .discoverServices, .discoverCharacteristics(start: 6, end: 12),
                          .writeSignal(handle: 10, offset: 0, length: 26), .done(.completed)])
        #expect(peer.writes == [expected])
        let i = h.central.database.index(of: a)!
        #expect(h.central.database[i]!.lastShared == 1_000)
        h.central.didDisconnect(handle: 1, reason: .remoteUserTerminated, now: h.now, control: &h.control)

        // 14.999 s later an immediate send connects again: no sharing yet.
        h.now = 15_999
        let t = h.central.database[i]!.target
        #expect(h.central.immediateSend([0x42].span, to: t, now: h.now, control: &h.control))
        h.advert(a, AdvertData.heraldUUID16, rssi: -48)
        var peer2 = FakePeer.herald(payload: simplePayload(0x70), ios: true, mtu: 185)
        _ = h.drive(2, peer: &peer2, from: h.connect(a, handle: 2))
        #expect(peer2.joinedWrites == [0x04, 0x01, 0x00, 0x42])
        h.central.didDisconnect(handle: 2, reason: .remoteUserTerminated, now: h.now, control: &h.control)

        // At 15 s it is due again.
        h.now = 16_000
        #expect(h.central.immediateSend([0x43].span, to: t, now: h.now, control: &h.control))
        h.advert(a, AdvertData.heraldUUID16, rssi: -48)
        var peer3 = FakePeer.herald(payload: simplePayload(0x70), ios: true, mtu: 185)
        let steps3 = h.drive(3, peer: &peer3, from: h.connect(a, handle: 3))
        // At ATT_MTU 185 each message fits one write (182 octets).
        #expect(steps3.filter { if case .writeSignal = $0 { return true } else { return false } }.count == 2)
        #expect(peer3.writes == [[0x04, 0x01, 0x00, 0x43], expected])
    }

    /// The reference iOS peripheral refuses a write whose value is not a whole message, so an iOS
    /// peer never gets fragments: the sharing list is cut to whole payloads that fit ATT_MTU-3 with
    /// the 5-octet header, and what cannot fit at all is not sent (nor kept pending for ever).
    @Test func iosPeersGetEachMessageInOneWrite() {
        var h = CentralHarness<16, 2>()
        for k in 0..<4 { _ = Self.file(&h, address(UInt8(2 + k)), payload: simplePayload(UInt8(0x10 + 0x20 * k)), os: .ios, seen: 1_000) }
        let a = address(1)
        h.advert(a, AdvertData.heraldUUID16, rssi: -48)
        // ATT_MTU 50: 47 octets per write, room for two 21-octet payloads after the header.
        var peer = FakePeer.herald(payload: simplePayload(0x70), ios: true, mtu: 50)
        _ = h.drive(1, peer: &peer, from: h.connect(a, handle: 1))
        #expect(peer.writes.count == 1)
        #expect(peer.writes[0].count == 5 + 2 * 21)
        #expect(Array(peer.writes[0][3..<5]) == [42, 0])
        h.central.didDisconnect(handle: 1, reason: .remoteUserTerminated, now: h.now, control: &h.control)

        // At ATT_MTU 23 (20 octets) no payload fits: nothing is written, and a 30-octet immediate send
        // for this peer is dropped rather than fragmented or left pending.
        let b = address(9)
        h.advert(b, AdvertData.heraldUUID16, rssi: -48)
        let i = h.central.database.index(of: b)!
        #expect(h.central.immediateSend([UInt8](repeating: 0x42, count: 30).span, to: h.central.database[i]!.target,
                                        now: h.now, control: &h.control))
        var small = FakePeer.herald(payload: simplePayload(0x71), ios: true)
        let steps = h.drive(2, peer: &small, from: h.connect(b, handle: 2))
        #expect(small.writes.isEmpty)
        #expect(steps.last == .done(.completed))
        #expect(h.central.database[i]!.immediateSendPending == false)
    }

    @Test func androidPeersGetNoSharing() {
        var h = CentralHarness<16, 2>()
        _ = Self.file(&h, address(2), payload: simplePayload(0x10), os: .ios, seen: 1_000)
        h.advert(address(1), AdvertData.heraldUUID16)
        var peer = FakePeer.herald(payload: simplePayload(0x70), ios: false)
        _ = h.drive(1, peer: &peer, from: h.connect(address(1), handle: 1))
        #expect(peer.writes.isEmpty)
    }

    @Test func receivedSignalMessagesBecomeEvents() throws {
        var h = CentralHarness<8, 2>()
        let writer = address(9)
        // A receive-only device writes its payload: a new target, payload read.
        let p = simplePayload(0x55)
        let payloadMessage: [UInt8] = [0x01, 0x15, 0x00] + p
        #expect(try h.peerWrites(payloadMessage, from: writer, now: 2_000) == nil)
        #expect(h.delegate.events == [.detect(1), .available(true, 1), .read(1, p)])
        #expect(h.central.database[0]!.kind == .receiveOnly)
        #expect(h.central.database[0]!.lastSeen == 2_000)
        // RSSI, payload sharing (two payloads), immediate send.
        #expect(try h.peerWrites([0x02, 0xC4, 0xFF], from: writer, now: 2_001) == nil)
        let shared: [UInt8] = [0x03, 0xC4, 0xFF, 0x2A, 0x00] + simplePayload(1) + simplePayload(2)
        #expect(try h.peerWrites(shared, from: writer, now: 2_002) == nil)
        #expect(try h.peerWrites([0x04, 0x02, 0x00, 0xAB, 0xCD], from: writer, now: 2_003) == nil)
        // The share, then per shared payload (integration guide): didRead from a generated target,
        // didMeasure with the RSSI the sharer sent (-60), didMeasure:withPayload.
        #expect(Array(h.delegate.events.suffix(9)) == [
            .measure(1, -60, nil), .share(1, [simplePayload(1), simplePayload(2)]),
            .read(2, simplePayload(1)), .measure(2, -60, nil), .measureWithPayload(2, -60, simplePayload(1)),
            .read(3, simplePayload(2)), .measure(3, -60, nil), .measureWithPayload(3, -60, simplePayload(2)),
            .receive(1, [0xAB, 0xCD])])
        // Generated targets are not filed.
        #expect(h.central.database.count == 1)
        // Receive-only devices are never connected to…
        #expect(h.control.connects.isEmpty)
        // …until they advertise; then they are Herald devices, connected once the payload they gave
        // us is older than the payload update interval.
        h.now = 2_004
        h.advert(writer, AdvertData.heraldUUID16)
        #expect(h.central.database[0]!.kind == .herald)
        #expect(h.central.database[0]!.connectable)
        #expect(h.control.connects.isEmpty)
        h.now = 2_000 + 360_000
        h.advert(writer, AdvertData.heraldUUID16)
        #expect(h.control.connects == [writer])
        // Malformed (longer than it declares; a shared list with 3 stray octets after its whole
        // payloads, which cannot be split): refused with Invalid Attribute Value Length (Core 5.4
        // Vol 3 Part F 3.4.1.1), no event, nothing filed.
        let events = h.delegate.events.count
        #expect(try h.peerWrites([0x04, 0x01, 0x00, 0xAB, 0xCD], from: address(10), now: 3_000) == .invalidAttributeValueLength)
        let stray: [UInt8] = [0x03, 0xC4, 0xFF, 0x2D, 0x00] + simplePayload(1) + simplePayload(2) + [0x10, 0x00, 0x00]
        #expect(try h.peerWrites(stray, from: address(11), now: 3_000) == .invalidAttributeValueLength)
        #expect(h.delegate.events.count == events)
        #expect(h.central.database.count == 1)
    }

    /// The signal characteristic's comment, `HeraldCentral.peerDidWrite(payload:)`: a payload longer
    /// than a device's stored capacity is ignored. Its writer was filed and detected before the
    /// capacity check, so it became a target with no payload.
    @Test func anOversizedWrittenPayloadDetectsNobody() throws {
        var h = CentralHarness<8, 2>()
        let long = [UInt8](repeating: 0x5A, count: PayloadBytes.capacity + 1)
        let message: [UInt8] = [0x01, UInt8(long.count & 0xFF), UInt8(long.count >> 8)] + long
        #expect(try h.peerWrites(message, from: address(9), now: 2_000) == nil)
        #expect(h.delegate.events.isEmpty)
        #expect(h.central.database.count == 0)
        // One octet shorter is a payload like any other.
        let fits = Array(long.dropLast())
        #expect(try h.peerWrites([0x01, UInt8(fits.count & 0xFF), UInt8(fits.count >> 8)] + fits, from: address(9), now: 2_001) == nil)
        #expect(h.delegate.events == [.detect(1), .available(true, 1), .read(1, fits)])
    }

    @Test func aSharedPayloadWeAlreadyHoldIsReportedUnderItsDevice() throws {
        var h = CentralHarness<8, 2>()
        // Device 1 read directly; a writer then shares its payload with RSSI -70.
        h.advert(address(1), AdvertData.heraldUUID16)
        var peer = FakePeer.herald(payload: simplePayload(0x70))
        _ = h.drive(1, peer: &peer, from: h.connect(address(1), handle: 1))
        let shared: [UInt8] = [0x03, 0xBA, 0xFF, 0x15, 0x00] + simplePayload(0x70)
        #expect(try h.peerWrites(shared, from: address(2), now: 5_000) == nil)
        #expect(Array(h.delegate.events.suffix(3)) == [.read(1, simplePayload(0x70)), .measure(1, -70, nil),
                                                      .measureWithPayload(1, -70, simplePayload(0x70))])
    }

    @Test func sharedPayloadsSplitWithTheSupplier() {
        let list = simplePayload(1) + simplePayload(2) + [0x99]
        let s = SharedPayloads(splitting: list.span, with: SimplePayloadLayout())
        let count = s.count, trailing = s.trailingBytes
        #expect(count == 2)
        #expect(trailing == 1)
        #expect(array(s[1]) == simplePayload(2))
    }

    @Test func delegatePairFansOutEveryEvent() {
        var pair = SensorDelegatePair(RecordingDelegate(recordsPeripheral: true),
                                      SensorDelegatePair(RecordingDelegate(recordsPeripheral: true), NoSensorDelegate()))
        // Each of SensorDelegate's own eight methods once, in an order of their own.
        let t = TargetIdentifier(4)
        let list = simplePayload(1) + simplePayload(2)
        pair.sensor(.ble, didDetect: t)
        pair.sensor(.ble, didMeasure: Proximity(value: -61, calibration: -8), fromTarget: t)
        pair.sensor(.ble, didRead: [1, 2].span, fromTarget: t)
        pair.sensor(.ble, didShare: SharedPayloads(splitting: list.span, with: SimplePayloadLayout()), fromTarget: t)
        pair.sensor(.ble, didReceive: [3].span, fromTarget: t)
        pair.sensor(.ble, didMeasure: Proximity(value: -62), fromTarget: t, withPayload: [5, 6].span)
        pair.sensor(.array, didUpdateState: .on)
        pair.sensor(.ble, available: false, didDeleteOrDetect: t)
        // And each of the peripheral half's twelve (`SensorDelegate` is a `HeraldPeripheralDelegate`).
        let link = HeraldLink(handle: 0x41, role: .peripheral, peer: address(0x41))
        pair.heraldPeripheral(didConnect: link)
        pair.heraldPeripheral(didUpdatePHY: LinkPHY(tx: .le2M, rx: .le1M), on: link)
        pair.heraldPeripheral(didServePayload: [7].span, to: link)
        pair.heraldPeripheral(didReceivePayload: [8].span, from: link)
        pair.heraldPeripheral(didMeasureRSSI: -3, from: link)
        pair.heraldPeripheral(didShare: SharedPayloadIterator(list.span), rssi: -4, from: link)
        pair.heraldPeripheral(didReceiveImmediateSend: [9].span, from: link)
        pair.heraldPeripheral(didKeepAwake: link)
        pair.heraldPeripheral(didRejectSignalWrite: [0x0A].span, from: link)
        pair.heraldPeripheral(didChangeAddress: BDAddress(displayOrder: 0x4B, 1, 2, 3, 4, 5), unixMillis: 6)
        pair.heraldPeripheral(commandFailed: HCIOpcode(rawValue: 0x2017), status: HCIStatus(rawValue: 0x01))
        pair.heraldPeripheral(didDisconnect: link, reason: .remoteUserTerminated)
        let expected: [SensorEvent] = [.detect(4), .measure(4, -61, -8), .read(4, [1, 2]), .share(4, [simplePayload(1), simplePayload(2)]),
                                       .receive(4, [3]), .measureWithPayload(4, -62, [5, 6]), .state(.array, .on), .available(false, 4),
                                       .peripheral("connect", 0x41, []), .peripheral("phy", 0x41, [2, 1]), .peripheral("serve", 0x41, [7]),
                                       .peripheral("payload", 0x41, [8]), .peripheral("rssi", 0x41, [0xFD]),
                                       .peripheral("share", 0x41, list + [0xFC]), .peripheral("immediate", 0x41, [9]),
                                       .peripheral("awake", 0x41, []), .peripheral("reject", 0x41, [0x0A]),
                                       .peripheral("address", 0, [5, 6]), .peripheral("failed", 0x2017, [1]),
                                       .peripheral("disconnect", 0x41, [0x13])]
        #expect(pair.first.events == expected)
        #expect(pair.second.first.events == expected)
    }

    // MARK: Procedure edge cases

    @Test func procedureFailsOnMissingPayloadCharacteristicAndOnErrors() {
        var p = HeraldCentralProcedure(wantsImmediateSend: false, wantsPayload: true, wantsSharing: false)
        #expect(p.start() == .exchangeMTU)
        #expect(p.didComplete(succeeded: false) == .discoverServices)  // MTU refusal is harmless
        p.didDiscover(service: BluetoothUUID(uuid16: 0xFCF6), start: 0x20, end: 0x28)
        #expect(p.didComplete(succeeded: true) == .discoverCharacteristics(start: 0x20, end: 0x28))
        p.didDiscover(characteristic: HeraldIdentifiers.iosSignalCharacteristicUUID, valueHandle: 0x22)
        #expect(p.didComplete(succeeded: true) == .done(.noHeraldService))

        // A message offered when none was asked for ends the work rather than being written.
        var r = HeraldCentralProcedure(wantsImmediateSend: true, wantsPayload: true, wantsSharing: false)
        _ = r.start()
        #expect(r.load(length: 4) == .done(.failed))
        #expect(r.skip() == .done(.failed))

        var q = HeraldCentralProcedure(wantsImmediateSend: false, wantsPayload: true, wantsSharing: false)
        _ = q.start()
        _ = q.didComplete(succeeded: true)
        #expect(q.didComplete(succeeded: false) == .done(.failed))
    }

    @Test func procedureRejectsOutOfOrderAndOversizedReads() {
        func readyToRead() -> HeraldCentralProcedure {
            let (p, step) = CentralProcedurePhaseTests.discovered([(HeraldIdentifiers.payloadCharacteristicUUID, 3)])
            #expect(step == .readPayload(handle: 3))
            return p
        }
        var gap = readyToRead()
        gap.didRead(offset: 0, value: [UInt8](repeating: 1, count: 22).span)
        gap.didRead(offset: 30, value: [1].span)
        #expect(gap.didComplete(succeeded: true) == .done(.failed))

        var big = readyToRead()
        var offset = 0
        while offset <= HeraldSensorLimits.payloadCapacity {
            big.didRead(offset: offset, value: [UInt8](repeating: 1, count: 22).span)
            offset += 22
        }
        #expect(big.didComplete(succeeded: true) == .done(.failed))

        var empty = readyToRead()
        #expect(empty.didComplete(succeeded: true) == .done(.failed))

        var good = readyToRead()
        good.didRead(offset: 0, value: simplePayload(3).span)
        #expect(good.didComplete(succeeded: true) == .done(.completed))
        #expect(array(good.payload) == simplePayload(3))
    }

    @Test func simplePayloadDataSupplierMatchesTheKeySchedule() throws {
        let key = [UInt8](repeating: 0x5A, count: 2048)
        let header = PayloadHeader(protocolAndVersion: 0x10, countryCode: 826, stateCode: 0)
        var s = try SimplePayloadDataSupplier(secretKey: key.span, header: header)
        // Before the epoch there is no key: nothing is written.
        var none = ArraySink()
        #expect(!s.writePayload(at: KeyEpoch.standard.unixSeconds - 1, to: &none))
        #expect(none.bytes.isEmpty)
        // Epoch + 1 day + 2 h (period 20 of day 1), asked by UTC second as the peripheral asks.
        let t = KeyEpoch.standard.unixSeconds + 86_400 + 7_200
        var out = ArraySink()
        #expect(s.writePayload(at: t, to: &out))
        var expected = ArraySink()
        var reference = SimplePayloadSupplier(header: header)
        let wrote = try reference.writePayload(at: t, secretKey: key.span, to: &expected)
        #expect(wrote)
        #expect(out.bytes == expected.bytes)
        #expect(out.bytes.count == 21)
        #expect(throws: DecodeError.badLength(field: "secret key", declared: 100, limit: 2048)) {
            _ = try SimplePayloadDataSupplier(secretKey: Array(key.prefix(100)).span, header: header)
        }
    }

    /// A key read in place (flash on a microcontroller) gives exactly the payloads of a copied one,
    /// and holds only a pointer.
    @Test func keyReadInPlaceMatchesTheCopiedKey() throws {
        let key = (0..<2048).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
        let header = PayloadHeader(protocolAndVersion: 0x10, countryCode: 826, stateCode: 0)
        let t = KeyEpoch.standard.unixSeconds + 3 * 86_400 + 600
        var copied = try SimplePayloadDataSupplier(secretKey: key.span, header: header)
        key.withUnsafeBufferPointer { buffer in
            let store = StaticSecretKey(unsafeStart: buffer.baseAddress!)
            var inPlace = SimplePayloadDataSupplier(key: store, header: header)
            var a = ArraySink(), b = ArraySink()
            #expect(copied.writePayload(at: t, to: &a) && inPlace.writePayload(at: t, to: &b))
            #expect(a.bytes.count == 21 && a.bytes == b.bytes)
        }
        #expect(MemoryLayout<StaticSecretKey>.size == MemoryLayout<UnsafeRawPointer>.size)
        #expect(MemoryLayout<InlineSecretKey>.size == 2048)
    }
}

/// Found by Fuzz/HeraldCentral: a payload signal message with no payload (01 00 00) was filed as an
/// empty payload and reported by didRead; every such writer would have merged into one device.
@Suite struct FuzzRegressionCentralTests {
    @Test func anEmptyWrittenPayloadIsRefused() throws {
        var h = CentralHarness<8, 2>()
        // A well-formed message (the writer sees success) that names nobody: nothing filed or reported.
        #expect(try h.peerWrites([0x01, 0x00, 0x00], from: address(1), now: 1_000) == nil)
        h.central.peerDidWrite(payload: [UInt8]().span, from: address(2), now: 1_000, delegate: &h.delegate)
        #expect(h.central.database.count == 0)
        #expect(h.delegate.events.isEmpty)
        var db = HeraldDeviceDatabase<2>()
        _ = db.observe(address: address(3), pseudoAddress: nil, kind: .herald, now: 0) { _ in }
        #expect(db.setPayload([UInt8]().span, at: 0, now: 1) == nil)
    }
}
