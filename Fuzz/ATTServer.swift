// libFuzzer target: the ATT server (Core 5.4 Vol 3 Part F) against a Herald-shaped GATT database
// (GAP + GATT services, the Herald service 428132af-… with the payload characteristic (read, dynamic)
// and the signal characteristic (write / write without response / notify, dynamic), plus a stored
// read-only and a stored writable characteristic). Built by Tools/fuzz; host-only code.
// Input: a sequence of PDUs `[n][n bytes]` from one client; the first byte picks the link's security.
// Invariants: no trap or over-read; `.respond` means exactly one PDU no longer than ATT_MTU that parses
// as the response to that request or as an Error Response naming it; commands and responses get no
// answer; the MTU only grows from 23 to at most our maximum; attributes that are not writable never
// change (a peer can only change writable values and CCCDs).
import BluetoothHost
import Herald

func check(_ condition: Bool, _ message: StaticString) {
    if !condition { fatalError("invariant: \(message)") }
}

struct Sink: ATTResponseSink {
    var bytes: [UInt8] = []
    mutating func append(_ byte: UInt8) { bytes.append(byte) }
    var count: Int { bytes.count }
    mutating func withSpan<R>(_ body: (Span<UInt8>) -> R) -> R { body(bytes.span) }
    mutating func truncate(to length: Int) { if length < bytes.count { bytes.removeLast(bytes.count - max(0, length)) } }
}

struct HeraldDelegate: GATTServerDelegate {
    var payload: [UInt8] = [0x10, 0x03, 0x3A, 0x00, 0x01] + [UInt8](repeating: 0x5A, count: 16) + [UInt8](repeating: 0x42, count: 60)
    var signalBytes = 0
    mutating func read<S: ByteSink>(id: UInt16, link: UInt16, offset: Int, into sink: inout S) -> ATTErrorCode? {
        guard id == 1 else { return .readNotPermitted }
        guard offset <= payload.count else { return .invalidOffset }
        for b in payload[offset...] { sink.append(b) }
        return nil
    }
    mutating func write(id: UInt16, link: UInt16, offset: Int, value: Span<UInt8>) -> ATTErrorCode? {
        check(id == 2, "only the signal characteristic is written through the delegate")
        check(value.count <= ATTMTU.maximumAttributeLength, "written value within 512")
        signalBytes += value.count
        return nil
    }
}

typealias Database = GATTDatabase<32, 512, 2>

struct Fixture {
    var db: Database
    var writable: [Bool] = []        // per handle (index handle-1): may a peer change its stored value?
    init() {
        do {
            db = try Database(deviceName: Array("HERALD".utf8).span)
            try db.addPrimaryService(HeraldIdentifiers.serviceUUID)
            try db.addCharacteristic(HeraldIdentifiers.payloadCharacteristicUUID, properties: .read,
                                     permissions: .read, value: .dynamic(id: 1))
            try db.addCharacteristic(HeraldIdentifiers.androidSignalCharacteristicUUID,
                                     properties: .write | .writeWithoutResponse | .notify,
                                     permissions: .write, value: .dynamic(id: 2))
            try db.addPrimaryService(BluetoothUUID(uuid16: 0x180A))
            let fixed: [UInt8] = [0x68, 0x65, 0x72, 0x61, 0x6C, 0x64]
            try db.addCharacteristic(BluetoothUUID(uuid16: 0x2A29), properties: .read, permissions: .read,
                                     value: .stored(fixed.span, maxLength: 6))
            try db.addCharacteristic(BluetoothUUID(uuid16: 0x2A24), properties: .read | .write | .indicate,
                                     permissions: .readWrite, value: .stored(fixed.span, maxLength: 40))
        } catch { fatalError("database") }
        for h in 1...UInt16(db.count) {
            let a = db.attribute(h)!
            writable.append(a.permissions.contains(.write) || a.type == BluetoothUUID(uuid16: GATTAttributeType.clientCharacteristicConfiguration))
        }
    }
}

let fixture = Fixture()

/// The two links a fuzz input may come on, named as a host's connection table names them: 0x0040
/// in its first entry, 0x0041 in its second.
let links: [GATTServerLink] = {
    var table = ConnectionTable<2, 27, NoConnectionExtra>()
    for h: UInt16 in [0x0040, 0x0041] {
        do {
            try table.insert(handle: h, role: .peripheral, peer: DeviceAddress(type: .publicDevice, address: .zero),
                             timing: ConnectionTiming(interval: 24, latency: 0, supervisionTimeout: 400))
        } catch { fatalError("links") }
    }
    do { return [try table.serverLink(handle: 0x0040), try table.serverLink(handle: 0x0041)] } catch { fatalError("links") }
}()

