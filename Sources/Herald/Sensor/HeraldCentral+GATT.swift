import BluetoothHost

/// What a link's GATT client did with one PDU or timer tick: the client's action, and whether the
/// GATT operation it was running ended (the procedure on the link has then moved on: act on it with
/// `gattProcedureDidEnd`).
public struct HeraldGATTOutcome {
    public var action: GATTClientAction
    public var operationEnded: Bool
}

/// How `startGATT` went.
public enum HeraldGATTStart: Equatable {
    /// The request is in the buffer: send it on the link.
    case send
    /// The step asks for no GATT operation (a message is wanted, or the work is done).
    case nothing
    /// The GATT client refused to start it: report it with `gattDidComplete(succeeded: false)`.
    case refused
}

// The GATT work on each link: results of the procedure's GATT operations, the signal message it
// writes, the payload it read, and the end of the work. Results reach the procedure either by link
// handle (tests, the fuzz target) or from the link's own `GATTClient` (`receiveATT`, `tickGATT`).
extension HeraldCentral {
    // MARK: Driving the link's GATT client

    /// One ATT PDU for the client role of link `slot`; a reply, if any, goes into `reply`.
    mutating func receiveATT<Reply: ByteSink>(pdu: Span<UInt8>, link slot: Int, now: UInt64,
                                              reply: inout Reply) -> HeraldGATTOutcome? {
        slots[slot]?.receive(pdu: pdu, now: now, reply: &reply)
    }

    /// The transaction timer of link `slot`'s GATT client.
    mutating func tickGATT(link slot: Int, now: UInt64) -> HeraldGATTOutcome? {
        slots[slot]?.tick(now: now)
    }

    /// When some link's GATT transaction times out, or a link we made must have heard from its
    /// peer (`tick` then). Inlined, like `nextDeadline`: a read-only getter that is called passes it a
    /// copy of the whole central on a microcontroller (5 KB with 4 links, in the main loop's frame);
    /// inlined, it reads the fields in place.
    @inline(__always)
    public var gattDeadline: UInt64? {
        var d: UInt64?
        for i in 0..<links {
            if let t = slots[i]?.client.nextDeadline { d = min(d ?? .max, t) }
            if let t = slots[i]?.firstAnswerDeadline(configuration.firstAnswerTimeout) { d = min(d ?? .max, t) }
        }
        return d
    }

    /// Starts the GATT operation `step` asks for on link `slot`'s client, writing its request into
    /// `request`. A signal write's fragment is read in place from `outgoing` (the client keeps no borrow).
    mutating func startGATT<Request: ByteSink>(_ step: HeraldGATTStep, link slot: Int, now: UInt64,
                                              into request: inout Request) -> HeraldGATTStart {
        guard slots[slot] != nil else { return .nothing }
        do throws(GATTClientError) {
            switch step {
            case .exchangeMTU:
                try slots[slot]?.client.start(.exchangeMTU, now: now, into: &request)
            case .discoverServices:
                try slots[slot]?.client.start(.discoverAllPrimaryServices, now: now, into: &request)
            case .discoverCharacteristics(let start, let end):
                try slots[slot]?.client.start(.discoverAllCharacteristics(serviceStart: start, serviceEnd: end), now: now,
                                              into: &request)
            case .readPayload(let attribute):
                try slots[slot]?.client.start(.readLong(handle: attribute), now: now, into: &request)
            case .readPayloadByUUID:
                try slots[slot]?.client.start(.readUsingCharacteristicUUID(HeraldIdentifiers.payloadCharacteristicUUID),
                                              now: now, into: &request)
            case .writeSignal(let attribute, let offset, let length):
                guard outgoingLink == slot, offset >= 0, length > 0, offset + length <= outgoing.count else { return .refused }
                // The fragment is read where it lies in `outgoing` (a copy of it was 248 octets of stack).
                try slots[slot]?.client.start(.write(handle: attribute, value: outgoing.span.extracting(offset..<(offset + length))),
                                              now: now, into: &request)
            case .needMessage, .done:
                return .nothing
            }
        } catch {
            return .refused
        }
        return .send
    }

