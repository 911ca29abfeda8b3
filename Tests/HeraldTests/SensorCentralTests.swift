import Testing
import BluetoothHost
@testable import Herald

@Suite("Sensor central: discovery, reading, scheduling")
struct SensorCentralTests {
    @Test func startScansContinuouslyAndReportsEveryAdvert() {
        // Active throughout (the reference apps' scan): the scan type's own rules are in SensorScanningTests.
        var config = HeraldSensorConfiguration.unspread
        config.activeScanHold = nil
        var h = CentralHarness<8, 2>(configuration: config)
        #expect(h.control.actions == [.scan(.active)])
        let a = address(1)
        h.advert(a, AdvertData.heraldUUID128WithTx, rssi: -61)
        h.now += 100
        h.advert(a, AdvertData.heraldUUID128WithTx, rssi: -70)
        #expect(h.delegate.events == [.detect(1), .available(true, 1), .measure(1, -61, -8), .measure(1, -70, -8)])
        // No duty cycle configured: nothing to toggle. The deadline is the purge, during the connection
        // attempt the advert started as after it (the attempt's timer is the stack's).
        #expect(h.central.nextDeadline == 1_000 + 60_000)
        h.central.didFailToConnect(to: a, now: 9_000, control: &h.control)
        #expect(h.central.nextDeadline == 1_000 + 60_000)
    }