func snapshot(_ db: borrowing Database) -> [[UInt8]] {
    var all: [[UInt8]] = []
    for h in 1...UInt16(db.count) {
        for link in links {
            let v = db.value(h, link: link)
            var copy: [UInt8] = []
            for i in 0..<v.count { copy.append(v[i]) }
            all.append(copy)
        }
    }
    return all
}

/// Does `response` parse as the answer to `request`?
func isValidResponse(to request: ATTOpcode, _ r: Span<UInt8>) -> Bool {
    if r[0] == ATTOpcode.errorResponse.rawValue {
        guard let e = try? ATTErrorResponse(r) else { return false }
        return e.requestOpcode == request && e.error.rawValue != 0
    }
    switch request {
    case .exchangeMTURequest: return (try? ATTExchangeMTUResponse(r)) != nil
    case .findInformationRequest: return (try? ATTFindInformationResponse(r)) != nil
    case .findByTypeValueRequest: return (try? ATTFindByTypeValueResponse(r)) != nil
    case .readByTypeRequest: return (try? ATTReadByTypeResponse(r)) != nil
    case .readRequest: return (try? ATTReadResponse(r)) != nil
    case .readBlobRequest: return (try? ATTReadBlobResponse(r)) != nil
    case .readMultipleRequest: return (try? ATTReadMultipleResponse(r)) != nil
    case .readMultipleVariableRequest: return (try? ATTReadMultipleVariableResponse(r)) != nil
    case .readByGroupTypeRequest: return (try? ATTReadByGroupTypeResponse(r)) != nil
    case .writeRequest: return (try? ATTWriteResponse(r)) != nil
    case .prepareWriteRequest: return (try? ATTPrepareWriteResponse(r)) != nil
    case .executeWriteRequest: return (try? ATTExecuteWriteResponse(r)) != nil
    default: return false
    }
}

func fuzzOne(_ input: Span<UInt8>) {
    guard input.count > 0 else { return }
    var db = fixture.db
    var delegate = HeraldDelegate()
    var bearer = ATTStandardBearer()
    let flags = input[0]
    bearer.security.encrypted = flags & 1 != 0
    bearer.security.authenticated = flags & 2 != 0
    let server = ATTServer(maximumMTU: flags & 4 != 0 ? 517 : ATTMTU.defaultMaximum)
    let connection = Int(flags >> 7)
    var before = snapshot(db)
    var offset = 1
    var now: UInt64 = 0
    while offset < input.count {
        let n = Int(input[offset])
        offset += 1
        let end = min(input.count, offset + n)
        let pdu = input.extracting(offset..<end)
        offset = end
        now &+= 10
        var response = Sink()
        let mtuBefore = bearer.mtu
        let action = server.handle(pdu: pdu, bearer: &bearer,
                                   link: links[connection], now: now,
                                   database: &db, delegate: &delegate, response: &response)
        check(bearer.mtu >= ATTMTU.minimum && bearer.mtu <= server.maximumMTU, "MTU range")
        check(bearer.mtu == mtuBefore || mtuBefore == ATTMTU.minimum, "MTU changes once")
        switch action {
        case .respond:
            check(response.bytes.count > 0, "a response is sent")
            check(response.bytes.count <= Int(mtuBefore) || response.bytes[0] == ATTOpcode.exchangeMTUResponse.rawValue,
                  "response within ATT_MTU")
            check(pdu.count > 0 && ATTOpcode(rawValue: pdu[0]).kind == .request, "only requests are answered")
            check(isValidResponse(to: ATTOpcode(rawValue: pdu[0]), response.bytes.span), "response parses as the answer")
        case .none, .indicationConfirmed:
            check(response.bytes.isEmpty, "no bytes without .respond")
        case .disconnect:
            check(response.bytes.isEmpty, "no bytes on disconnect")
        }
        // Values a peer may not write never change.
        var i = 0
        for h in 1...UInt16(db.count) {
            for link in links {
                let v = db.value(h, link: link)
                var same = v.count == before[i].count
                if same { for k in 0..<v.count where v[k] != before[i][k] { same = false; break } }
                if !same {
                    check(fixture.writable[i / 2], "a non-writable attribute changed")
                    var copy: [UInt8] = []
                    for k in 0..<v.count { copy.append(v[k]) }
                    before[i] = copy
                }
                i += 1
            }
        }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let buffer = UnsafeBufferPointer(start: size > 0 ? data : nil, count: size)
    fuzzOne(buffer.span)
    return 0
}
