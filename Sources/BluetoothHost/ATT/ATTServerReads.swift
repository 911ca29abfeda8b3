// The ATT server's discovery and read requests (Core 5.4 Vol 3 Part F 3.4.3 and 3.4.4).

/// What the ATT server writes a response into, and the type of its one scratch value (discovery
/// reads values aside before it knows whether they join the list): a PDU buffer on a device, a
/// growable array in tests. One type for both, so a database's value reads are specialised once,
/// not once for the response and again for a scratch. A buffer must hold an ATT_MTU-sized PDU
/// (`LEApplication.LinkBuffers`): values longer than that are cut where the buffer ends, which
/// never shortens what a response carries (at most ATT_MTU - 1 octets of a value) and makes a
/// longer value unequal to any a request can carry (Find By Type Value: ATT_MTU - 7 octets).
public protocol ATTResponseSink: ByteSink {
    init()
    /// Octets written so far.
    var count: Int { get }
    /// Keeps the first `length` octets (none removed when it holds no more than that).
    mutating func truncate(to length: Int)
    /// Mutating although it only reads: called on a non-mutating method, a buffer held in a local
    /// was first copied whole into the caller's frame (Swift 6.3, Embedded, -Osize: 0.25 KB more
    /// main-loop stack for the wearable's 247-octet PDUs).
    mutating func withSpan<R>(_ body: (Span<UInt8>) -> R) -> R
}

extension FixedBytes: ATTResponseSink {}
/// Room for the longest response any MTU we accept can need (517 = 512 + the largest header).
typealias ATTResponseScratch = FixedBytes<517>
/// Room for the longest attribute value (Part F 3.2.9), for Read Multiple Variable, whose tuples give
/// each value's whole length even where the list is cut (3.4.4.12).
typealias ATTValueScratch = FixedBytes<512>

extension ATTServer {
    /// Read Request and Read Blob Request (Part F 3.4.4.3, 3.4.4.5). The value is read straight into
    /// the response after its opcode and cut to ATT_MTU - 1 octets there; a read that fails takes
    /// back what it wrote and the Error Response is written instead. (Read into a 512-octet scratch
    /// first, it cost the host's ATT read round trip a fifth more time and the firmware 512 octets of
    /// stack.) Out of line: inlined into the request switch, its frame came on top of `discover`'s.
    @inline(never)
    func read<DB: GATTAttributeDatabase, D: GATTServerDelegate, Out: ATTResponseSink>(
        _ opcode: ATTOpcode, handle: UInt16, offset: Int, _ c: inout Context,
        _ db: inout DB, _ delegate: inout D, _ out: inout Out
    ) -> ATTServerAction {
        if let e = db.checkAccess(handle, write: false, security: c.security) { return error(opcode, handle, e, &out) }
        // Attribute Not Long is a "may" for a fixed value that fits one response; an offset past
        // the end is Invalid Offset, a "shall" (Part F 3.4.4.5), so it is checked first (EDTT
        // GATT/SR/GAR/BI-13-C reads each value at its length + 1).
        if opcode == .readBlobRequest, db.hasFixedLength(handle),
           let length = db.valueLength(handle, link: c.link), length <= c.mtu &- 3, offset <= length {  // ATT_MTU is at least 23
            return error(opcode, handle, .attributeNotLong, &out)
        }
        let start = out.count
        out.append(opcode == .readRequest ? ATTOpcode.readResponse.rawValue : ATTOpcode.readBlobResponse.rawValue)
        if let e = db.readValue(handle, link: c.link, offset: offset, delegate: &delegate, into: &out) {
            out.truncate(to: start)
            return error(opcode, handle, e, &out)
        }
        out.truncate(to: start &+ c.mtu)  // a count and an ATT_MTU (16-bit): no overflow
        return .respond
    }

