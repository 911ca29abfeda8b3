import BluetoothHost

// The central's signal traffic: the messages it writes (immediate send, the payload-sharing "calling
// card") and the ones peers write to our signal characteristic (Herald protocol specification,
// "Signal characteristic").
extension HeraldCentral {
    // MARK: Signal messages we write

    /// Encodes the `kind` message for link `s` into `outgoing` (emptied first). Mutating and writing
    /// the buffer itself rather than taking `inout outgoing` from a read-only method: that form made
    /// the compiler copy the whole central (device database included) to keep the two accesses apart.
    /// Out of line: its 510-octet sharing list stays off the stack of the payload delivery path.
    @inline(never)
    mutating func loadOutgoing(_ kind: HeraldSignalWriteKind, link s: Int, now: UInt64) -> Bool {
        outgoing.removeAll()
        guard let limit = slots[s]?.procedure.outgoingLimit, let target = slots[s]?.target else { return false }
        switch kind {
        case .immediateSend:
            guard immediateData.count > 0 else { return false }
            // Header: action code and 16-bit length (Herald signal characteristic, 0x04).
            guard 3 + immediateData.count <= limit else {
                // Too long for this peer's one write (an iOS peer at this MTU): undeliverable here, so
                // the device is not kept pending (it would be reconnected to for nothing).
                if let peer = database.index(of: target) { database.entries[peer]?.immediateSendPending = false }
                return false
            }
            // Read in place: two stored properties of the central, so no copy of the data is needed.
            do throws(DecodeError) { try SignalMessageEncoder.writeImmediateSend(immediateData.span, to: &outgoing) } catch { return false }
            return true
        case .payloadSharing:
            guard let peer = database.index(of: target) else { return false }
            // Header (action code, 16-bit RSSI, 16-bit length: 5 octets), then the list written
            // straight after it: a list of its own was another 510 octets of stack.
            let room = min(limit, outgoing.capacity) - 5
            guard room > 0 else { return false }
            let rssi = Int16(database.entries[peer]?.rssi ?? 0)
            let start = SignalMessageEncoder.startPayloadSharing(rssi: rssi, in: &outgoing)
            guard database.sharingList(for: peer, now: now, window: configuration.sharingWindow, into: &outgoing,
                                         maximumBytes: room) > 0 else { outgoing.removeAll(); return false }
            do throws(DecodeError) { try SignalMessageEncoder.finishPayloadSharing(in: &outgoing, start: start) } catch { return false }
            return true
        }
    }

    /// The "calling card" for `peer`: whole payloads of Herald iOS and receive-only devices seen in the
    /// sharing window, never the peer's own, up to `maximumBytes` (at most 510), appended to `list`.
    /// Returns how many payloads it added (`HeraldDeviceDatabase.sharingList`).
    public mutating func sharingList<let n: Int>(for peer: Int, now: UInt64, into list: inout FixedBytes<n>,
                                                 maximumBytes: Int = 510) -> Int {
        database.sharingList(for: peer, now: now, window: configuration.sharingWindow, into: &list, maximumBytes: maximumBytes)
    }

    // MARK: Signal messages written to us (peripheral role)

    // One path in: the peripheral's signal characteristic reassembles a peer's writes and decodes the
    // whole message (`HeraldPeripheral.write`, `deliver`); the sensor's `SensorCore` turns each
    // message into one of the calls below. Each validates what it is given before the writer is
    // filed: a message we refuse must not make a detected target of its writer.

    /// The target for a peer that wrote to us, filing it as receive-only when unknown.
    mutating func writer<D: SensorDelegate>(_ peer: DeviceAddress, now: UInt64, delegate: inout D) -> Int {
        let (index, isNew) = database.observe(address: peer, pseudoAddress: nil, kind: .receiveOnly, now: now) { gone in
            delegate.sensor(.ble, available: false, didDeleteOrDetect: gone)
        }
        if isNew {
            database.entries[index]?.connectable = false
            delegate.sensor(.ble, didDetect: database.targetIdentifier(at: index))
            delegate.sensor(.ble, available: true, didDeleteOrDetect: database.targetIdentifier(at: index))
        }
        // A receive-only device is "seen" when it writes (it has no adverts to measure).
        if database.entries[index]?.kind == .receiveOnly { database.entries[index]?.lastSeen = now }
        return index
    }

