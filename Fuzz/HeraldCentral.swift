// libFuzzer target: the Herald central (HeraldCentral, sans-I/O) driven by arbitrary events: adverts
// with any AD data, connections, failures and disconnections, GATT results (services,
// characteristics, read chunks at any offset, completions that succeed or fail) for whatever step the
// central asked for, signal messages written to us, immediate sends and time passing. Each link also
// owns a real GATT client: a step can be started on it (`startGATT`) and arbitrary ATT PDUs fed to it
// (`receiveATT`, `tickGATT`), so the procedure also meets whatever responses a peer can send.
// Built by Tools/fuzz; host-only code.
// Input: a sequence of `[op][bytes…]` records; each op takes what it needs from the bytes after it.
// Invariants: no trap or over-read; the database and link table stay within capacity with one entry
// per target; every write step lies inside the message the central holds, and a write to an iOS peer
// is the whole message in one Write Request; payloads reported fit the stored capacity; a device's
// contact event never ends before it starts.
import BluetoothHost
@testable import Herald

func check(_ condition: Bool, _ message: StaticString) {
    if !condition { fatalError("invariant: \(message)") }
}

struct Control: HeraldCentralControl {
    var pending: DeviceAddress?
    mutating func requestConnection(to peer: DeviceAddress, now: UInt64, timeout: UInt64) -> Bool {
        guard pending == nil else { return false }
        pending = peer
        return true
    }
    mutating func requestDisconnection(handle: UInt16) {}
    mutating func requestScanning(_ scan: ScanIntent?) {}
}

struct Delegate: SensorDelegate {
    mutating func sensor(_ sensor: SensorType, didRead payload: Span<UInt8>, fromTarget target: TargetIdentifier) {
        check(payload.count > 0 && payload.count <= HeraldSensorLimits.payloadCapacity, "payload within capacity")
        check(target.value != 0, "target named")
    }
    mutating func sensor(_ sensor: SensorType, didShare payloads: borrowing SharedPayloads, fromTarget target: TargetIdentifier) {
        var total = 0
        for i in 0..<payloads.count { total += payloads[i].count }
        check(total + payloads.trailingBytes == payloads.data.count, "shared payloads tile the list")
    }
}

/// Reads the input a byte at a time; zeros once it runs out.
struct Input: ~Escapable {
    let bytes: Span<UInt8>
    var at = 0
    @_lifetime(copy bytes)
    init(_ bytes: Span<UInt8>) { self.bytes = bytes }
    var isEmpty: Bool { at >= bytes.count }
    mutating func byte() -> UInt8 {
        guard at < bytes.count else { return 0 }
        defer { at += 1 }
        return bytes[at]
    }
    mutating func u16() -> UInt16 { UInt16(byte()) | UInt16(byte()) << 8 }
    mutating func take(_ n: Int) -> [UInt8] {
        var out: [UInt8] = []
        for _ in 0..<n { out.append(byte()) }
        return out
    }
}

let uuids: [BluetoothUUID] = [HeraldIdentifiers.serviceUUID, HeraldIdentifiers.registeredServiceUUID,
                              HeraldIdentifiers.payloadCharacteristicUUID, HeraldIdentifiers.iosSignalCharacteristicUUID,
                              HeraldIdentifiers.androidSignalCharacteristicUUID, BluetoothUUID(uuid16: 0x1800)]

func address(_ b: UInt8) -> DeviceAddress {
    DeviceAddress(type: .randomDevice, address: BDAddress(displayOrder: 0xC0, 0, 0, 0, 0, b & 0x0F))
}

