import Testing
import BluetoothHost
@testable import Herald

@Suite("Sensor device database: merging, ignoring, expiry, eviction")
struct SensorDatabaseTests {
    @Test func pseudoAddressFollowsAddressRotation() {
        var h = CentralHarness<8, 2>()
        h.control.acceptConnections = false
        let pseudo: [UInt8] = [1, 2, 3, 4, 5, 6]
        h.advert(address(1), AdvertData.pseudo(pseudo), rssi: -50)
        h.now += 1_000
        h.advert(address(2), AdvertData.pseudo(pseudo), rssi: -52)
        #expect(h.central.database.count == 1)
        let d = h.central.database[0]!
        #expect(d.address == address(2))
        #expect(d.target == TargetIdentifier(1))
        #expect(d.firstSeen == 1_000)
        #expect(d.lastSeen == 2_000)
        #expect(h.delegate.events == [.detect(1), .available(true, 1), .measure(1, -50, nil), .measure(1, -52, nil)])
        // A different pseudo address is a different device.
        h.advert(address(3), AdvertData.pseudo([9, 9, 9, 9, 9, 9]))
        #expect(h.central.database.count == 2)
    }

    /// `index(of: TargetIdentifier)` scans a small array of targets kept beside the entries; after
    /// every kind of change (new, evicted, merged by payload, purged, replaced through the subscript)
    /// it must agree with the entries themselves.
    @Test func targetLookupFollowsEveryChange() {
        var db = HeraldDeviceDatabase<3>()
        func agrees(_ table: HeraldDeviceDatabase<3>) -> Bool {
            var db = table
            for t in UInt32(0)...12 {
                let scan = (0..<3).first { db[$0]?.target.value == t }
                if db.index(of: TargetIdentifier(t)) != scan { return false }
            }
            return true
        }
        for i in 1...4 { _ = db.observe(address: address(UInt8(i)), pseudoAddress: nil, kind: .herald, now: UInt64(i)) { _ in } }
        #expect(agrees(db) && db.index(of: TargetIdentifier(1)) == nil && db.count == 3)  // 1 was evicted
        let payload = simplePayload(7)
        _ = db.setPayload(payload.span, at: db.index(of: TargetIdentifier(2))!, now: 10)
        _ = db.setPayload(payload.span, at: db.index(of: TargetIdentifier(3))!, now: 11)  // merges into 2
        #expect(agrees(db) && db.index(of: TargetIdentifier(3)) == nil && db.count == 2)
        db.purge(now: 100, outOfRange: 50) { _ in }
        #expect(agrees(db) && db.count == 0)
        _ = db.observe(address: address(9), pseudoAddress: nil, kind: .herald, now: 200) { _ in }
        var moved = db[db.index(of: TargetIdentifier(5))!]!
        moved.address = address(10)
        db[2] = moved
        #expect(agrees(db))
        #expect(db.index(of: TargetIdentifier(0)) == nil)
    }

    @Test func pseudoAddressRotationOntoAKnownAddressDropsTheStaleEntry() {
        var db = HeraldDeviceDatabase<4>()
        var gone: [UInt32] = []
        let p = PseudoDeviceAddress(data: [1, 2, 3, 4, 5, 6])
        _ = db.observe(address: address(1), pseudoAddress: p, kind: .herald, now: 1) { gone.append($0.value) }
        _ = db.observe(address: address(2), pseudoAddress: nil, kind: .herald, now: 2) { gone.append($0.value) }
        let r = db.observe(address: address(2), pseudoAddress: p, kind: .herald, now: 3) { gone.append($0.value) }
        #expect(r.index == 0 && !r.isNew)
        #expect(gone == [2])
        #expect(db.count == 1)
        #expect(db[0]!.address == address(2))
    }

    @Test func identicalPayloadMergesAcrossAddressRotation() {
        var h = CentralHarness<8, 2>()
        let payload = simplePayload(0x20)
        h.advert(address(1), AdvertData.heraldUUID16, rssi: -40)
        var peer = FakePeer.herald(payload: payload, ios: true)
        _ = h.drive(1, peer: &peer, from: h.connect(address(1), handle: 1))
        h.central.didDisconnect(handle: 1, reason: .remoteUserTerminated, now: h.now, control: &h.control)
        // The phone rotates its address: a new entry until its payload is read.
        h.now = 30_000
        h.advert(address(2), AdvertData.heraldUUID16, rssi: -45)
        #expect(h.central.database.count == 2)
        #expect(h.control.connects == [address(1), address(2)])
        var peer2 = FakePeer.herald(payload: payload, ios: true)
        _ = h.drive(2, peer: &peer2, from: h.connect(address(2), handle: 2))
        #expect(h.central.database.count == 1)
        let d = h.central.database[0]!
        #expect(d.target == TargetIdentifier(1))
        #expect(d.address == address(2))
        #expect(d.firstSeen == 1_000)
        #expect(d.lastSeen == 30_000)
        #expect(d.rssi == -45)
        #expect(d.payloadTime == 30_000)
        // Target 2 is reported deleted, and the payload is attributed to target 1.
        let tail = Array(h.delegate.events.suffix(3))
        #expect(tail == [.available(false, 2), .read(1, payload), .measureWithPayload(1, -45, payload)])
        #expect(h.control.disconnects == [1, 2])
        // The link now belongs to the surviving target.
        #expect(h.central.slots[h.central.linkIndex(handle: 2)!]!.target == TargetIdentifier(1))
    }

