// Embedded Swift emits generic code only where it is specialised, so the embedded gate
// (Tools/embedded-check) would never compile the ATT server, notify/indicate or the database builder
// unless something in the core instantiates them. This function does, with the standard sizes, so an
// allocation or existential slipping into those paths fails the gate. It is not meant to be called;
// the linker drops it from firmware that does not reference it.

struct _ATTGateDelegate: GATTServerDelegate {
    mutating func read<S: ByteSink>(id: UInt16, connection: Int, offset: Int, into sink: inout S) -> ATTErrorCode? {
        sink.append(UInt8(truncatingIfNeeded: offset))
        return nil
    }
    mutating func write(id: UInt16, connection: Int, offset: Int, value: Span<UInt8>) -> ATTErrorCode? { nil }
}

public func _attGateInstantiation(pdu: Span<UInt8>, now: UInt64, out: inout FixedBytes<517>) -> ATTServerAction {
    var bearer = ATTStandardBearer()
    var delegate = _ATTGateDelegate()
    do throws(GATTDatabaseError) {
        var db = try GATTStandardDatabase(deviceName: pdu)
        try db.addPrimaryService(BluetoothUUID(uuid16: 0x180F))
        let c = try db.addCharacteristic(BluetoothUUID(uuid16: 0x2A19), properties: .read | .notify | .indicate,
                                         permissions: .read, value: .dynamic(id: 1))
        try db.addDescriptor(BluetoothUUID(uuid16: 0x2901), permissions: .read, value: .stored(pdu, maxLength: 8))
        let server = ATTServer()
        let action = server.handle(pdu: pdu, bearer: &bearer, connection: 0, now: now, database: &db,
                                   delegate: &delegate, response: &out)
        _ = server.notify(handle: c.value, value: pdu, bearer: bearer, connection: 0, database: db, into: &out)
        _ = server.indicate(handle: c.value, value: pdu, bearer: &bearer, connection: 0, now: now, database: db, into: &out)
        _ = server.poll(bearer: &bearer, now: now)
        return action
    } catch {
        return .none
    }
}