    @Test func newHeraldDeviceIsConnectedReadAndDisconnected() {
        var h = CentralHarness<8, 2>()
        let a = address(1)
        h.advert(a, AdvertData.heraldUUID16, rssi: -55)
        #expect(h.control.connects == [a])
        #expect(h.control.actions.last == .connect(a, timeout: 8_000))
        // One attempt at a time: a second advert does not start another.
        h.advert(a, AdvertData.heraldUUID16, rssi: -55)
        #expect(h.control.connects == [a])

        let payload = simplePayload(0x40)
        var peer = FakePeer.herald(payload: payload)
        let steps = h.drive(0x40, peer: &peer, from: h.connect(a, handle: 0x40))
        // The payload is read by its UUID before any discovery; the walk that follows finds an Android
        // peer (its signal characteristic), which gets no payload sharing, so the work is done.
        #expect(steps == [.exchangeMTU, .readPayloadByUUID, .discoverServices, .discoverCharacteristics(start: 6, end: 12),
                          .done(.completed)])
        #expect(h.control.disconnects == [0x40])
        #expect(h.delegate.events.contains(.read(1, payload)))
        #expect(h.delegate.events.last == .measureWithPayload(1, -55, payload))
        let d = h.central.database[0]!
        #expect(array(d.payload) == payload)
        #expect(d.payloadTime == 1_000)
        #expect(d.os == .android)
        #expect(d.hasHeraldService == true)
        #expect(peer.writes.isEmpty)

        h.central.didDisconnect(handle: 0x40, reason: .remoteUserTerminated, now: h.now, control: &h.control)
        #expect(h.central.openLinks == 0)
        // Fresh payload: adverts are measured with it, no new connection.
        h.now += 5_000
        h.advert(a, AdvertData.heraldUUID16, rssi: -57)
        #expect(h.control.connects == [a])
        #expect(h.delegate.events.last == .measureWithPayload(1, -57, payload))
        // Once older than the payload update interval it is read again.
        h.now = 1_000 + 360_000
        h.advert(a, AdvertData.heraldUUID16, rssi: -57)
        #expect(h.control.connects == [a, a])
    }

    @Test func appleDeviceIsInterrogatedAndAdoptedWhenItHasTheService() {
        var h = CentralHarness<8, 2>()
        let a = address(2)
        h.advert(a, AdvertData.apple)
        #expect(h.control.connects == [a])
        #expect(h.central.database[0]!.kind == .appleToCheck)
        var peer = FakePeer.herald(payload: simplePayload(1), ios: true)
        let steps = h.drive(1, peer: &peer, from: h.connect(a, handle: 1))
        #expect(steps.last == .done(.completed))
        #expect(h.central.database[0]!.os == .ios)
        #expect(h.central.database[0]!.hasHeraldService == true)
    }

    @Test func appleDevicesTheReferenceFilterRulesOutAreNotConnectedToButCounted() {
        var h = CentralHarness<8, 2>()
        // Apple TV: Nearby Info with action 0x14 (reference deviceFilterFeaturePatterns "^10....14").
        let appleTV: [UInt8] = [0x02, 0x01, 0x1A, 0x0A, 0xFF, 0x4C, 0x00, 0x10, 0x05, 0x08, 0x14, 0x1B, 0xBA, 0x69]
        h.advert(address(5), appleTV)
        h.advert(address(5), appleTV)
        #expect(h.control.connects.isEmpty)
        #expect(h.central.database.count == 0)
        #expect(h.delegate.events.isEmpty)
        #expect(h.central.ignoredAppleAdverts == 2)
        // An Apple device the filter lets through is still connected to, to check.
        h.advert(address(6), AdvertData.apple)
        #expect(h.control.connects == [address(6)])
    }

    @Test func notHeraldAdvertsAreIgnored() {
        var h = CentralHarness<8, 2>()
        h.advert(address(3), AdvertData.other)
        // An iBeacon is Apple but never a phone.
        h.advert(address(4), [0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15] + [UInt8](repeating: 0x11, count: 22))
        #expect(h.central.database.count == 0)
        #expect(h.delegate.events.isEmpty)
        #expect(h.control.connects.isEmpty)
    }

    @Test func malformedAdvertIsCountedNotFiled() {
        var h = CentralHarness<8, 2>()
        h.advert(address(3), [0x05, 0x03, 0xF6])
        #expect(h.central.malformedAdverts == 1)
        #expect(h.central.database.count == 0)
    }

    @Test func nonConnectableAdvertsAreMeasuredButNotConnected() {
        var h = CentralHarness<8, 2>()
        h.advert(address(5), AdvertData.heraldUUID16, kind: 0x10)  // ADV_NONCONN_IND
        #expect(h.central.database.count == 1)
        #expect(h.control.connects.isEmpty)
    }

    @Test func contactEventEndsAtLastRSSINotAtDisconnection() {
        var h = CentralHarness<8, 2>()
        let a = address(6)
        h.advert(a, AdvertData.heraldUUID16)
        h.now = 5_000
        h.advert(a, AdvertData.heraldUUID16)
        h.now = 6_000
        var peer = FakePeer.herald(payload: simplePayload(9))
        _ = h.drive(7, peer: &peer, from: h.connect(a, handle: 7))
        h.now = 9_000
        h.central.didDisconnect(handle: 7, reason: .remoteUserTerminated, now: h.now, control: &h.control)
        var d = h.central.database[0]!
        #expect(d.contactEvent.start == 1_000)
        #expect(d.contactEvent.end == 5_000)
        h.now = 12_000
        h.advert(a, AdvertData.heraldUUID16)
        d = h.central.database[0]!
        #expect(d.contactEvent.end == 12_000)
        #expect(d.contactEvent.start == 1_000)
    }

    @Test func connectionLimitDropsTheOldestLink() {
        var h = CentralHarness<8, 2>()
        let a = address(1), b = address(2), c = address(3)
        h.advert(a, AdvertData.heraldUUID16)
        _ = h.connect(a, handle: 1)
        h.now += 1_000
        h.advert(b, AdvertData.heraldUUID16)
        _ = h.connect(b, handle: 2)
        #expect(h.central.openLinks == 2)
        h.now += 1_000
        h.advert(c, AdvertData.heraldUUID16)
        // Full, and both links younger than `firstAnswerTimeout`: left to finish their work.
        #expect(h.control.disconnects.isEmpty)
        h.now += 3_000
        h.advert(c, AdvertData.heraldUUID16)
        // Full: the oldest link (handle 1), up 5 s, is dropped, and nothing else until it is gone.
        #expect(h.control.disconnects == [1])
        #expect(h.control.connects == [a, b])
        h.advert(c, AdvertData.heraldUUID16)
        #expect(h.control.disconnects == [1])
        // The dropped link's work stops; its end is not held against the peer.
        #expect(h.complete(1) == nil)
        h.central.didDisconnect(handle: 1, reason: .remoteUserTerminated, now: h.now, control: &h.control)
        #expect(h.control.connects == [a, b, c])
        #expect(h.central.database[h.central.database.index(of: a)!]!.consecutiveFailures == 0)
        // The peer still needs its payload: it is connected again once heard and a link is free.
    }

    @Test func connectionAttemptUsesOurTimeoutAndOnlyTheStacksReportEndsIt() {
        var config = HeraldSensorConfiguration.unspread
        config.connectionTimeout = 5_000
        config.activeScanHold = nil  // its deadline is SensorScanningTests' business
        var h = CentralHarness<8, 2>(configuration: config)
        let a = address(1)
        h.advert(a, AdvertData.heraldUUID16)
        #expect(h.control.actions.last == .connect(a, timeout: 5_000))
        // a in the central role on a link of its own is read over that link; our attempt goes on.
        #expect(h.central.didConnect(handle: 4, peer: a, isCentral: false, now: h.now, control: &h.control) != nil)
        #expect(h.central.pending != nil)
        // The attempt's timer is the stack's: the central keeps none, and waits for its report. Its
        // deadlines are the end of the read's pause of the scan (`scanPauseLimit`), then the purge.
        let start = h.now
        #expect(h.central.nextDeadline == start + HeraldCentral<8, 2>.scanPauseLimit)
        h.now += HeraldCentral<8, 2>.scanPauseLimit
        h.central.tick(now: h.now, control: &h.control, delegate: &h.delegate)
        #expect(h.central.nextDeadline == start + config.purgeInterval)
        h.now += 60_000
        h.central.tick(now: h.now, control: &h.control, delegate: &h.delegate)
        #expect(h.central.pending != nil)
        // The stack ends its one attempt with a central link from the attempt's address alone
        // (`LEStack.attempt(endedBy:)`): one from an address we did not ask for is the late link of an
        // attempt already ended. It is closed, not read, and our attempt goes on to its own end.
        #expect(h.connect(address(9), handle: 3) == nil)
        #expect(h.control.disconnects.last == 3)
        #expect(h.central.pending != nil)
        #expect(h.connect(a, handle: 5) == .exchangeMTU)
        #expect(h.central.pending == nil)
    }

    /// A peer that connects to us before we hear it advertise is not connected to a second time
    /// once its advert arrives: two links between one pair of devices help nobody (seen on Zephyr's
    /// controllers: two wearables, each reading the other over its own link as well as the peer's).
    @Test func aPeerLinkedToUsBeforeItsFirstAdvertIsNotConnectedToAgain() {
        var h = CentralHarness<8, 2>()
        let a = address(1)
        #expect(h.central.didConnect(handle: 7, peer: a, isCentral: false, now: h.now, control: &h.control) == nil)
        h.advert(a, AdvertData.heraldUUID16)
        #expect(h.control.connects.isEmpty)
        let i = h.central.database.index(of: a)
        #expect(i.flatMap { h.central.database[$0]?.inboundLink } == 7)
        // Once that link is gone, the next advert connects.
        h.central.didDisconnect(handle: 7, reason: .remoteUserTerminated, now: h.now, control: &h.control)
        h.now += 100
        h.advert(a, AdvertData.heraldUUID16)
        #expect(h.control.connects == [a])
    }

    @Test func immediateSendGoesFirst() {
        var h = CentralHarness<8, 2>()
        let a = address(1), b = address(2)
        h.control.acceptConnections = false  // keep both waiting to be chosen
        h.advert(a, AdvertData.heraldUUID16)
        h.now += 10
        h.advert(b, AdvertData.heraldUUID16)
        h.control.acceptConnections = true
        // Both need their payload; b was heard last. An immediate send for a puts a first.
        let target = h.central.database[h.central.database.index(of: a)!]!.target
        let data: [UInt8] = [0xCA, 0xFE, 0x01]
        #expect(h.central.immediateSend(data.span, to: target, now: h.now, control: &h.control))
        #expect(h.control.connects.last == a)

        var peer = FakePeer.herald(payload: simplePayload(3))
        let steps = h.drive(1, peer: &peer, from: h.connect(a, handle: 1))
        // The immediate-send write precedes the payload read: 04, length 3 (Int16 LE), data.
        #expect(steps == [.exchangeMTU, .discoverServices, .discoverCharacteristics(start: 6, end: 12),
                          .writeSignal(handle: 10, offset: 0, length: 6), .readPayload(handle: 8), .done(.completed)])
        #expect(peer.writes == [[0x04, 0x03, 0x00, 0xCA, 0xFE, 0x01]])
        #expect(h.central.database[h.central.database.index(of: a)!]!.immediateSendPending == false)
    }

    /// One signal-message buffer serves every link: while one link is writing from it, another link
    /// that wants to write skips its write (the device stays flagged for its next connection) instead
    /// of overwriting the message mid-write.
    @Test func oneMessageBufferServesOneWriterAtATime() throws {
        var h = CentralHarness<8, 2>()
        h.control.acceptConnections = false
        h.advert(address(1), AdvertData.heraldUUID16)
        h.advert(address(2), AdvertData.heraldUUID16)
        h.control.acceptConnections = true
        #expect(h.central.immediateSendAll([0xAB].span, now: h.now, control: &h.control) == 2)
        let x = try #require(h.control.connects.last)
        let y = x == address(1) ? address(2) : address(1)
        // x: up to its first write fragment, whose response has not come yet.
        var step = h.connect(x, handle: 1)
        var peerX = FakePeer.herald(payload: simplePayload(1))
        while let s = step {
            if case .writeSignal = s { break }
            if case .discoverServices = s {
                for (uuid, start, end) in peerX.services { h.central.gattDidDiscover(handle: 1, service: uuid, start: start, end: end) }
            }
            if case .discoverCharacteristics = s {
                for (uuid, v) in peerX.characteristics { h.central.gattDidDiscover(handle: 1, characteristic: uuid, valueHandle: v) }
            }
            step = h.complete(1)
        }
        #expect(step == .writeSignal(handle: 10, offset: 0, length: 4))
        #expect(h.central.outgoingLink == h.central.linkIndex(handle: 1))
        // y connects to us meanwhile and is read over its own link: its write is skipped.
        var peerY = FakePeer.herald(payload: simplePayload(2))
        let first = h.central.didConnect(handle: 2, peer: y, isCentral: false, now: h.now, control: &h.control)
        let stepsY = h.drive(2, peer: &peerY, from: first)
        #expect(stepsY.last == .done(.completed) && peerY.writes.isEmpty)
        #expect(h.central.database[h.central.database.index(of: y)!]!.immediateSendPending)
        #expect(array(h.central.outgoing) == [0x04, 0x01, 0x00, 0xAB])
        // x finishes its write from the untouched buffer and releases it.
        peerX.writes.append(array(h.central.outgoing))
        _ = h.drive(1, peer: &peerX, from: h.complete(1))
        #expect(peerX.writes == [[0x04, 0x01, 0x00, 0xAB]])
        #expect(h.central.outgoingLink == nil)
        #expect(!h.central.database[h.central.database.index(of: x)!]!.immediateSendPending)
    }

    @Test func immediateSendAllFlagsHeraldDevicesSeenInTheLastMinute() {
        var h = CentralHarness<8, 2>()
        h.control.acceptConnections = false
        h.advert(address(1), AdvertData.heraldUUID16)
        h.now = 30_000
        h.advert(address(2), AdvertData.heraldUUID16)
        h.advert(address(3), AdvertData.apple)
        h.now = 70_000
        let n = h.central.immediateSendAll([0x01].span, now: h.now, control: &h.control)
        // address(1) was heard 69 s ago; address(3) is not known to be Herald.
        #expect(n == 1)
        #expect(h.central.database[1]!.immediateSendPending)
        #expect(!h.central.database[0]!.immediateSendPending)
        #expect(!h.central.database[2]!.immediateSendPending)
        // Too long for the buffer: refused.
        let long = [UInt8](repeating: 0, count: 129)
        #expect(h.central.immediateSendAll(long.span, now: h.now, control: &h.control) == 0)
    }

    @Test func scanDutyCycleScansAtLeastOnceEveryPeriod() {
        var config = HeraldSensorConfiguration.unspread
        config.scanWindow = 10_000
        config.activeScanHold = nil
        var h = CentralHarness<8, 2>(configuration: config)
        #expect(h.central.nextDeadline == 11_000)
        h.now = 11_000
        h.central.tick(now: h.now, control: &h.control, delegate: &h.delegate)
        #expect(h.control.actions == [.scan(.active), .scan(nil)])
        #expect(h.central.nextDeadline == 31_000)
        h.now = 31_000
        h.central.tick(now: h.now, control: &h.control, delegate: &h.delegate)
        #expect(h.control.actions == [.scan(.active), .scan(nil), .scan(.active)])
    }

    @Test func stopDisconnectsAndStopsScanning() {
        var h = CentralHarness<8, 2>()
        h.advert(address(1), AdvertData.heraldUUID16)
        _ = h.connect(address(1), handle: 9)
        h.central.stop(control: &h.control)
        #expect(h.control.actions.suffix(2) == [.scan(nil), .disconnect(9)])
        h.advert(address(2), AdvertData.heraldUUID16)
        #expect(h.central.database.count == 1)
    }

    @Test func oneReadingPerAdvertisingEventAndTxPowerComesFromEitherSource() {
        var h = CentralHarness<8, 2>()
        h.control.acceptConnections = false
        let a = address(1)
        h.advert(a, AdvertData.apple, rssi: -70)
        #expect(h.delegate.events.last == .measure(1, -70, nil))
        // Its scan response (same advertising event) carries nothing Herald (a name): it refreshes the
        // known device's RSSI and last-seen time and leaves it connectable, but is not a second reading.
        let readings = h.delegate.events.count
        h.now += 1
        h.advert(a, [0x05, 0x09, 0x50, 0x68, 0x6F, 0x6E], rssi: -71, kind: 0x1B)
        #expect(h.delegate.events.count == readings)
        #expect(h.central.database[0]!.rssi == -71 && h.central.database[0]!.lastSeen == h.now)
        #expect(h.central.database[0]!.connectable)
        // The next event's advert is the next reading.
        h.advert(a, AdvertData.apple, rssi: -72)
        #expect(h.delegate.events.last == .measure(1, -72, nil))
        // The same scan response from an unknown device files nothing.
        h.advert(address(2), [0x05, 0x09, 0x50, 0x68, 0x6F, 0x6E], rssi: -71, kind: 0x1B)
        #expect(h.central.database.count == 1)
        // Tx power from an extended report's field when the data has no Tx Power Level.
        let data = AdvertData.heraldUUID16
        let report = AdvertisingReport(kind: AdvertisingReportKind(rawValue: 0x13), address: address(3), rssi: -40, txPower: 4,
                                       advertisingSID: nil, data: data.span)
        h.central.didReceive(advertisingReport: report, now: h.now, control: &h.control, delegate: &h.delegate)
        #expect(h.delegate.events.last == .measure(2, -40, 4))
        // An advert without RSSI (0x7F) is filed but measures nothing.
        let before = h.delegate.events.count
        let silent = AdvertisingReport(kind: AdvertisingReportKind(rawValue: 0x13), address: address(3), rssi: nil, txPower: nil,
                                       advertisingSID: nil, data: data.span)
        h.central.didReceive(advertisingReport: silent, now: h.now + 1, control: &h.control, delegate: &h.delegate)
        #expect(h.delegate.events.count == before)
        #expect(h.central.database[h.central.database.index(of: address(3))!]!.lastSeen == h.now)
    }

    @Test func longPayloadIsReadInPiecesAndStoredWhole() {
        var h = CentralHarness<8, 2>()
        let a = address(1)
        h.advert(a, AdvertData.heraldUUID16)
        // 21 + 40 octets of extended data: Read + two Read Blobs at ATT_MTU 23 (22 octets each).
        let payload = simplePayload(0x33) + [UInt8](repeating: 0xE0, count: 40)
        var peer = FakePeer.herald(payload: payload)
        let steps = h.drive(1, peer: &peer, from: h.connect(a, handle: 1))
        #expect(steps.last == .done(.completed))
        #expect(array(h.central.database[0]!.payload) == payload)
        #expect(h.delegate.events.contains(.read(1, payload)))
    }

    /// The integration guide's performance payload (129 octets) and Herald's longest (510), read with
    /// Read Blob at ATT_MTU 23 and at the MTU our stack offers.
    @Test(arguments: [(129, 23), (510, 23), (129, 247), (510, 247)])
    func payloadsUpTo510OctetsAreReadWhole(length: Int, mtu: Int) {
        var h = CentralHarness<8, 2>()
        let a = address(1)
        h.advert(a, AdvertData.heraldUUID16, rssi: -52)
        let payload = simplePayload(0x21) + (0..<(length - 21)).map { UInt8(truncatingIfNeeded: $0) }
        var peer = FakePeer.herald(payload: payload, mtu: mtu)
        let steps = h.drive(1, peer: &peer, from: h.connect(a, handle: 1))
        #expect(steps.last == .done(.completed))
        #expect(array(h.central.database[0]!.payload) == payload)
        #expect(h.delegate.events.contains(.read(1, payload)))
        #expect(h.delegate.events.last == .measureWithPayload(1, -52, payload))
        #expect(h.central.database[0]!.consecutiveFailures == 0)
    }

    @Test func aPayloadLongerThan510OctetsFailsTheReadNotTruncated() {
        var h = CentralHarness<8, 2>()
        let a = address(1)
        h.advert(a, AdvertData.heraldUUID16)
        var peer = FakePeer.herald(payload: simplePayload(0x21) + [UInt8](repeating: 7, count: 511 - 21))
        let steps = h.drive(1, peer: &peer, from: h.connect(a, handle: 1))
        #expect(steps.last == .done(.failed))
        #expect(!h.central.database[0]!.hasPayload)
        #expect(h.central.database[0]!.consecutiveFailures == 1)
        #expect(!h.delegate.events.contains { if case .read = $0 { true } else { false } })
    }

    @Test func noSecondLinkToADeviceConnectedToUs() {
        var h = CentralHarness<8, 2>()
        h.control.acceptConnections = false
        let a = address(1)
        h.advert(a, AdvertData.heraldUUID16)
        #expect(h.control.connects == [a])
        h.central.didFailToConnect(to: a, now: h.now, control: &h.control)
        h.control.acceptConnections = true
        // The phone connects to us (we are its peripheral): no link of ours while that one lasts; we
        // start reading its payload over its link instead.
        #expect(h.central.didConnect(handle: 0x20, peer: a, isCentral: false, now: h.now, control: &h.control) != nil)
        h.now += 1_000
        h.advert(a, AdvertData.heraldUUID16)
        #expect(h.control.connects == [a])
        // Its link goes: the payload still wanted, we connect.
        h.central.didDisconnect(handle: 0x20, reason: .remoteUserTerminated, now: h.now, control: &h.control)
        #expect(h.control.connects == [a, a])
    }

    @Test func payloadIsReadOverAnInboundLinkWhichThePeerKeeps() {
        var h = CentralHarness<8, 2>()
        h.control.acceptConnections = false
        let a = address(1)
        h.advert(a, AdvertData.heraldUUID16)
        h.central.didFailToConnect(to: a, now: h.now, control: &h.control)
        // An unknown device connecting to us is not read.
        #expect(h.central.didConnect(handle: 0x21, peer: address(7), isCentral: false, now: h.now, control: &h.control) == nil)
        // A known Herald device connecting to us is read over its link...
        let first = h.central.didConnect(handle: 0x20, peer: a, isCentral: false, now: h.now, control: &h.control)
        #expect(first != nil)
        let payload: [UInt8] = [0x10, 0x03, 0x3A, 0x00, 0x01] + [UInt8](repeating: 0x5A, count: 16)
        var peer = FakePeer.herald(payload: payload)
        let steps = h.drive(0x20, peer: &peer, from: first)
        #expect(steps.contains(.readPayloadByUUID))
        #expect(h.delegate.events.contains { if case .read(_, let p) = $0 { return p == payload } else { return false } })
        // ...which we leave open (the peer closes it), and whose slot is free again.
        #expect(!h.control.disconnects.contains(0x20))
        #expect(h.central.linkIndex(handle: 0x20) == nil)
        // The peer closing it afterwards is no failure.
        h.central.didDisconnect(handle: 0x20, reason: .remoteUserTerminated, now: h.now, control: &h.control)
        #expect(h.central.database[h.central.database.index(of: a)!]!.consecutiveFailures == 0)
    }
}
