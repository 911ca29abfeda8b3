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
    /// Read Request and Read Blob Request (Part F 3.4.4.3, 3.4.4.5).
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

    /// Find Information Request (Part F 3.4.3.1): handles and types; one UUID size per response.
    func findInformation<let A: Int, let V: Int, let L: Int, Out: ByteSink>(
        _ r: ATTFindInformationRequest, _ c: inout Context, _ db: inout GATTDatabase<A, V, L>, _ out: inout Out
    ) -> ATTServerAction {
        let op = ATTOpcode.findInformationRequest
        guard checkRange(r.startingHandle, r.endingHandle) else { return error(op, r.startingHandle, .invalidHandle, &out) }
        var builder = ATTFindInformationResponse.Builder(mtu: UInt16(truncatingIfNeeded: c.mtu))
        var h = Int(r.startingHandle)
        while h <= min(Int(r.endingHandle), db.count) {
            guard builder.append(handle: UInt16(truncatingIfNeeded: h), type: db.entry(h - 1).type, to: &out) else { break }
            h += 1
        }
        guard !builder.budget.isEmpty else { return error(op, r.startingHandle, .attributeNotFound, &out) }
        return .respond
    }

    /// Find By Type Value Request (Part F 3.4.3.3): attributes of a 16-bit type whose value matches;
    /// for grouping attributes (services) the group end is reported, else the handle itself.
    func findByTypeValue<let A: Int, let V: Int, let L: Int, D: GATTServerDelegate, Out: ByteSink>(
        _ r: borrowing ATTFindByTypeValueRequest, _ c: inout Context, _ db: inout GATTDatabase<A, V, L>,
        _ delegate: inout D, _ out: inout Out
    ) -> ATTServerAction {
        let op = ATTOpcode.findByTypeValueRequest
        guard checkRange(r.startingHandle, r.endingHandle) else { return error(op, r.startingHandle, .invalidHandle, &out) }
        var builder = ATTFindByTypeValueResponse.Builder(mtu: UInt16(truncatingIfNeeded: c.mtu))
        var h = Int(r.startingHandle)
        while h <= min(Int(r.endingHandle), db.count) {
            defer { h += 1 }
            let handle = UInt16(truncatingIfNeeded: h)
            let a = db.entry(h - 1)
            guard a.type.uuid16 == r.attributeType,
                  db.checkAccess(handle, write: false, security: c.security) == nil else { continue }
            var value = ATTValueScratch()
            guard db.readValue(handle, connection: c.connection, offset: 0, delegate: &delegate, into: &value) == nil,
                  value.elementsEqual(r.attributeValue) else { continue }
            let end = db.isGroupType(a.type) ? db.groupEnd(ofService: handle) : handle
            guard builder.append(foundAttributeHandle: handle, groupEndHandle: end, to: &out) else { break }
        }
        guard !builder.budget.isEmpty else { return error(op, r.startingHandle, .attributeNotFound, &out) }
        return .respond
    }

    /// Read By Type Request (Part F 3.4.4.1). An attribute that cannot be read ends the list; if it is
    /// the first match, its error is the answer, on its handle.
    func readByType<let A: Int, let V: Int, let L: Int, D: GATTServerDelegate, Out: ByteSink>(
        _ r: ATTReadByTypeRequest, _ c: inout Context, _ db: inout GATTDatabase<A, V, L>,
        _ delegate: inout D, _ out: inout Out
    ) -> ATTServerAction {
        let op = ATTOpcode.readByTypeRequest
        guard checkRange(r.startingHandle, r.endingHandle) else { return error(op, r.startingHandle, .invalidHandle, &out) }
        var builder = ATTReadByTypeResponse.Builder(mtu: UInt16(truncatingIfNeeded: c.mtu))
        var h = Int(r.startingHandle)
        while h <= min(Int(r.endingHandle), db.count) {
            defer { h += 1 }
            let handle = UInt16(truncatingIfNeeded: h)
            guard db.entry(h - 1).type == r.attributeType else { continue }
            var value = ATTValueScratch()
            let failure = db.checkAccess(handle, write: false, security: c.security)
                ?? db.readValue(handle, connection: c.connection, offset: 0, delegate: &delegate, into: &value)
            if let failure {
                if builder.budget.isEmpty { return error(op, handle, failure, &out) }
                break
            }
            guard builder.append(handle: handle, value: value.span, to: &out) else { break }
        }
        guard !builder.budget.isEmpty else { return error(op, r.startingHandle, .attributeNotFound, &out) }
        return .respond
    }

    /// Read By Group Type Request (Part F 3.4.4.9): only primary and secondary service declarations
    /// group attributes (Part G 2.5.3); anything else is Unsupported Group Type.
    func readByGroupType<let A: Int, let V: Int, let L: Int, Out: ByteSink>(
        _ r: ATTReadByGroupTypeRequest, _ c: inout Context, _ db: inout GATTDatabase<A, V, L>, _ out: inout Out
    ) -> ATTServerAction {
        let op = ATTOpcode.readByGroupTypeRequest
        guard checkRange(r.startingHandle, r.endingHandle) else { return error(op, r.startingHandle, .invalidHandle, &out) }
        guard db.isGroupType(r.attributeGroupType) else { return error(op, r.startingHandle, .unsupportedGroupType, &out) }
        var builder = ATTReadByGroupTypeResponse.Builder(mtu: UInt16(truncatingIfNeeded: c.mtu))
        var h = Int(r.startingHandle)
        while h <= min(Int(r.endingHandle), db.count) {
            defer { h += 1 }
            let handle = UInt16(truncatingIfNeeded: h)
            // isGroupType: a 16-bit type.
            guard db.entryIsType(h - 1, r.attributeGroupType.uuid16 ?? 0) else { continue }
            guard builder.append(handle: handle, endGroupHandle: db.groupEnd(ofService: handle),
                                 value: db.value(handle), to: &out) else { break }
        }
        guard !builder.budget.isEmpty else { return error(op, r.startingHandle, .attributeNotFound, &out) }
        return .respond
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
