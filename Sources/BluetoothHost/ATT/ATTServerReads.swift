// The ATT server's discovery and read requests (Core 5.4 Vol 3 Part F 3.4.3 and 3.4.4).

/// Room for the longest attribute value (Part F 3.2.9); values are read into it before they are cut
/// to what the response can carry, so a delegate may write a whole value without knowing the MTU.
typealias ATTValueScratch = FixedBytes<512>
/// Room for the longest response any MTU we accept can need (517 = 512 + the largest header).
typealias ATTResponseScratch = FixedBytes<517>

extension GATTDatabase {
    /// Values whose length cannot change: declarations, per-link descriptors, the hash, and stored
    /// values created full. Only these can be "fixed length" for Attribute Not Long (Part F 3.4.4.5).
    func hasFixedLength(_ handle: UInt16) -> Bool {
        guard let a = attribute(handle) else { return false }
        switch a.storage {
        case .constant, .perLink, .databaseHash: return true
        case .stored(_, let length, let capacity): return length == capacity
        case .dynamic: return false
        }
    }

    func isGroupType(_ uuid: BluetoothUUID) -> Bool {
        uuid.uuid16 == GATTAttributeType.primaryService || uuid.uuid16 == GATTAttributeType.secondaryService
    }
}

extension ATTServer {
    /// Read Request and Read Blob Request (Part F 3.4.4.3, 3.4.4.5). Out of line, as `discover` is:
    /// each has a 512-octet value scratch, and inlined into the request switch the one's frame
    /// came on top of the other's.
    @inline(never)
    func read<let A: Int, let V: Int, let L: Int, D: GATTServerDelegate, Out: ByteSink>(
        _ opcode: ATTOpcode, handle: UInt16, offset: Int, _ c: inout Context,
        _ db: inout GATTDatabase<A, V, L>, _ delegate: inout D, _ out: inout Out
    ) -> ATTServerAction {
        if let e = db.checkAccess(handle, write: false, security: c.security) { return error(opcode, handle, e, &out) }
        if opcode == .readBlobRequest, db.hasFixedLength(handle),
           let length = db.valueLength(handle, connection: c.connection), length <= c.mtu - 3 {
            return error(opcode, handle, .attributeNotLong, &out)
        }
        var value = ATTValueScratch()
        if let e = db.readValue(handle, connection: c.connection, offset: offset, delegate: &delegate, into: &value) {
            return error(opcode, handle, e, &out)
        }
        let n = min(value.count, c.mtu - 1)
        out.append(opcode == .readRequest ? ATTOpcode.readResponse.rawValue : ATTOpcode.readBlobResponse.rawValue)
        out.append(contentsOf: value.span.extracting(0..<n))
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
    func discover<let A: Int, let V: Int, let L: Int, D: GATTServerDelegate, Out: ByteSink>(
        _ op: ATTOpcode, from start: UInt16, to end: UInt16, type: BluetoothUUID, value wanted: Span<UInt8>,
        _ c: inout Context, _ db: inout GATTDatabase<A, V, L>, _ delegate: inout D, _ out: inout Out
    ) -> ATTServerAction {
        guard checkRange(start, end) else { return error(op, start, .invalidHandle, &out) }
        let grouping = db.isGroupType(type)
        if op == .readByGroupTypeRequest, !grouping { return error(op, start, .unsupportedGroupType, &out) }
        // Response opcodes are the request's plus one (Part F 3.4.8).
        var list = ATTListWriter(response: ATTOpcode(rawValue: op.rawValue &+ 1), mtu: UInt16(truncatingIfNeeded: c.mtu))
        // A 128-bit type with a 16-bit form is compared in that form, as the database holds it.
        let type16 = type.uuid16
        var value = ATTValueScratch()
        var h = Int(start)
        walk: while h <= min(Int(end), db.count) {
            defer { h &+= 1 }
            let handle = UInt16(truncatingIfNeeded: h)
            value.removeAll()
            var groupEnd = handle
            if op == .findInformationRequest {
                let t = db.entry(h &- 1).type
                t.write(to: &value, size: t.shortestWireSize)
            } else {
                if let type16 {
                    guard db.entryIsType(h &- 1, type16) else { continue }
                } else {
                    guard db.entry(h &- 1).type == type else { continue }
                }
                if op == .readByGroupTypeRequest {
                    value.append(contentsOf: db.value(handle))
                } else {
                    let failure = db.checkAccess(handle, write: false, security: c.security)
                        ?? db.readValue(handle, connection: c.connection, offset: 0, delegate: &delegate, into: &value)
                    if op == .findByTypeValueRequest {
                        guard failure == nil, Self.same(value.span, wanted) else { continue }
                        value.removeAll()
                    } else if let failure {
                        if list.budget.isEmpty { return error(op, handle, failure, &out) }
                        break walk
                    }
                }
                if grouping, list.hasGroupEnd { groupEnd = db.groupEnd(ofService: handle) }
            }
            guard list.append(handle: handle, groupEnd: groupEnd, value: value.span, to: &out) else { break }
        }
        guard !list.budget.isEmpty else { return error(op, start, .attributeNotFound, &out) }
        return .respond
    }

    /// Whether two octet strings are equal. On spans: `FixedBytes.elementsEqual` copied the 512-octet
    /// value scratch first (another 512 octets of stack).
    static func same(_ a: Span<UInt8>, _ b: Span<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        for i in 0..<a.count where a[i] != b[i] { return false }
        return true
    }

    /// Read Multiple (Part F 3.4.4.7) and Read Multiple Variable (3.4.4.11) Requests: every handle
    /// must be readable, else the first failure is the answer. The response is assembled aside so
    /// an error found late never leaves a half-written PDU in `out`.
    func readMultiple<let A: Int, let V: Int, let L: Int, D: GATTServerDelegate, Out: ByteSink>(
        _ opcode: ATTOpcode, _ handles: borrowing ATTHandleList, _ c: inout Context,
        _ db: inout GATTDatabase<A, V, L>, _ delegate: inout D, _ out: inout Out
    ) -> ATTServerAction {
        let variable = opcode == .readMultipleVariableRequest
        var pdu = ATTResponseScratch()
        var tuples = ATTReadMultipleVariableResponse.Builder(mtu: UInt16(truncatingIfNeeded: c.mtu))
        if !variable { pdu.append(ATTOpcode.readMultipleResponse.rawValue) }
        for i in 0..<handles.count {
            let handle = handles[i]
            var value = ATTValueScratch()
            let failure = db.checkAccess(handle, write: false, security: c.security)
                ?? db.readValue(handle, connection: c.connection, offset: 0, delegate: &delegate, into: &value)
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
