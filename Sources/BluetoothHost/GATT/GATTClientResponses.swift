// How the GATT client answers each response (Core 5.4 Vol 3 Part G 4.3–4.12): report what it carries,
// then either write the procedure's next request or complete.

extension GATTClient {
    /// Dispatches a response-kind PDU to the outstanding phase.
    mutating func handleResponse<D: GATTClientDelegate, R: ByteSink>(
        _ opcode: ATTOpcode, pdu: Span<UInt8>, now: UInt64, delegate: inout D, reply: inout R
    ) -> GATTClientAction {
        let expected = phase.expectedResponse
        let step: Step
        do throws(GATTClientError) {
            if opcode == .errorResponse {
                let e: ATTErrorResponse
                do throws(DecodeError) { e = try ATTErrorResponse(pdu) } catch { throw .malformed(error) }
                guard e.requestOpcode.rawValue == expected.rawValue &- 1 else {
                    throw .unexpectedErrorResponse(requestOpcode: e.requestOpcode)
                }
                step = errorStep(e)
            } else {
                guard opcode == expected else { throw .unexpectedResponse(opcode) }
                do throws(DecodeError) {
                    step = try responseStep(pdu, delegate: &delegate)
                } catch { throw .malformed(error) }
            }
        } catch {
            return fail(error, now: now, delegate: &delegate, reply: &reply)
        }
        switch step {
        case .done:
            finish(nil, delegate: &delegate)
            return .none
        case .failed(let error):
            return fail(error, now: now, delegate: &delegate, reply: &reply)
        case .next(let phase):
            writeRequest(for: phase, into: &reply)
            self.phase = phase
            requestSentAt = now
            return .send
        }
    }

    /// What a response leads to.
    enum Step {
        case done
        case next(Phase)
        /// The response parsed but cannot be accepted.
        case failed(GATTClientError)
    }

    /// Ends the procedure with `error`. A long write that already queued writes on the server first
    /// cancels them (Execute Write, flags 0x00, Part F 3.4.6.3) and reports once that is answered; a
    /// failure of the cancel itself reports the original error.
    mutating func fail<D: GATTClientDelegate, R: ByteSink>(
        _ error: GATTClientError, now: UInt64, delegate: inout D, reply: inout R
    ) -> GATTClientAction {
        switch phase {
        case .preparing(let handle, _, _):
            phase = .cancelling(handle: handle, error: error)
            writeRequest(for: phase, into: &reply)
            requestSentAt = now
            return .send
        case .cancelling(_, let original):
            finish(original, delegate: &delegate)
            return .none
        default:
            finish(error, delegate: &delegate)
            return .none
        }
    }

    /// An Error Response to the outstanding request.
    func errorStep(_ e: ATTErrorResponse) -> Step {
        switch phase {
        case .discoveringServices, .discoveringServicesByUUID, .discoveringCharacteristics, .discoveringDescriptors:
            // Attribute Not Found is how a server says the range is exhausted (Part G 4.4.1, 4.6.1, 4.7.1).
            if e.error == .attributeNotFound { return .done }
        case .readingBlob:
            // Part G 4.8.3: a value of exactly ATT_MTU-1 octets is not long; the first Read Blob says so.
            if e.error == .attributeNotLong { return .done }
        case .cancelling(_, let original):
            return .failed(original)
        default:
            break
        }
        return .failed(.attError(e.error, handle: e.handle))
    }