/// `message` written to our signal characteristic by `peer` on a fresh link: the Herald peripheral
/// reassembles and decodes it (`HeraldPeripheral.write`), the sensor's `SensorCore` hands it to the
/// central, as `HeraldSensor.write` does.
func peerWrites(_ message: [UInt8], from peer: DeviceAddress, now: UInt64, central: inout HeraldCentral<6, 2>,
                delegate: inout Delegate) {
    let payload: [UInt8] = [0x10, 0x03, 0x3A, 0x00, 0x00] + [UInt8](repeating: 0x90, count: 16)
    guard let source = try? FixedPayloadSource<32>(bytes: payload.span),
          var peripheral = try? HeraldPeripheral<FixedPayloadSource<32>, StandardServerOffer, 1, 32, 600>(
              source: source, advertising: HeraldAdvertisingConfiguration(), clock: HeraldClock(unixMillisAtZero: 0))
    else { fatalError("the peripheral is built from constants") }
    var core = SensorCore(supplier: SimplePayloadLayout(), delegate: delegate, central: central)
    core.now = now
    var stack = StackControl()
    let link = ConnectionSummary(handle: 0x30, role: .peripheral, peer: peer,
                                 timing: ConnectionTiming(interval: 24, latency: 0, supervisionTimeout: 72))
    peripheral.stackDidConnect(link, now: now, control: &stack, delegate: &core)
    _ = peripheral.write(id: peripheral.signalID, link: 0x30, offset: 0, value: message.span, delegate: &core)
    central = core.central
    delegate = core.delegate
}