    // MARK: Results by link handle

    // Each result by handle is the peer's answer, as a PDU through `receiveATT` would be.

    /// The link's ATT_MTU as the stack keeps it (one per link, Core 5.4 Vol 3 Part F 3.4.2.2): its GATT
    /// client and procedure use it from now on, whichever side's exchange set it.
    public mutating func linkMTUDidChange(handle: UInt16, mtu: UInt16) {
        guard let s = linkIndex(handle: handle) else { return }
        slots[s]?.client.useLinkMTU(mtu)
        slots[s]?.procedure.didExchangeMTU(Int(mtu))
    }

    public mutating func gattDidExchangeMTU(handle: UInt16, mtu: Int) {
        guard let s = linkIndex(handle: handle) else { return }
        slots[s]?.heardFromPeer = true
        slots[s]?.procedure.didExchangeMTU(mtu)
    }

    public mutating func gattDidDiscover(handle: UInt16, service uuid: BluetoothUUID, start: UInt16, end: UInt16) {
        guard let s = linkIndex(handle: handle) else { return }
        slots[s]?.heardFromPeer = true
        slots[s]?.procedure.didDiscover(service: uuid, start: start, end: end)
    }

    public mutating func gattDidDiscover(handle: UInt16, characteristic uuid: BluetoothUUID, valueHandle: UInt16) {
        guard let s = linkIndex(handle: handle) else { return }
        slots[s]?.heardFromPeer = true
        slots[s]?.procedure.didDiscover(characteristic: uuid, valueHandle: valueHandle)
    }

    /// A chunk of the payload on link `handle`, read from `attribute` (the payload's handle).
    public mutating func gattDidRead(handle: UInt16, offset: Int, value: Span<UInt8>, attribute: UInt16 = 0) {
        guard let s = linkIndex(handle: handle) else { return }
        slots[s]?.heardFromPeer = true
        slots[s]?.procedure.didRead(offset: offset, value: value, handle: attribute)
    }

    /// The link's GATT operation ended; returns the next step (nil for a link that is not ours). On
    /// `.done` the disconnection has already been requested.
    public mutating func gattDidComplete<C: HeraldCentralControl, D: SensorDelegate>(
        handle: UInt16, succeeded: Bool, now: UInt64, control: inout C, delegate: inout D
    ) -> HeraldGATTStep? {
        guard let s = linkIndex(handle: handle), slots[s]?.closing != .dropped else { return nil }
        if succeeded { slots[s]?.heardFromPeer = true }
        _ = slots[s]?.procedure.didComplete(succeeded: succeeded)
        return gattProcedureDidEnd(link: s, now: now, control: &control, delegate: &delegate)
    }

    // MARK: The procedure moved on

    /// Acts on where link `slot`'s procedure is after a GATT operation ended: records what it
    /// learnt of the device, delivers a payload it read, loads the signal message it asks for, and
    /// closes the link when the work is done. Returns the next step (nil for a dropped link).
    mutating func gattProcedureDidEnd<C: HeraldCentralControl, D: SensorDelegate>(
        link s: Int, now: UInt64, control: inout C, delegate: inout D
    ) -> HeraldGATTStep? {
        guard let closing = slots[s]?.closing, closing != .dropped, let target = slots[s]?.target else { return nil }
        let device = database.index(of: target)
        if let i = device, let os = slots[s]?.procedure.os, os != .unknown { database.entries[i]?.os = os }
        if slots[s]?.procedure.payloadComplete == true, slots[s]?.payloadDelivered == false {
            slots[s]?.payloadDelivered = true
            if let i = device { deliverPayload(link: s, device: i, now: now, delegate: &delegate) }
        }
        guard var step = slots[s]?.procedure.step else { return nil }
        while case .needMessage(let kind) = step {
            var loaded = false
            if outgoingLink == nil || outgoingLink == s, loadOutgoing(kind, link: s, now: now), !outgoing.overflowed,
               outgoing.count > 0 {
                outgoingLink = s
                loaded = true
            }
            guard let next = loaded ? slots[s]?.procedure.load(length: outgoing.count) : slots[s]?.procedure.skip() else { break }
            step = next
        }
        if outgoingLink == s, slots[s]?.procedure.isWriting != true { outgoingLink = nil }
        if case .done(let result) = step { finish(link: s, result: result, now: now, control: &control) }
        return step
    }

