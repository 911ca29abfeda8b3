import Testing
import BluetoothHost
@testable import Herald

/// Random event sequences against the central: whatever the order of adverts, connections, failures,
/// GATT results and timers, the invariants hold and nothing traps.
@Suite("Sensor robustness: random event sequences")
struct SensorRobustnessTests {
    struct LCG {
        var state: UInt64
        mutating func next(_ n: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(n))
        }
    }

    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8] as [UInt64])
    func invariantsHoldUnderRandomEvents(seed: UInt64) throws {
        var rng = LCG(state: seed)
        var h = CentralHarness<6, 2>()
        var handles: [UInt16: DeviceAddress] = [:]
        var nextHandle: UInt16 = 1
        let adverts = [AdvertData.heraldUUID16, AdvertData.heraldUUID128WithTx, AdvertData.apple, AdvertData.other,
                       AdvertData.pseudo([1, 2, 3, 4, 5, 6]), AdvertData.pseudo([6, 5, 4, 3, 2, 1]), [0x05, 0xFF]]
        for _ in 0..<3_000 {
            h.now += UInt64(rng.next(5_000))
            switch rng.next(9) {
            case 0, 1, 2:
                h.advert(address(UInt8(rng.next(10))), adverts[rng.next(adverts.count)], rssi: Int8(-30 - rng.next(60)),
                         kind: rng.next(4) == 0 ? 0x10 : 0x13)
            case 3:
                if let p = h.central.pending {
                    if rng.next(3) == 0 {
                        h.central.didFailToConnect(to: p.address, now: h.now, control: &h.control)
                    } else {
                        let handle = nextHandle
                        nextHandle &+= 1
                        if h.connect(p.address, handle: handle) != nil { handles[handle] = p.address }
                    }
                }
            case 4:
                if !handles.isEmpty {
                    let keys = handles.keys.sorted()
                    let handle = keys[rng.next(keys.count)]
                    // A random GATT result, then completion with random success.
                    let slot = h.central.linkIndex(handle: handle)
                    if slot != nil {
                        switch rng.next(4) {
                        case 0: h.central.gattDidDiscover(handle: handle, service: rng.next(2) == 0 ? HeraldIdentifiers.serviceUUID : BluetoothUUID(uuid16: 0x1800),
                                                          start: UInt16(1 + rng.next(5)), end: UInt16(6 + rng.next(20)))
                        case 1: h.central.gattDidDiscover(handle: handle, characteristic: [HeraldIdentifiers.payloadCharacteristicUUID,
                                                          HeraldIdentifiers.iosSignalCharacteristicUUID, HeraldIdentifiers.androidSignalCharacteristicUUID][rng.next(3)],
                                                          valueHandle: UInt16(1 + rng.next(30)))
                        case 2: h.central.gattDidRead(handle: handle, offset: rng.next(3) == 0 ? rng.next(40) : 0, value: simplePayload(UInt8(rng.next(3))).span)
                        default: h.central.gattDidExchangeMTU(handle: handle, mtu: 23 + rng.next(200))
                        }
                        _ = h.complete(handle, rng.next(5) != 0)
                    }
                }
            case 5:
                if !handles.isEmpty {
                    let keys = handles.keys.sorted()
                    let handle = keys[rng.next(keys.count)]
                    handles[handle] = nil
                    h.central.didDisconnect(handle: handle, reason: .remoteUserTerminated, now: h.now, control: &h.control)
                }
            case 6:
                h.central.tick(now: h.now, control: &h.control, delegate: &h.delegate)
            case 7:
                var message: [UInt8] = [UInt8(rng.next(6))]
                for _ in 0..<rng.next(50) { message.append(UInt8(rng.next(256))) }
                _ = try h.peerWrites(message, from: address(UInt8(rng.next(12))))
            default:
                let data: [UInt8] = [UInt8(rng.next(256))]
                if rng.next(2) == 0 {
                    _ = h.central.immediateSendAll(data.span, now: h.now, control: &h.control)
                } else {
                    _ = h.central.immediateSend(data.span, to: TargetIdentifier(UInt32(1 + rng.next(20))), now: h.now, control: &h.control)
                }
            }
            // Invariants: capacity, one entry per target, links within the limit and to known targets
            // or closing, payloads never longer than stored capacity.
            #expect(h.central.database.count <= 6)
            #expect(h.central.openLinks <= 2)
            var targets = Set<UInt32>()
            for i in 0..<6 {
                guard let d = h.central.database[i] else { continue }
                #expect(targets.insert(d.target.value).inserted)
                #expect(d.firstSeen <= d.lastSeen)
                #expect(d.ignoreInterval >= 60_000 && d.ignoreInterval <= 180_000)
            }
        }
        // Something happened: devices were seen and connections made.
        #expect(h.control.connects.count > 0)
        #expect(h.delegate.events.count > 0)
    }
}