    @Test func ignoreBackOffGrowsBy1Point2UpToAboutThreeMinutes() {
        var db = HeraldDeviceDatabase<2>()
        _ = db.observe(address: address(1), pseudoAddress: nil, kind: .appleToCheck, now: 0) { _ in }
        var periods: [UInt64] = []
        for _ in 0..<9 { periods.append(db.ignore(at: 0, now: 0)) }
        #expect(periods == [60_000, 72_000, 86_400, 103_680, 124_416, 149_299, 179_158, 180_000, 180_000])
    }

    @Test func appleDeviceWithoutTheServiceIsIgnoredWithGrowingPeriods() {
        var h = CentralHarness<8, 2>()
        let a = address(7)
        var expectedUntil: [UInt64] = []
        var period: UInt64 = 60_000
        for round in 0..<3 {
            h.advert(a, AdvertData.apple)
            #expect(h.control.connects.count == round + 1)
            var peer = FakePeer.noHerald
            let steps = h.drive(UInt16(round + 1), peer: &peer, from: h.connect(a, handle: UInt16(round + 1)))
            // No payload characteristic to read by UUID: the walk finds no Herald service either.
            #expect(steps == [.exchangeMTU, .readPayloadByUUID, .discoverServices, .done(.noHeraldService)])
            h.central.didDisconnect(handle: UInt16(round + 1), reason: .remoteUserTerminated, now: h.now, control: &h.control)
            expectedUntil.append(h.now + period)
            #expect(h.central.database[0]!.ignoreUntil == h.now + period)
            // Adverts while ignored start nothing.
            h.now += period - 1
            h.advert(a, AdvertData.apple)
            #expect(h.control.connects.count == round + 1)
            h.now += 1
            period = period * 6 / 5
        }
        #expect(expectedUntil.count == 3)
    }

    @Test func fiveConsecutiveFailuresIgnoreTheDevice() {
        var h = CentralHarness<8, 2>()
        let a = address(8)
        for attempt in 1...5 {
            h.advert(a, AdvertData.heraldUUID16)
            #expect(h.control.connects.count == attempt)
            h.now += 8_000
            h.central.didFailToConnect(to: a, now: h.now, control: &h.control)
            // No retry until the device is heard again after the failure.
            #expect(h.control.connects.count == attempt)
            h.now += 100
        }
        let d = h.central.database[0]!
        #expect(d.ignoreUntil == h.now - 100 + 60_000)
        #expect(d.consecutiveFailures == 0)
        h.advert(a, AdvertData.heraldUUID16)
        #expect(h.control.connects.count == 5)
        h.now = d.ignoreUntil!
        h.advert(a, AdvertData.heraldUUID16)
        #expect(h.control.connects.count == 6)
    }

    @Test func backOffDoublesFromOneMinuteThenGivesUp() {
        var db = HeraldDeviceDatabase<2>()
        _ = db.observe(address: address(1), pseudoAddress: nil, kind: .herald, now: 0) { _ in }
        var periods: [UInt64?] = []
        for _ in 0..<8 { periods.append(db.backOff(at: 0, now: 0)) }
        #expect(periods == [60_000, 120_000, 240_000, 480_000, 960_000, 1_920_000, nil, nil])
        #expect(db[0]!.isGivenUp)
        #expect(db[0]!.isIgnored(at: .max - 1))
    }

    /// A device whose payload can never be read (here: every read fails) is tried in rounds of five,
    /// backs off 1, 2, 4, 8, 16, 32 minutes, and after a seventh failed round is left alone: 35
    /// connections in all, not one every few minutes for ever.
    @Test func anUnreadableDeviceBacksOffThenIsGivenUp() {
        var h = CentralHarness<8, 2>()
        let a = address(9)
        var handle: UInt16 = 1
        var roundsEnded: [UInt64] = []
        for _ in 0..<(4 * 3_600) {  // four hours, an advert every second
            h.now += 1_000
            let before = h.control.connects.count
            h.advert(a, AdvertData.heraldUUID16)
            guard h.control.connects.count > before else { continue }
            var peer = FakePeer.herald(payload: [])  // an empty payload: the read fails
            let steps = h.drive(handle, peer: &peer, from: h.connect(a, handle: handle))
            #expect(steps.last == .done(.failed))
            h.central.didDisconnect(handle: handle, reason: .remoteUserTerminated, now: h.now, control: &h.control)
            handle &+= 1
            if let until = h.central.database[0]!.ignoreUntil, until != .max, roundsEnded.last != until { roundsEnded.append(until) }
        }
        #expect(h.control.connects.count == 35)
        #expect(h.central.database[0]!.isGivenUp)
        // Each round's ignore period, measured from the round's last failure.
        #expect(roundsEnded.count == 6)
        // Still measured while given up.
        #expect(h.delegate.events.last == .measure(1, -60, nil))
    }

