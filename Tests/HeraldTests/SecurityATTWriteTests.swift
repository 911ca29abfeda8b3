import Testing
import BluetoothHost
@testable import Herald

/// Issue 7 "Security": nothing a peer writes over ATT may change anything but writable characteristic
/// values and CCCDs. Every handle of a Herald-shaped database is written with Write Request, Write
/// Command and Prepare Write + Execute Write, and every stored value (for both link slots) is compared
/// before and after.
@Suite struct SecurityATTWriteTests {
    struct SignalSink: GATTServerDelegate {
        var writes: [(id: UInt16, link: UInt16, value: [UInt8])] = []
        mutating func read<S: ByteSink>(id: UInt16, link: UInt16, offset: Int, into sink: inout S) -> ATTErrorCode? {
            guard id == 1, offset <= 21 else { return .readNotPermitted }
            for i in offset..<21 { sink.append(UInt8(i)) }
            return nil
        }
        mutating func write(id: UInt16, link: UInt16, offset: Int, value: Span<UInt8>) -> ATTErrorCode? {
            var v: [UInt8] = []
            for i in value.indices { v.append(value[i]) }
            writes.append((id, link, v))
            return nil
        }
    }

    typealias Database = GATTDatabase<32, 512, 2>

    /// GAP + GATT services, the Herald service (payload: read, dynamic; signal: write / write
    /// without response / notify, dynamic, so it has a CCCD), and a stored read-only characteristic
    /// beside a stored writable one.
    static func database() throws -> (Database, signal: GATTCharacteristicHandles, writable: GATTCharacteristicHandles) {
        var db = try Database(deviceName: Array("HERALD".utf8).span)
        try db.addPrimaryService(HeraldIdentifiers.serviceUUID)
        try db.addCharacteristic(HeraldIdentifiers.payloadCharacteristicUUID, properties: .read,
                                 permissions: .read, value: .dynamic(id: 1))
        let signal = try db.addCharacteristic(HeraldIdentifiers.androidSignalCharacteristicUUID,
                                              properties: .write | .writeWithoutResponse | .notify,
                                              permissions: .write, value: .dynamic(id: 2))
        try db.addPrimaryService(BluetoothUUID(uuid16: 0x180A))
        let model = Array("nRF52".utf8)
        try db.addCharacteristic(BluetoothUUID(uuid16: 0x2A24), properties: .read, permissions: .read,
                                 value: .stored(model.span, maxLength: 8))
        let writable = try db.addCharacteristic(BluetoothUUID(uuid16: 0x2A25), properties: .read | .write,
                                                permissions: .readWrite, value: .stored(model.span, maxLength: 8))
        return (db, signal, writable)
    }

    static func values(_ db: borrowing Database) -> [[UInt8]] {
        var all: [[UInt8]] = []
        let links = ServerLinks([0x0040, 0x0041])
        for h in 1...UInt16(db.count) {
            for link in [links[0x0040], links[0x0041]] {
                let v = db.value(h, link: link)
                var copy: [UInt8] = []
                for i in v.indices { copy.append(v[i]) }
                all.append(copy)
            }
        }
        return all
    }

    enum Method: CaseIterable { case writeRequest, writeCommand, prepareAndExecute }

    func pdus(_ method: Method, handle: UInt16, value: [UInt8]) -> [[UInt8]] {
        let h = [UInt8(handle & 0xFF), UInt8(handle >> 8)]
        switch method {
        case .writeRequest: return [[0x12] + h + value]
        case .writeCommand: return [[0x52] + h + value]
        case .prepareAndExecute: return [[0x16] + h + [0, 0] + value, [0x18, 0x01]]
        }
    }

    @Test(arguments: Method.allCases)
    func peerWritesOnlyChangeWritableValuesAndCCCDs(method: Method) throws {
        let (pristine, signal, writable) = try Self.database()
        let cccdType = BluetoothUUID(uuid16: GATTAttributeType.clientCharacteristicConfiguration)
        var changedHandles: Set<UInt16> = []
        var delegateWrites: [UInt16] = []
        for handle in 1...UInt16(pristine.count) {
            var db = pristine
            var delegate = SignalSink()
            var bearer = ATTStandardBearer()
            let server = ATTServer()
            let attribute = try #require(db.attribute(handle))
            let before = Self.values(db)
            // 01 00 is a valid CCCD value (notifications) and a valid stored value.
            var responses: [[UInt8]] = []
            for pdu in pdus(method, handle: handle, value: [0x01, 0x00]) {
                var out: [UInt8] = []
                var sink = ArraySink()
                let action = server.handle(pdu: pdu.span, bearer: &bearer, link: ServerLinks()[0x0040], now: 1_000,
                                           database: &db, delegate: &delegate, response: &sink)
                out = sink.bytes
                if method == .writeCommand { #expect(action == .none && out.isEmpty) }
                responses.append(out)
            }
            let after = Self.values(db)
            let isWritable = attribute.permissions.contains(.write) || attribute.type == cccdType
            for h in 1...UInt16(db.count) {
                for link in 0..<2 {
                    let i = Int(h - 1) * 2 + link
                    guard before[i] != after[i] else { continue }
                    changedHandles.insert(h)
                    // Only the written handle may change, only if writable, and only for this link
                    // when the value is per link (CCCDs).
                    #expect(h == handle, "handle \(h) changed by a write to \(handle)")
                    #expect(isWritable, "non-writable handle \(h) changed")
                    if link == 1 { #expect(attribute.type != cccdType, "a CCCD write leaked to another link") }
                }
            }
            if !delegate.writes.isEmpty {
                delegateWrites.append(handle)
                #expect(delegate.writes.allSatisfy { $0.id == 2 && $0.link == 0x40 && $0.value == [0x01, 0x00] })
            }
            // A refused Write Request / Execute is answered with an Error Response naming the handle.
            if method != .writeCommand, !isWritable {
                let last = try #require(responses.last)
                let first = try #require(responses.first)
                let refused = first.first == 0x01 || last.first == 0x01
                #expect(refused, "write to read-only handle \(handle) was not refused: \(first) \(last)")
                let errorPDU = first.first == 0x01 ? first : last
                #expect(errorPDU.count == 5 && errorPDU[4] != 0)
            }
        }
        // Exactly the writable values changed: our writable characteristic, the signal's CCCD and GATT's
        // Client Supported Features (written by clients, Core 5.4 Vol 3 Part G 7.2). Service Changed's
        // CCCD only takes indications, so 01 00 is refused. The signal itself went to the application.
        #expect(pristine.clientSupportedFeaturesHandle != 0)
        if method == .writeCommand {
            // Write Commands reach only values that declare Write Without Response (Core 5.4 Vol 3
            // Part G 3.3.1.1) and descriptors: here the signal (to the app) and its CCCD.
            #expect(changedHandles == [signal.clientConfiguration])
        } else {
            #expect(changedHandles == [writable.value, signal.clientConfiguration, pristine.clientSupportedFeaturesHandle])
        }
        #expect(delegateWrites == [signal.value])
    }
}