    /// The expected response to the outstanding request, parsed and acted on.
    mutating func responseStep<D: GATTClientDelegate>(_ pdu: Span<UInt8>, delegate: inout D) throws(DecodeError) -> Step {
        switch phase {
        case .idle:
            return .failed(.invalidResponse)
        case .exchangingMTU:
            let r = try ATTExchangeMTUResponse(pdu)
            // Part G 4.3.1 / Part F 3.4.2.2: both sides use the smaller receive MTU, never below 23.
            mtu = max(ATTMTU.minimum, min(maximumMTU, r.serverRxMTU))
            delegate.gattClientDidExchangeMTU(mtu)
            return .done
        case .discoveringServices(let start):
            return try servicesStep(ATTReadByGroupTypeResponse(pdu), start: start, delegate: &delegate)
        case .discoveringServicesByUUID(let start):
            guard D.optionalProcedures.discoverServicesByUUID else { return .failed(.invalidResponse) }
            return try servicesByUUIDStep(ATTFindByTypeValueResponse(pdu), start: start, delegate: &delegate)
        case .discoveringCharacteristics(let start, let end):
            return try characteristicsStep(ATTReadByTypeResponse(pdu), start: start, end: end, delegate: &delegate)
        case .discoveringDescriptors(let start, let end):
            guard D.optionalProcedures.discoverDescriptors else { return .failed(.invalidResponse) }
            return try descriptorsStep(ATTFindInformationResponse(pdu), start: start, end: end, delegate: &delegate)
        case .reading(let handle):
            let r = try ATTReadResponse(pdu)
            return readStep(handle: handle, offset: 0, value: r.value, delegate: &delegate)
        case .readingByType:
            return try readByTypeStep(ATTReadByTypeResponse(pdu), delegate: &delegate)
        case .readingBlob(let handle, let offset):
            let r = try ATTReadBlobResponse(pdu)
            return readStep(handle: handle, offset: Int(offset), value: r.value, delegate: &delegate)
        case .writing:
            _ = try ATTWriteResponse(pdu)
            return .done
        case .preparing(let handle, let offset, let length):
            // With no room for a long value `start` refuses Write Long (`valueTooLong`): no prepared
            // write is ever outstanding, and its echo check is not linked.
            guard longWriteCapacity > 0 else { return .failed(.invalidResponse) }
            let r = try ATTPrepareWriteResponse(pdu)
            // Part G 4.9.4: the echo must match handle, offset and value, or the write is cancelled.
            guard r.handle == handle, Int(r.offset) == offset,
                  r.partValue.count == length, sameBytes(r.partValue, offset: offset)
            else { return .failed(.prepareWriteMismatch(offset: UInt16(truncatingIfNeeded: offset))) }
            let nextOffset = offset + length
            if nextOffset < writeLength { return .next(preparing(handle: handle, offset: nextOffset)) }
            return .next(.executing(handle: handle))
        case .executing:
            // Only after a prepared write (above).
            guard longWriteCapacity > 0 else { return .failed(.invalidResponse) }
            _ = try ATTExecuteWriteResponse(pdu)
            return .done
        case .cancelling(_, let original):
            guard longWriteCapacity > 0 else { return .failed(.invalidResponse) }
            _ = try ATTExecuteWriteResponse(pdu)
            return .failed(original)
        }
    }

    func sameBytes(_ echo: Span<UInt8>, offset: Int) -> Bool {
        for i in echo.indices where echo[i] != writeBuffer[offset + i] { return false }
        return true
    }

    /// A Read or Read Blob Response: deliver the chunk, then continue a long read while chunks are full.
    mutating func readStep<D: GATTClientDelegate>(handle: UInt16, offset: Int, value: Span<UInt8>, delegate: inout D) -> Step {
        let full = Int(mtu) - 1
        // No response may exceed ATT_MTU (Part F 3.2.8), and no value 512 octets (Part F 3.2.9).
        guard value.count <= full, offset + value.count <= ATTMTU.maximumAttributeLength else {
            return .failed(.invalidResponse)
        }
        delegate.gattClientDidRead(handle: handle, offset: offset, value: value)
        let reached = offset + value.count
        // Part G 4.8.3: a response shorter than ATT_MTU-1 is the value's last part; at 512 octets there
        // cannot be more.
        guard running == .readLong || running == .readUsingCharacteristicUUID, value.count == full,
              reached < ATTMTU.maximumAttributeLength else { return .done }
        return .next(.readingBlob(handle: handle, offset: UInt16(truncatingIfNeeded: reached)))
    }

    /// Read By Type Response to Read Using Characteristic UUID (Part G 4.8.2): the first entry's handle
    /// and value. An entry holds at most ATT_MTU-4 octets of a value (Part F 3.4.4.2, and 253 by its
    /// length field); a value that fills them may go on, so it is read on with Read Blob from there.
    mutating func readByTypeStep<D: GATTClientDelegate>(_ r: borrowing ATTReadByTypeResponse, delegate: inout D) -> Step {
        let full = min(Int(mtu) - 4, 253)
        var entries = r.makeIterator()
        guard let e = entries.next(), e.handle != 0, e.value.count <= full else { return .failed(.invalidResponse) }
        delegate.gattClientDidRead(handle: e.handle, offset: 0, value: e.value)
        guard e.value.count == full else { return .done }
        return .next(.readingBlob(handle: e.handle, offset: UInt16(full)))
    }

    /// The continuation of a discovery whose last response ended at `last`: stop at the range's end,
    /// else ask again from the next handle (Part G 4.4.1, 4.6.1, 4.7.1).
    func continueDiscovery(after last: UInt16, end: UInt16, _ next: (UInt16) -> Phase) -> Step {
        last >= end ? .done : .next(next(last + 1))
    }