    /// The four discovery requests: Find Information (Part F 3.4.3.1: handles and types, one UUID
    /// size per response), Find By Type Value (3.4.3.3: attributes of a 16-bit type whose value
    /// matches `wanted`; for grouping attributes the group end, else the handle itself), Read By Type
    /// (3.4.4.1: an attribute that cannot be read ends the list, and if it is the first match its
    /// error is the answer, on its handle) and Read By Group Type (3.4.4.9: only primary and secondary
    /// service declarations group attributes, Part G 2.5.3; anything else is Unsupported Group Type).
    /// One walk over the handle range serves all four, as one list writer writes their responses:
    /// as four functions they were 2.2 KB of a 24 KB beacon image.
    func discover<DB: GATTAttributeDatabase, D: GATTServerDelegate, Out: ATTResponseSink>(
        _ op: ATTOpcode, from start: UInt16, to end: UInt16, type: BluetoothUUID, value wanted: Span<UInt8>,
        _ c: inout Context, _ db: inout DB, _ delegate: inout D, _ out: inout Out
    ) -> ATTServerAction {
        guard checkRange(start, end) else { return error(op, start, .invalidHandle, &out) }
        // Only primary and secondary service declarations group attributes (Part G 2.5.3).
        let grouping = type.uuid16 == GATTAttributeType.primaryService || type.uuid16 == GATTAttributeType.secondaryService
        if op == .readByGroupTypeRequest, !grouping { return error(op, start, .unsupportedGroupType, &out) }
        // Response opcodes are the request's plus one (Part F 3.4.8).
        var list = ATTListWriter(response: ATTOpcode(rawValue: op.rawValue &+ 1), mtu: UInt16(truncatingIfNeeded: c.mtu))
        // A 128-bit type with a 16-bit form is compared in that form, as the database holds it.
        let type16 = type.uuid16
        var value = Out()
        // Over attribute indices, not handles: a sparse table's handles have gaps.
        var i = db.firstIndex(atOrAfter: start)
        walk: while i < db.count {
            let handle = db.handle(at: i)
            guard handle <= end else { break }
            defer { i &+= 1 }
            value.truncate(to: 0)
            var groupEnd = handle
            if op == .findInformationRequest {
                let t = db.type(at: i)
                t.write(to: &value, size: t.shortestWireSize)
            } else {
                if let type16 {
                    guard db.hasType(type16, at: i) else { continue }
                } else {
                    guard db.type(at: i) == type else { continue }
                }
                if op == .readByGroupTypeRequest {
                    // A service declaration: a constant anyone may read (Part G 3.1).
                    _ = db.readValue(handle, link: c.link, offset: 0, delegate: &delegate, into: &value)
                } else {
                    let failure = db.checkAccess(handle, write: false, security: c.security)
                        ?? db.readValue(handle, link: c.link, offset: 0, delegate: &delegate, into: &value)
                    if op == .findByTypeValueRequest {
                        guard failure == nil, value.withSpan({ Self.same($0, wanted) }) else { continue }
                        value.truncate(to: 0)
                    } else if let failure {
                        if list.budget.isEmpty { return error(op, handle, failure, &out) }
                        break walk
                    }
                }
                if grouping, list.hasGroupEnd { groupEnd = db.groupEnd(ofService: handle) }
            }
            guard value.withSpan({ list.append(handle: handle, groupEnd: groupEnd, value: $0, to: &out) }) else { break }
        }
        guard !list.budget.isEmpty else { return error(op, start, .attributeNotFound, &out) }
        return .respond
    }

    /// Whether two octet strings are equal. On spans: `FixedBytes.elementsEqual` copied the value
    /// scratch first (another 512 octets of stack when it was 512 octets).
    static func same(_ a: Span<UInt8>, _ b: Span<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        for i in 0..<a.count where a[i] != b[i] { return false }
        return true
    }

    /// Read Multiple (Part F 3.4.4.7) and Read Multiple Variable (3.4.4.11) Requests: every handle
    /// must be readable, else the first failure is the answer. The response is assembled aside so
    /// an error found late never leaves a half-written PDU in `out`.
    func readMultiple<DB: GATTAttributeDatabase, D: GATTServerDelegate, Out: ByteSink>(
        _ opcode: ATTOpcode, _ handles: borrowing ATTHandleList, _ c: inout Context,
        _ db: inout DB, _ delegate: inout D, _ out: inout Out
    ) -> ATTServerAction {
        let variable = opcode == .readMultipleVariableRequest
        var pdu = ATTResponseScratch()
        var tuples = ATTReadMultipleVariableResponse.Builder(mtu: UInt16(truncatingIfNeeded: c.mtu))
        if !variable { pdu.append(ATTOpcode.readMultipleResponse.rawValue) }
        for i in 0..<handles.count {
            let handle = handles[i]
            var value = ATTValueScratch()
            let failure = db.checkAccess(handle, write: false, security: c.security)
                ?? db.readValue(handle, link: c.link, offset: 0, delegate: &delegate, into: &value)
            if let failure { return error(opcode, handle, failure, &out) }
            if variable {
                _ = tuples.append(value: value.span, to: &pdu)
            } else {
                let n = min(value.count, c.mtu - pdu.count)
                pdu.append(contentsOf: value.span.extracting(0..<n))
            }
        }
        if variable && pdu.isEmpty { pdu.append(ATTOpcode.readMultipleVariableResponse.rawValue) }
        out.append(contentsOf: pdu.span)
        return .respond
    }
}