    @Test func aSuccessResetsTheFailureCount() {
        var h = CentralHarness<8, 2>()
        let a = address(8)
        for _ in 0..<4 {
            h.advert(a, AdvertData.heraldUUID16)
            h.central.didFailToConnect(to: a, now: h.now, control: &h.control)
            h.now += 100
        }
        #expect(h.central.database[0]!.consecutiveFailures == 4)
        h.advert(a, AdvertData.heraldUUID16)
        var peer = FakePeer.herald(payload: simplePayload(1))
        _ = h.drive(3, peer: &peer, from: h.connect(a, handle: 3))
        #expect(h.central.database[0]!.consecutiveFailures == 0)
        #expect(h.central.database[0]!.ignoreUntil == nil)
    }

    @Test func disconnectionBeforeTheWorkIsDoneCountsAsAFailure() {
        var h = CentralHarness<8, 2>()
        let a = address(8)
        h.advert(a, AdvertData.heraldUUID16)
        #expect(h.connect(a, handle: 5) == .exchangeMTU)
        h.central.didDisconnect(handle: 5, reason: .remoteUserTerminated, now: h.now, control: &h.control)
        #expect(h.central.database[0]!.consecutiveFailures == 1)
        #expect(h.central.openLinks == 0)
    }

    @Test func devicesOutOfRangeForAnHourArePurgedOnceAMinute() {
        var h = CentralHarness<8, 2>()
        h.control.acceptConnections = false
        h.advert(address(1), AdvertData.heraldUUID16)          // last seen 1 000
        h.now = 600_000
        h.advert(address(2), AdvertData.heraldUUID16)          // last seen 600 000
        // Purges run at 61 000, 121 000, …; the one at 3 601 000 is the first an hour after 1 000.
        var t: UInt64 = 61_000
        while t < 3_601_000 {
            h.now = t
            h.central.tick(now: t, control: &h.control, delegate: &h.delegate)
            t += 60_000
        }
        #expect(h.central.database.count == 2)
        h.now = 3_601_000
        h.central.tick(now: h.now, control: &h.control, delegate: &h.delegate)
        #expect(h.central.database.count == 1)
        #expect(h.delegate.events.last == .available(false, 1))
        #expect(h.central.nextDeadline == 3_661_000)
    }

    @Test func purgeWindowIsConfigurable() {
        var config = HeraldSensorConfiguration.unspread
        config.outOfRange = 120_000
        var h = CentralHarness<8, 2>(configuration: config)
        h.control.acceptConnections = false
        h.advert(address(1), AdvertData.heraldUUID16)
        h.now = 121_000
        h.central.tick(now: h.now, control: &h.control, delegate: &h.delegate)
        #expect(h.central.database.count == 0)
    }

    @Test func fullDatabaseEvictsTheLeastRecentlyUpdated() {
        var h = CentralHarness<4, 2>()
        h.control.acceptConnections = false
        for i in 1...4 {
            h.advert(address(UInt8(i)), AdvertData.heraldUUID16)
            h.now += 1_000
        }
        // Device 1 is heard again, so device 2 is now the least recently updated.
        h.advert(address(1), AdvertData.heraldUUID16)
        h.now += 1_000
        h.advert(address(5), AdvertData.heraldUUID16)
        #expect(h.central.database.count == 4)
        #expect(h.central.database.index(of: address(2)) == nil)
        #expect(h.central.database.index(of: address(1)) != nil)
        #expect(h.delegate.events.contains(.available(false, 2)))
        #expect(h.delegate.events.suffix(3) == [.detect(5), .available(true, 5), .measure(5, -60, nil)])
    }

    @Test func targetIdentifiersAreARunCounterNotThePayload() {
        var db = HeraldDeviceDatabase<4>()
        var ids: [UInt32] = []
        for i in 1...3 {
            let r = db.observe(address: address(UInt8(i)), pseudoAddress: nil, kind: .herald, now: 0) { _ in }
            ids.append(db[r.index]!.target.value)
        }
        #expect(ids == [1, 2, 3])
        let p = simplePayload(5)
        _ = db.setPayload(p.span, at: 0, now: 1)
        #expect(db[0]!.target.value == 1)
    }

    @Test func oversizedPayloadIsRefused() {
        var db = HeraldDeviceDatabase<2>()
        _ = db.observe(address: address(1), pseudoAddress: nil, kind: .herald, now: 0) { _ in }
        // One octet past `HeraldSensorLimits.payloadCapacity` (510; 128 in Embedded builds).
        let big = [UInt8](repeating: 0x10, count: HeraldSensorLimits.payloadCapacity + 1)
        #expect(db.setPayload(big.span, at: 0, now: 1) == nil)
        #expect(db[0]!.hasPayload == false)
    }
}
