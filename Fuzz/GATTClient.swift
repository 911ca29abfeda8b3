// libFuzzer target: the GATT client (Core 5.4 Vol 3 Part G 4) handling whatever a peer sends to the
// client role. Built by Tools/fuzz; host-only code.
// Input: `[procedure][n][PDU]…`: the first byte picks the procedure to start (and the next one each
// time a procedure completes, cycling through all of them); each record is one ATT PDU from the peer
// (responses, notifications, indications, and anything else). Time advances 1 s per PDU.
// Invariants: no trap or over-read; every PDU the client writes (first request, next request,
// confirmation) is one well-formed request/command/confirmation no longer than ATT_MTU; `.none`
// writes nothing; each started procedure completes at most once and the client is idle after; the
// MTU stays within 23…our maximum; discovered services/characteristics/descriptors and read chunks
// respect the handle and length rules.
import BluetoothHost
import Herald

func check(_ condition: Bool, _ message: StaticString) {
    if !condition { fatalError("invariant: \(message)") }
}

struct Sink: ByteSink {
    var bytes: [UInt8] = []
    mutating func append(_ byte: UInt8) { bytes.append(byte) }
}

struct Delegate: GATTClientDelegate {
    var completions = 0
    var mtu: UInt16 = 23
    var readEnd = 0
    mutating func gattClientDidExchangeMTU(_ mtu: UInt16) {
        check(mtu >= ATTMTU.minimum && mtu <= 517, "exchanged MTU range")
    }
    mutating func gattClientDidDiscover(service: GATTDiscoveredService) {
        check(service.startHandle != 0 && service.startHandle <= service.endHandle, "service range")
    }
    mutating func gattClientDidDiscover(characteristic: GATTDiscoveredCharacteristic) {
        check(characteristic.declarationHandle != 0, "declaration handle")
        check(characteristic.valueHandle > characteristic.declarationHandle, "value handle follows its declaration")
    }
    mutating func gattClientDidDiscover(descriptor: GATTDiscoveredDescriptor) {
        check(descriptor.handle != 0, "descriptor handle")
    }
    mutating func gattClientDidRead(handle: UInt16, offset: Int, value: Span<UInt8>) {
        check(handle != 0, "read handle")
        check(value.count <= Int(mtu) - 1, "read chunk within ATT_MTU-1")
        check(offset >= 0 && offset + value.count <= ATTMTU.maximumAttributeLength, "read within 512")
    }
    mutating func gattClientDidComplete(_ procedure: GATTProcedureKind, error: GATTClientError?) {
        completions += 1
    }
}

/// Is `pdu` one well-formed PDU the client role may send?
func isClientPDU(_ pdu: [UInt8]) -> Bool {
    guard !pdu.isEmpty else { return false }
    let s = pdu.span
    switch ATTOpcode(rawValue: pdu[0]) {
    case .exchangeMTURequest: return (try? ATTExchangeMTURequest(s)) != nil
    case .findInformationRequest: return (try? ATTFindInformationRequest(s)) != nil
    case .findByTypeValueRequest: return (try? ATTFindByTypeValueRequest(s)) != nil
    case .readByTypeRequest: return (try? ATTReadByTypeRequest(s)) != nil
    case .readRequest: return (try? ATTReadRequest(s)) != nil
    case .readBlobRequest: return (try? ATTReadBlobRequest(s)) != nil
    case .readByGroupTypeRequest: return (try? ATTReadByGroupTypeRequest(s)) != nil
    case .writeRequest: return (try? ATTWriteRequest(s)) != nil
    case .writeCommand: return (try? ATTWriteCommand(s)) != nil
    case .prepareWriteRequest: return (try? ATTPrepareWriteRequest(s)) != nil
    case .executeWriteRequest: return (try? ATTExecuteWriteRequest(s)) != nil
    case .handleValueConfirmation: return (try? ATTHandleValueConfirmation(s)) != nil
    default: return false
    }
}

let longValue = [UInt8](repeating: 0xA5, count: 300)
let shortValue: [UInt8] = [0x02, 0xD6, 0xFF]

/// Starts procedure number `n` (of 11); returns whether a transaction began.
func start(_ n: Int, _ client: inout GATTStandardClient, now: UInt64) -> Bool {
    var request = Sink()
    let mtuBefore = client.mtu
    do {
        switch n % 11 {
        case 0: try client.start(.exchangeMTU, now: now, into: &request)
        case 1: try client.start(.discoverAllPrimaryServices, now: now, into: &request)
        case 2: try client.start(.discoverPrimaryServices(uuid: HeraldIdentifiers.serviceUUID), now: now, into: &request)
        case 3: try client.start(.discoverAllCharacteristics(serviceStart: 0x000E, serviceEnd: 0x0012), now: now, into: &request)
        case 4: try client.start(.discoverAllDescriptors(start: 0x0011, end: 0xFFFF), now: now, into: &request)
        case 5: try client.start(.read(handle: 0x0010), now: now, into: &request)
        case 6: try client.start(.readLong(handle: 0x0010), now: now, into: &request)
        case 7: try client.start(.write(handle: 0x0012, value: shortValue.span), now: now, into: &request)
        case 8: try client.start(.writeLong(handle: 0x0012, value: longValue.span), now: now, into: &request)
        case 9: try client.start(.setClientConfiguration(descriptorHandle: 0x0013, .notification), now: now, into: &request)
        default: try client.start(.writeWithoutResponse(handle: 0x0012, value: shortValue.span), now: now, into: &request)
        }
    } catch {
        check(request.bytes.isEmpty, "nothing written when start throws")
        return false
    }
    check(isClientPDU(request.bytes), "first request well formed")
    check(request.bytes.count <= Int(mtuBefore), "first request within ATT_MTU")
    return n % 11 != 10
}

func fuzzOne(_ input: Span<UInt8>) {
    guard input.count > 0 else { return }
    var client = GATTStandardClient(maximumMTU: 247)
    var delegate = Delegate()
    var now: UInt64 = 1_000
    var next = Int(input[0])
    var started = start(next, &client, now: now) ? 1 : 0
    var offset = 1
    while offset < input.count {
        let n = Int(input[offset])
        offset += 1
        let end = min(input.count, offset + n)
        let pdu = input.extracting(offset..<end)
        offset = end
        now += 1_000
        delegate.mtu = client.mtu
        var reply = Sink()
        let mtuBefore = client.mtu
        let action = client.handle(pdu: pdu, now: now, delegate: &delegate, reply: &reply)
        check(client.mtu >= ATTMTU.minimum && client.mtu <= client.maximumMTU, "MTU range")
        switch action {
        case .send:
            check(isClientPDU(reply.bytes), "reply well formed")
            check(reply.bytes.count <= Int(max(mtuBefore, client.mtu)), "reply within ATT_MTU")
        case .none, .disconnect:
            check(reply.bytes.isEmpty, "nothing written without .send")
        }
        check(delegate.completions <= started, "each procedure completes at most once")
        if delegate.completions == started {
            check(!client.isBusy, "idle after completion")
            if !client.isTimedOut {
                next += 1
                if start(next, &client, now: now) { started += 1 }
            }
        }
    }
    // The transaction timer ends whatever is outstanding.
    let action = client.tick(now: now + 31_000, delegate: &delegate)
    check(delegate.completions == started, "every started procedure completed by the timeout")
    check(action == .none || client.isTimedOut, "timeout closes the bearer")
}

@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let buffer = UnsafeBufferPointer(start: size > 0 ? data : nil, count: size)
    fuzzOne(buffer.span)
    return 0
}