    /// Read By Group Type Response of primary services (Part G 4.4.1): handle, group end, UUID. Entries
    /// must lie in the requested range, in order, without overlap, so the discovery always advances.
    mutating func servicesStep<D: GATTClientDelegate>(
        _ r: borrowing ATTReadByGroupTypeResponse, start: UInt16, delegate: inout D
    ) throws(DecodeError) -> Step {
        guard r.length == 6 || r.length == 20 else { return .failed(.invalidResponse) }
        var floor = Int(start)
        var check = r.makeIterator()
        while let e = check.next() {
            guard Int(e.handle) >= floor, e.endGroupHandle >= e.handle else { return .failed(.invalidResponse) }
            floor = Int(e.endGroupHandle) + 1
        }
        var last: UInt16 = 0
        var entries = r.makeIterator()
        while let e = entries.next() {
            delegate.gattClientDidDiscover(service: GATTDiscoveredService(
                startHandle: e.handle, endHandle: e.endGroupHandle, uuid: try BluetoothUUID(wire: e.value)))
            last = e.endGroupHandle
        }
        if delegate.gattClientHasFoundWhatItNeeds { return .done }
        return continueDiscovery(after: last, end: 0xFFFF) { .discoveringServices(start: $0) }
    }

    /// Find By Type Value Response (Part G 4.4.2): found handle and group end; the UUID is the one asked for.
    mutating func servicesByUUIDStep<D: GATTClientDelegate>(
        _ r: borrowing ATTFindByTypeValueResponse, start: UInt16, delegate: inout D
    ) throws(DecodeError) -> Step {
        var floor = Int(start)
        var check = r.makeIterator()
        while let e = check.next() {
            guard Int(e.foundAttributeHandle) >= floor, e.groupEndHandle >= e.foundAttributeHandle else {
                return .failed(.invalidResponse)
            }
            floor = Int(e.groupEndHandle) + 1
        }
        var last: UInt16 = 0
        var entries = r.makeIterator()
        while let e = entries.next() {
            delegate.gattClientDidDiscover(service: GATTDiscoveredService(
                startHandle: e.foundAttributeHandle, endHandle: e.groupEndHandle, uuid: serviceUUID))
            last = e.groupEndHandle
        }
        if delegate.gattClientHasFoundWhatItNeeds { return .done }
        return continueDiscovery(after: last, end: 0xFFFF) { .discoveringServicesByUUID(start: $0) }
    }

    /// Read By Type Response of characteristic declarations (Part G 4.6.1): each value is properties,
    /// value handle and a 16- or 128-bit UUID (Part G 3.3.1), so 7 or 21 octets per entry with the handle.
    mutating func characteristicsStep<D: GATTClientDelegate>(
        _ r: borrowing ATTReadByTypeResponse, start: UInt16, end: UInt16, delegate: inout D
    ) throws(DecodeError) -> Step {
        guard r.length == 7 || r.length == 21 else { return .failed(.invalidResponse) }
        var floor = Int(start)
        var check = r.makeIterator()
        while let e = check.next() {
            guard Int(e.handle) >= floor, e.handle <= end else { return .failed(.invalidResponse) }
            // The value attribute follows its declaration inside the service (Part G 3.3.1), so its
            // handle is above the declaration's and never 0x0000, which is reserved (Part F 3.2.2).
            let valueHandle = UInt16(e.value[1]) | UInt16(e.value[2]) &<< 8
            guard valueHandle > e.handle, valueHandle <= end else { return .failed(.invalidResponse) }
            floor = Int(e.handle) + 1
        }
        var last: UInt16 = 0
        var lastValue: UInt16 = 0
        var entries = r.makeIterator()
        while let e = entries.next() {
            var v = ByteReader(e.value)
            let properties = GATTCharacteristicProperties(rawValue: try v.u8())
            let valueHandle = try v.u16()
            delegate.gattClientDidDiscover(characteristic: GATTDiscoveredCharacteristic(
                declarationHandle: e.handle, properties: properties, valueHandle: valueHandle,
                uuid: try BluetoothUUID(wire: v.rest())))
            last = e.handle
            lastValue = valueHandle
        }
        if delegate.gattClientHasFoundWhatItNeeds { return .done }
        // Another characteristic needs a declaration above the last value and its own value after
        // it, both inside the range (Part G 3.3.1, 3.3.2): with no room for the two, the request that
        // would only end in Attribute Not Found is not sent.
        if lastValue >= end &- 1 { return .done }
        return continueDiscovery(after: last, end: end) { .discoveringCharacteristics(start: $0, end: end) }
    }

    /// Find Information Response (Part G 4.7.1): descriptor handles and types.
    mutating func descriptorsStep<D: GATTClientDelegate>(
        _ r: borrowing ATTFindInformationResponse, start: UInt16, end: UInt16, delegate: inout D
    ) throws(DecodeError) -> Step {
        var floor = Int(start)
        var check = r.makeIterator()
        while let e = check.next() {
            guard Int(e.handle) >= floor, e.handle <= end else { return .failed(.invalidResponse) }
            floor = Int(e.handle) + 1
        }
        var last: UInt16 = 0
        var entries = r.makeIterator()
        while let e = entries.next() {
            delegate.gattClientDidDiscover(descriptor: GATTDiscoveredDescriptor(handle: e.handle, type: e.type))
            last = e.handle
        }
        return continueDiscovery(after: last, end: end) { .discoveringDescriptors(start: $0, end: end) }
    }
}