func fuzzOne(_ data: Span<UInt8>) {
    var central = HeraldCentral<6, 2>()
    var control = Control()
    var delegate = Delegate()
    var now: UInt64 = 1_000
    central.start(now: now, control: &control)
    var input = Input(data)
    var nextHandle: UInt16 = 0x40
    /// The last step each open link was given (by handle).
    var steps: [UInt16: HeraldGATTStep] = [:]

    func follow(_ handle: UInt16, _ step: HeraldGATTStep?, _ central: inout HeraldCentral<6, 2>, _ steps: inout [UInt16: HeraldGATTStep]) {
        guard let step else { return }
        steps[handle] = step
        if let s = central.linkIndex(handle: handle) {
            check(central.slots[s]?.procedure.step == step, "the step is where the link's procedure is")
        }
        if case .writeSignal(_, let offset, let length) = step {
            check(offset >= 0 && length > 0 && offset + length <= central.outgoing.count, "write inside the held message")
            check(central.outgoingLink == central.linkIndex(handle: handle), "the writing link holds the message")
            if let s = central.linkIndex(handle: handle), central.slots[s]!.procedure.os == .ios {
                check(offset == 0 && length == central.outgoing.count, "an iOS peer gets whole messages")
            }
        }
    }

    while !input.isEmpty {
        let op = input.byte() % 13
        switch op {
        case 0, 1:  // an advert
            let who = input.byte()
            let n = Int(input.byte() % 40)
            let ad = input.take(n)
            let report = AdvertisingReport(kind: AdvertisingReportKind(rawValue: UInt16(input.byte() & 0x1F)), address: address(who),
                                           rssi: Int8(bitPattern: input.byte() | 0x80), txPower: nil, advertisingSID: nil, data: ad.span)
            central.didReceive(advertisingReport: report, now: now, control: &control, delegate: &delegate)
        case 2:  // our attempt completes, or a peer connects to us
            if let peer = control.pending, input.byte() & 1 == 0 {
                control.pending = nil
                let h = nextHandle; nextHandle &+= 1
                follow(h, central.didConnect(handle: h, peer: peer, isCentral: true, now: now, control: &control), &central, &steps)
            } else {
                let h = nextHandle; nextHandle &+= 1
                follow(h, central.didConnect(handle: h, peer: address(input.byte()), isCentral: false, now: now, control: &control),
                       &central, &steps)
            }
        case 3:
            if let peer = control.pending {
                control.pending = nil
                central.didFailToConnect(to: peer, now: now, control: &control)
            }
        case 4:  // a link goes down
            let open = steps.keys.sorted()
            let pick = Int(input.byte())
            if !open.isEmpty {
                let h = open[pick % open.count]
                steps[h] = nil
                central.didDisconnect(handle: h, reason: HCIStatus(rawValue: input.byte()), now: now, control: &control)
            }
        case 5, 6:  // the GATT client answers the step a link is on
            let open = steps.keys.sorted()
            guard !open.isEmpty else { break }
            let h = open[Int(input.byte()) % open.count]
            switch steps[h]! {
            case .exchangeMTU: central.gattDidExchangeMTU(handle: h, mtu: Int(input.u16()))
            case .discoverServices:
                central.gattDidDiscover(handle: h, service: uuids[Int(input.byte()) % uuids.count], start: input.u16(), end: input.u16())
            case .discoverCharacteristics:
                for _ in 0..<Int(input.byte() % 4) {
                    central.gattDidDiscover(handle: h, characteristic: uuids[Int(input.byte()) % uuids.count], valueHandle: input.u16())
                }
            case .readPayload:
                let offset = Int(input.u16() % 600)
                let chunk = input.take(Int(input.byte()))
                central.gattDidRead(handle: h, offset: offset, value: chunk.span)
            default: break
            }
            follow(h, central.gattDidComplete(handle: h, succeeded: input.byte() & 3 != 0, now: now, control: &control, delegate: &delegate),
                   &central, &steps)
        case 7:  // a signal message written to us, on the path that ships (the Herald peripheral, `SensorCore`)
            let n = Int(input.u16() % 600)
            let message = input.take(n)
            peerWrites(message, from: address(input.byte()), now: now, central: &central, delegate: &delegate)
        case 8:  // immediate send
            let data = input.take(Int(input.byte() % 140))
            if input.byte() & 1 == 0 {
                _ = central.immediateSendAll(data.span, now: now, control: &control)
            } else {
                _ = central.immediateSend(data.span, to: TargetIdentifier(UInt32(input.byte() % 8)), now: now, control: &control)
            }
        case 9:  // the link's GATT client starts the step it is on
            let open = steps.keys.sorted()
            guard !open.isEmpty else { break }
            let h = open[Int(input.byte()) % open.count]
            guard let s = central.linkIndex(handle: h), central.slots[s]?.client.isBusy == false, let step = steps[h] else { break }
            var request = FixedBytes<247>()
            if central.startGATT(step, link: s, now: now, into: &request) == .refused {
                follow(h, central.gattDidComplete(handle: h, succeeded: false, now: now, control: &control, delegate: &delegate),
                       &central, &steps)
            }
        case 10, 11:  // an ATT PDU from the peer to that client: a response opcode, then any bytes
            let open = steps.keys.sorted()
            guard !open.isEmpty else { break }
            let h = open[Int(input.byte()) % open.count]
            guard let s = central.linkIndex(handle: h) else { break }
            let opcodes: [UInt8] = [0x01, 0x03, 0x11, 0x09, 0x0B, 0x0D, 0x13, 0x1B, 0x1D]
            let pdu = [opcodes[Int(input.byte()) % opcodes.count]] + input.take(Int(input.byte() % 64))
            var reply = FixedBytes<247>()
            guard let outcome = central.receiveATT(pdu: pdu.span, link: s, now: now, reply: &reply) else { break }
            check(outcome.action != .send || reply.count > 0, "a reply to send")
            if outcome.action == .disconnect { central.linkWillClose(handle: h) }
            if outcome.operationEnded {
                follow(h, central.gattProcedureDidEnd(link: s, now: now, control: &control, delegate: &delegate), &central, &steps)
            }
        default:  // time passes
            now &+= UInt64(input.u16()) * 50
            for s in 0..<2 {
                guard let h = central.slots[s]?.handle, let outcome = central.tickGATT(link: s, now: now) else { continue }
                if outcome.action == .disconnect { central.linkWillClose(handle: h) }
                if outcome.operationEnded {
                    follow(h, central.gattProcedureDidEnd(link: s, now: now, control: &control, delegate: &delegate), &central, &steps)
                }
            }
            central.tick(now: now, control: &control, delegate: &delegate)
        }
        // Invariants after every event.
        check(central.database.count <= 6, "database within capacity")
        check(central.openLinks <= 2, "links within capacity")
        var targets: [UInt32] = []
        for i in 0..<6 {
            guard let d = central.database[i] else { continue }
            check(!targets.contains(d.target.value), "one entry per target")
            targets.append(d.target.value)
            check(d.firstSeen <= d.lastSeen, "contact event in order")
            check(d.payload.count <= HeraldSensorLimits.payloadCapacity, "stored payload within capacity")
        }
        for (h, _) in steps where central.linkIndex(handle: h) == nil { steps[h] = nil }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let buffer = UnsafeBufferPointer(start: size > 0 ? data : nil, count: size)
    fuzzOne(buffer.span)
    return 0
}
