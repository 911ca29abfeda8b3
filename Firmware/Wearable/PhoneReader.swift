// The wearable's central side: after it detects a Herald device, connect, find the Herald service
// and its payload characteristic with the core's GATT client, read the payload, disconnect
// (sensor didRead). One peer at a time; each address is read once per boot.
import BluetoothHost
import Herald

/// What the GATT client reports while a read is under way (kept apart from the client itself,
/// which needs its delegate as a separate value).
struct PhoneReadResults: GATTClientDelegate {
    var serviceRange: (start: UInt16, end: UInt16)?
    var payloadHandle: UInt16 = 0
    var payload = FixedBytes<64>()
    var completed: (GATTProcedureKind, GATTClientError?)?

    mutating func gattClientDidDiscover(service: GATTDiscoveredService) {
        if serviceRange == nil { serviceRange = (service.startHandle, service.endHandle) }
    }

    mutating func gattClientDidDiscover(characteristic: GATTDiscoveredCharacteristic) {
        if characteristic.uuid == HeraldIdentifiers.payloadCharacteristicUUID, characteristic.properties.contains(.read) {
            payloadHandle = characteristic.valueHandle
        }
    }

    mutating func gattClientDidRead(handle: UInt16, offset: Int, value: Span<UInt8>) {
        guard offset == payload.count else { return }
        payload.append(contentsOf: value)
    }

    mutating func gattClientDidComplete(_ procedure: GATTProcedureKind, error: GATTClientError?) {
        completed = (procedure, error)
    }
}

struct PhoneReader {
    enum Phase { case idle, waiting, connecting, reading }

    var phase = Phase.idle
    var target = DeviceAddress(type: .randomDevice, address: .zero)
    /// When to connect: a little after detection, so a phone that is itself connecting to us
    /// finishes first (both roles on one pair of radios is legal but slower under test).
    var connectAt: UInt64 = 0
    var handle: UInt16 = 0
    var client = GATTClient<0>()
    var results = PhoneReadResults()
    var done = InlineArray<8, BDAddress>(repeating: .zero)
    var doneNext = 0

    var deadline: UInt64? {
        switch phase {
        case .waiting: return connectAt
        case .reading: return client.nextDeadline
        case .idle, .connecting: return nil
        }
    }

    func alreadyRead(_ address: BDAddress) -> Bool {
        for i in 0..<8 where done[i] == address { return true }
        return false
    }

    /// A Herald device was seen: schedule a read unless one is under way or it was read already.
    mutating func detected(_ peer: DeviceAddress, now: UInt64) {
        guard phase == .idle, !alreadyRead(peer.address) else { return }
        target = peer
        connectAt = now &+ 2_000
        phase = .waiting
    }

    mutating func timerFired(now: UInt64, connectedLinks: Int, control: inout StackControl) {
        switch phase {
        case .waiting where now >= connectAt:
            // Wait for a quiet radio: no link in either role.
            guard connectedLinks == 0 else { connectAt = now &+ 1_000; return }
            phase = .connecting
            control.stopScanning()
            if !control.connect(to: target, now: now) { phase = .idle }
        case .reading:
            if client.tick(now: now, delegate: &results) == .disconnect { control.disconnect(handle: handle) }
        default:
            break
        }
    }

    mutating func connected(_ link: ConnectionSummary, now: UInt64, control: inout StackControl) {
        guard phase == .connecting, link.role == .central, link.peer.address == target.address else { return }
        handle = link.handle
        client = GATTClient<0>()
        results = PhoneReadResults()
        phase = .reading
        start(.discoverPrimaryServices(uuid: HeraldIdentifiers.serviceUUID), now: now, control: &control)
    }

    mutating func start(_ procedure: borrowing GATTProcedure, now: UInt64, control: inout StackControl) {
        var request = FixedBytes<32>()
        do throws(GATTClientError) {
            try client.start(procedure, now: now, into: &request)
            control.sendATT(handle: handle, pdu: request.span)
        } catch {
            control.disconnect(handle: handle)
        }
    }

    /// A client-role ATT PDU on our link: feed the client, then start the next step when one ends.
    mutating func received(handle h: UInt16, pdu: Span<UInt8>, now: UInt64, control: inout StackControl) {
        guard phase == .reading, h == handle else { return }
        var reply = FixedBytes<32>()
        results.completed = nil
        switch client.handle(pdu: pdu, now: now, delegate: &results, reply: &reply) {
        case .send: control.sendATT(handle: handle, pdu: reply.span)
        case .disconnect: control.disconnect(handle: handle); return
        case .none: break
        }
        guard let (procedure, error) = results.completed else { return }
        guard error == nil else { control.disconnect(handle: handle); return }
        switch procedure {
        case .discoverPrimaryServices:
            guard let range = results.serviceRange else { control.disconnect(handle: handle); return }
            start(.discoverAllCharacteristics(serviceStart: range.start, serviceEnd: range.end), now: now, control: &control)
        case .discoverAllCharacteristics:
            guard results.payloadHandle != 0 else { control.disconnect(handle: handle); return }
            start(.readLong(handle: results.payloadHandle), now: now, control: &control)
        case .readLong:
            Log.put("sensor didRead payload="); Log.put(hex: results.payload.span)
            Log.put(" from="); Log.put(address: target.address); Log.end()
            done[doneNext] = target.address
            doneNext = (doneNext + 1) % 8
            control.disconnect(handle: handle)
        default:
            break
        }
    }

    /// Returns true when the link was ours (scanning should resume).
    mutating func disconnected(handle h: UInt16) -> Bool {
        guard phase == .reading, h == handle else { return false }
        phase = .idle
        return true
    }

    mutating func failedToConnect() {
        if phase == .connecting { phase = .idle }
    }
}