    /// Signal message 0x01: the writer's own payload. Longer than `PayloadBytes.capacity`, or empty
    /// (it names nobody, and every empty payload would merge into one device): ignored.
    public mutating func peerDidWrite<D: SensorDelegate>(payload: Span<UInt8>, from peer: DeviceAddress, now: UInt64, delegate: inout D) {
        guard payload.count > 0, payload.count <= PayloadBytes.capacity else { return }
        let index = writer(peer, now: now, delegate: &delegate)
        guard let (kept, merged) = database.setPayload(payload, at: index, now: now) else { return }
        if let gone = merged { delegate.sensor(.ble, available: false, didDeleteOrDetect: gone) }
        delegate.sensor(.ble, didRead: payload, fromTarget: database.targetIdentifier(at: kept))
    }

    /// Signal message 0x02: the RSSI at which the writer hears us.
    public mutating func peerDidWrite<D: SensorDelegate>(rssi: Int16, from peer: DeviceAddress, now: UInt64, delegate: inout D) {
        let index = writer(peer, now: now, delegate: &delegate)
        delegate.sensor(.ble, didMeasure: Proximity(value: rssi), fromTarget: database.targetIdentifier(at: index))
    }

    /// Signal message 0x03: payloads the writer has seen, and the RSSI at which it hears us. After
    /// `didShare`, each payload is reported as the integration guide says: `didRead` from a target of
    /// its own, `didMeasure` with the sharer's RSSI, then `didMeasure:withPayload`. The target is the
    /// device already holding that payload when there is one (it is the same person); otherwise a
    /// newly generated identifier, not filed (a 32-payload list must not evict devices we measure).
    public mutating func peerDidShare<D: SensorDelegate>(_ payloads: borrowing SharedPayloads, rssi: Int16, from peer: DeviceAddress,
                                                         now: UInt64, delegate: inout D) {
        let index = writer(peer, now: now, delegate: &delegate)
        delegate.sensor(.ble, didShare: payloads, fromTarget: database.targetIdentifier(at: index))
        let proximity = Proximity(value: rssi)
        for i in 0..<payloads.count {
            let payload = payloads[i]
            let target = database.index(ofPayload: payload).map { database.targetIdentifier(at: $0) } ?? database.newTarget()
            delegate.sensor(.ble, didRead: payload, fromTarget: target)
            delegate.sensor(.ble, didMeasure: proximity, fromTarget: target)
            delegate.sensor(.ble, didMeasure: proximity, fromTarget: target, withPayload: payload)
        }
    }

    /// Signal message 0x04: immediate-send data.
    public mutating func peerDidSend<D: SensorDelegate>(immediate data: Span<UInt8>, from peer: DeviceAddress, now: UInt64,
                                                        delegate: inout D) {
        let index = writer(peer, now: now, delegate: &delegate)
        delegate.sensor(.ble, didReceive: data, fromTarget: database.targetIdentifier(at: index))
    }

    // MARK: Immediate send

    /// Queues `data` for `target`, sent before any other work on the next connection. One message at
    /// a time: new data replaces data not yet delivered. False when too long or the target is unknown.
    @discardableResult
    public mutating func immediateSend<C: HeraldCentralControl>(_ data: Span<UInt8>, to target: TargetIdentifier,
                                                                now: UInt64, control: inout C) -> Bool {
        guard data.count > 0, data.count <= immediateData.capacity, let i = database.index(of: target) else { return false }
        clearImmediateSend()
        immediateData = FixedBytes<128>(data)
        database.entries[i]?.immediateSendPending = true
        schedule(now: now, control: &control)
        return true
    }

    /// Queues `data` for every Herald device heard in the last `immediateSendWindow` (60 s); returns
    /// how many devices it is for.
    @discardableResult
    public mutating func immediateSendAll<C: HeraldCentralControl>(_ data: Span<UInt8>, now: UInt64, control: inout C) -> Int {
        guard data.count > 0, data.count <= immediateData.capacity else { return 0 }
        clearImmediateSend()
        immediateData = FixedBytes<128>(data)
        var n = 0
        for i in 0..<devices {
            guard let d = database.entries[i], d.kind == .herald || d.hasHeraldService == true,
                  now &- d.lastSeen <= configuration.immediateSendWindow else { continue }
            database.entries[i]?.immediateSendPending = true
            n += 1
        }
        schedule(now: now, control: &control)
        return n
    }

    mutating func clearImmediateSend() {
        for i in 0..<devices where database.entries[i]?.immediateSendPending == true { database.entries[i]?.immediateSendPending = false }
    }
}