    /// The payload link `s` read from device `i`: filed (merging with a device that already holds
    /// it), then `didRead` and, with the RSSI we hold, `didMeasure:withPayload`.
    @inline(never)
    mutating func deliverPayload<D: SensorDelegate>(link s: Int, device i: Int, now: UInt64, delegate: inout D) {
        // The payload is read in place from the link while the database files it (two stored
        // properties of the central, so no copy of either).
        guard slots[s] != nil, let (kept, merged) = database.setPayload(slots[s]!.procedure.payload.span, at: i, now: now) else {
            return
        }
        let target = database.targetIdentifier(at: kept)
        if let gone = merged {
            slots[s]?.target = target
            delegate.sensor(.ble, available: false, didDeleteOrDetect: gone)
        }
        let rssi = database.entries[kept]?.rssi
        let txPower = database.entries[kept]?.txPower
        _ = database.withPayload(at: kept) { payload in
            delegate.sensor(.ble, didRead: payload, fromTarget: target)
            if let rssi {
                delegate.sensor(.ble, didMeasure: Proximity(value: Int16(rssi), calibration: txPower),
                                fromTarget: target, withPayload: payload)
            }
        }
    }

    /// The work on link `s` ended with `result`: the device's record follows it, and a link we
    /// made is closed (a peer's link stays; only our slot is freed).
    mutating func finish<C: HeraldCentralControl>(link s: Int, result: HeraldProcedureResult, now: UInt64, control: inout C) {
        if let target = slots[s]?.target, let i = database.index(of: target) {
            if slots[s]?.procedure.immediateSendWritten == true { database.entries[i]?.immediateSendPending = false }
            if slots[s]?.procedure.sharingWritten == true { database.entries[i]?.lastShared = now }
            switch result {
            case .completed:
                database.entries[i]?.consecutiveFailures = 0
                database.entries[i]?.failureRounds = 0
                database.entries[i]?.hasHeraldService = true
            case .noHeraldService:
                // An Apple device without the service now may open the app later: check again after
                // the (growing) ignore period.
                database.entries[i]?.hasHeraldService = nil
                database.ignore(at: i, now: now)
            case .failed:
                recordFailure(at: i, now: now)
            }
        }
        if slots[s]?.origin == .peers {
            // The peer's link: our work on it is done, the slot is free, the link stays.
            slots[s] = nil
        } else {
            close(link: s, control: &control)
        }
        updateScan(now: now, control: &control)
    }
}

extension HeraldCentralLink {
    /// Hands the PDU to the link's GATT client with this link's procedure as its delegate, in place.
    mutating func receive<Reply: ByteSink>(pdu: Span<UInt8>, now: UInt64, reply: inout Reply) -> HeraldGATTOutcome {
        heardFromPeer = true
        let wasBusy = client.isBusy
        let action = client.handle(pdu: pdu, now: now, delegate: &procedure, reply: &reply)
        return HeraldGATTOutcome(action: action, operationEnded: wasBusy && !client.isBusy)
    }

    mutating func tick(now: UInt64) -> HeraldGATTOutcome {
        let wasBusy = client.isBusy
        let action = client.tick(now: now, delegate: &procedure)
        return HeraldGATTOutcome(action: action, operationEnded: wasBusy && !client.isBusy)
    }
}
