import BluetoothHost
import Foundation

/// Connects to one peripheral as central and dumps its GATT database with the core's `GATTClient`:
/// Exchange MTU, all primary services, their characteristics, each characteristic's descriptors,
/// then every readable value and every descriptor value with long reads (Core 5.4 Vol 3 Part G 4).
///
/// The client runs on the link's ATT bearer: its requests go out with `control.sendATT`, and the
/// stack hands it every response, notification and indication through `stackDidReceiveATT`.
public struct GATTDumper: LEApplication {
    public enum State: Equatable {
        case connecting
        case running
        case finished
        /// The connection attempt ended without a link (HCI status, 0x08 on our own timeout).
        case failedToConnect(HCIStatus)
        /// The link went away before the dump finished.
        case disconnected(HCIStatus)
    }

    /// What the client's delegate callbacks collect; separate from the client so both can be
    /// borrowed at once.
    struct Collector: GATTClientDelegate {
        var dump: GATTDump
        var completed: (GATTProcedureKind, GATTClientError?)?
        var readValue: [UInt8] = []
        /// The service whose characteristics are being discovered.
        var currentService = 0

        mutating func gattClientDidExchangeMTU(_ mtu: UInt16) { dump.mtu = Int(mtu) }
        mutating func gattClientDidDiscover(service: GATTDiscoveredService) {
            dump.services.append(GATTDump.Service(uuid: service.uuid.text, start: service.startHandle, end: service.endHandle))
        }
        mutating func gattClientDidDiscover(characteristic c: GATTDiscoveredCharacteristic) {
            guard dump.services.indices.contains(currentService) else { return }
            dump.services[currentService].characteristics.append(GATTDump.Characteristic(
                uuid: c.uuid.text, declaration: c.declarationHandle, handle: c.valueHandle,
                properties: c.properties.rawValue, propertyNames: GATTDumper.names(c.properties)))
        }
        mutating func gattClientDidDiscover(descriptor d: GATTDiscoveredDescriptor) {
            pendingDescriptors.append(GATTDump.Descriptor(uuid: d.type.text, handle: d.handle))
        }
        var pendingDescriptors: [GATTDump.Descriptor] = []
        mutating func gattClientDidRead(handle: UInt16, offset: Int, value: Span<UInt8>) {
            if offset == 0 { readValue.removeAll() }
            for i in value.indices { readValue.append(value[i]) }
        }
        mutating func gattClientDidComplete(_ procedure: GATTProcedureKind, error: GATTClientError?) {
            completed = (procedure, error)
        }
    }

    /// One step of the dump; `next` walks them in order.
    enum Step: Equatable {
        case mtu
        case services
        case characteristics(service: Int)
        case descriptors(service: Int, characteristic: Int)
        case readValue(service: Int, characteristic: Int)
        case readDescriptor(service: Int, characteristic: Int, descriptor: Int)
    }

    public let peer: DeviceAddress
    public let connectTimeout: UInt64
    public private(set) var state: State = .connecting
    public private(set) var handle: UInt16?
    var client = GATTStandardClient()
    var collector: Collector
    var step: Step = .mtu
    var started: UInt64 = 0
    var phaseStarted: UInt64 = 0
    /// false: stay at ATT_MTU 23 (`herald check` does, so a payload over 22 octets needs Read Blob).
    public var exchangesMTU = true
    /// true: leave the link up when the dump is done, for whoever drives the dumper.
    public var keepsLink = false

    public init(peer: DeviceAddress, connectTimeout: UInt64) {
        self.peer = peer
        self.connectTimeout = connectTimeout
        collector = Collector(dump: GATTDump(address: peer.address.description))
    }

    public var dump: GATTDump { collector.dump }

    public var isDone: Bool {
        switch state {
        case .connecting, .running: return false
        default: return true
        }
    }

    static func names(_ p: GATTCharacteristicProperties) -> [String] {
        let all: [(GATTCharacteristicProperties, String)] = [
            (.broadcast, "broadcast"), (.read, "read"), (.writeWithoutResponse, "write-without-response"),
            (.write, "write"), (.notify, "notify"), (.indicate, "indicate"),
            (.authenticatedSignedWrites, "authenticated-signed-writes"), (.extendedProperties, "extended-properties")]
        return all.filter { p.contains($0.0) }.map(\.1)
    }

    // MARK: LEApplication

    public mutating func stackDidBecomeReady(_ info: ControllerInfo, now: UInt64, control: inout StackControl) {
        started = now
        control.connect(to: peer, now: now, timeout: connectTimeout)
    }

    public mutating func stackDidFailToConnect(to peer: DeviceAddress, status: HCIStatus, now: UInt64, control: inout StackControl) {
        state = .failedToConnect(status)
    }

    public mutating func stackDidChangeDataLength(handle: UInt16, _ length: LinkDataLength, now: UInt64, control: inout StackControl) {
        guard handle == self.handle else { return }
        collector.dump.dataLength = .init(txOctets: Int(length.maxTxOctets), rxOctets: Int(length.maxRxOctets))
    }

    /// The link's one ATT_MTU (Core 5.4 Vol 3 Part F 3.4.2.2): the peer's client may have exchanged it
    /// with our server, and the peer's server then answers our client at it, `exchangesMTU` or not.
    public mutating func stackDidUpdateATTMTU(handle: UInt16, mtu: UInt16, now: UInt64, control: inout StackControl) {
        guard handle == self.handle else { return }
        client.useLinkMTU(mtu)
        collector.dump.mtu = Int(mtu)
    }

    public mutating func stackDidUpdatePHY(handle: UInt16, _ phy: LinkPHY, now: UInt64, control: inout StackControl) {
        guard handle == self.handle else { return }
        collector.dump.phy = .init(tx: "\(phy.tx.name)", rx: "\(phy.rx.name)")
    }

    public mutating func stackDidConnect(_ link: ConnectionSummary, now: UInt64, control: inout StackControl) {
        guard link.role == .central, handle == nil else { return }
        handle = link.handle
        state = .running
        collector.dump.timings["connect"] = now &- started
        phaseStarted = now
        step = exchangesMTU ? .mtu : .services
        begin(now: now, control: &control)
    }

    public mutating func stackDidDisconnect(handle: UInt16, reason: HCIStatus, now: UInt64, control: inout StackControl) {
        guard handle == self.handle else { return }
        self.handle = nil
        guard state == .running else { return }
        state = .disconnected(reason)
        // What a reader of the dump (the JSON, `herald check`'s GATT-1) needs: it is incomplete, and why.
        if collector.dump.error == nil {
            collector.dump.error = "the link ended (reason 0x\(hex(reason.rawValue).lowercased())) before the dump finished"
        }
    }

    public mutating func stackDidReceiveATT(handle: UInt16, pdu: Span<UInt8>, now: UInt64, control: inout StackControl) {
        guard handle == self.handle, state == .running else { return }
        var reply = FixedBytes<247>()
        let action = client.handle(pdu: pdu, now: now, delegate: &collector, reply: &reply)
        act(action, reply: reply, control: &control)
        advanceIfCompleted(now: now, control: &control)
    }

    public var applicationDeadline: UInt64? { state == .running ? client.nextDeadline : nil }

    public mutating func stackTimerFired(now: UInt64, control: inout StackControl) {
        let action = client.tick(now: now, delegate: &collector)
        act(action, reply: FixedBytes<247>(), control: &control)
        advanceIfCompleted(now: now, control: &control)
    }

    mutating func act(_ action: GATTClientAction, reply: FixedBytes<247>, control: inout StackControl) {
        guard let handle else { return }
        switch action {
        case .send: control.sendATT(handle: handle, pdu: reply.span)
        case .disconnect: control.disconnect(handle: handle)
        case .none: break
        }
    }

    // MARK: Walking the database

    mutating func advanceIfCompleted(now: UInt64, control: inout StackControl) {
        while let (kind, error) = collector.completed {
            collector.completed = nil
            record(kind, error: error, now: now)
            if state != .running {
                // A failed discovery step ends the dump: leave the link so the command can finish.
                if let handle { control.disconnect(handle: handle) }
                return
            }
            guard let next = following(step) else {
                finish(now: now, control: &control)
                return
            }
            step = next
            begin(now: now, control: &control)
        }
    }

    /// Stores what the finished step produced; a failed discovery ends the dump, a failed read is
    /// recorded on its attribute (the server may require pairing for it).
    mutating func record(_ kind: GATTProcedureKind, error: GATTClientError?, now: UInt64) {
        switch step {
        case .mtu:
            collector.dump.timings["mtu"] = now &- phaseStarted
            phaseStarted = now
        case .services, .characteristics:
            if let error { fail("\(kind): \(Self.describe(error))") }
        case .descriptors(let s, let c):
            collector.dump.services[s].characteristics[c].descriptors = collector.pendingDescriptors
            collector.pendingDescriptors = []
            if let error { fail("\(kind): \(Self.describe(error))") }
        case .readValue(let s, let c):
            if let error {
                collector.dump.services[s].characteristics[c].error = Self.describe(error)
                if !collector.readValue.isEmpty { collector.dump.services[s].characteristics[c].partialLength = collector.readValue.count }
            } else {
                collector.dump.services[s].characteristics[c].value = hexBytes(collector.readValue)
            }
        case .readDescriptor(let s, let c, let d):
            if let error {
                collector.dump.services[s].characteristics[c].descriptors[d].error = Self.describe(error)
            } else {
                collector.dump.services[s].characteristics[c].descriptors[d].value = hexBytes(collector.readValue)
            }
        }
        collector.readValue.removeAll()
    }

    mutating func fail(_ message: String) {
        collector.dump.error = message
        state = .finished
    }

    mutating func finish(now: UInt64, control: inout StackControl) {
        collector.dump.timings["read"] = now &- phaseStarted
        collector.dump.timings["total"] = now &- started
        state = .finished
        if let handle, !keepsLink { control.disconnect(handle: handle) }
    }

    /// Starts the procedure of `step`, skipping steps that need nothing sent.
    mutating func begin(now: UInt64, control: inout StackControl) {
        while true {
            if case .readValue = step, collector.dump.timings["discovery"] == nil {
                collector.dump.timings["discovery"] = now &- phaseStarted
                phaseStarted = now
            }
            guard let procedure = procedureFor(step) else {
                guard let next = following(step) else { return finish(now: now, control: &control) }
                step = next
                continue
            }
            if case .characteristics(let s) = step { collector.currentService = s }
            var request = FixedBytes<247>()
            do throws(GATTClientError) {
                try client.start(procedure, now: now, into: &request)
            } catch {
                // Exchange MTU refused locally, or the bearer closed: record and move on / stop.
                collector.completed = (.exchangeMTU, error)
                return advanceIfCompleted(now: now, control: &control)
            }
            if let handle { control.sendATT(handle: handle, pdu: request.span) }
            return
        }
    }

    /// The procedure a step runs, or nil when the step has nothing to ask (no descriptors room,
    /// a characteristic without the read property).
    func procedureFor(_ step: Step) -> GATTProcedureKindRequest? {
        let services = collector.dump.services
        switch step {
        case .mtu: return .exchangeMTU
        case .services: return .discoverAllPrimaryServices
        case .characteristics(let s):
            return .discoverAllCharacteristics(services[s].start, services[s].end)
        case .descriptors(let s, let c):
            let ch = services[s].characteristics[c]
            let end = c + 1 < services[s].characteristics.count ? services[s].characteristics[c + 1].declaration - 1 : services[s].end
            return ch.handle < end ? .discoverAllDescriptors(ch.handle + 1, end) : nil
        case .readValue(let s, let c):
            let ch = services[s].characteristics[c]
            return GATTCharacteristicProperties(rawValue: ch.properties).contains(.read) ? .readLong(ch.handle) : nil
        case .readDescriptor(let s, let c, let d):
            return .readLong(services[s].characteristics[c].descriptors[d].handle)
        }
    }

    /// The step after `step` in the walk: MTU, services, each service's characteristics, each
    /// characteristic's descriptors, then each value followed by its descriptors' values.
    func following(_ step: Step) -> Step? {
        let services = collector.dump.services
        func firstCharacteristic(from s: Int, make: (Int, Int) -> Step) -> Step? {
            var s = s
            while s < services.count {
                if !services[s].characteristics.isEmpty { return make(s, 0) }
                s += 1
            }
            return nil
        }
        func nextCharacteristic(_ s: Int, _ c: Int, make: (Int, Int) -> Step) -> Step? {
            if c + 1 < services[s].characteristics.count { return make(s, c + 1) }
            return firstCharacteristic(from: s + 1, make: make)
        }
        let readValue: (Int, Int) -> Step = { .readValue(service: $0, characteristic: $1) }
        switch step {
        case .mtu: return .services
        case .services: return services.isEmpty ? nil : .characteristics(service: 0)
        case .characteristics(let s):
            if s + 1 < services.count { return .characteristics(service: s + 1) }
            return firstCharacteristic(from: 0) { .descriptors(service: $0, characteristic: $1) }
        case .descriptors(let s, let c):
            return nextCharacteristic(s, c) { .descriptors(service: $0, characteristic: $1) }
                ?? firstCharacteristic(from: 0, make: readValue)
        case .readValue(let s, let c):
            if !services[s].characteristics[c].descriptors.isEmpty {
                return .readDescriptor(service: s, characteristic: c, descriptor: 0)
            }
            return nextCharacteristic(s, c, make: readValue)
        case .readDescriptor(let s, let c, let d):
            if d + 1 < services[s].characteristics[c].descriptors.count {
                return .readDescriptor(service: s, characteristic: c, descriptor: d + 1)
            }
            return nextCharacteristic(s, c, make: readValue)
        }
    }

    static func describe(_ e: GATTClientError) -> String {
        switch e {
        case .attError(let code, let handle): return "ATT error 0x\(hex(code.rawValue).lowercased()) on handle 0x\(hex(handle).lowercased())"
        case .timeout: return "no response within 30 s"
        default: return "\(e)"
        }
    }
}

/// `GATTProcedure` is `~Escapable` (writes borrow their bytes); the dumper only reads and discovers,
/// so it names its requests with this plain copy and builds the procedure at `start`.
enum GATTProcedureKindRequest: Equatable {
    case exchangeMTU
    case discoverAllPrimaryServices
    case discoverAllCharacteristics(UInt16, UInt16)
    case discoverAllDescriptors(UInt16, UInt16)
    case readLong(UInt16)
}

extension GATTClient {
    mutating func start<S: ByteSink>(_ r: GATTProcedureKindRequest, now: UInt64, into sink: inout S) throws(GATTClientError) {
        switch r {
        case .exchangeMTU: try start(GATTProcedure.exchangeMTU, now: now, into: &sink)
        case .discoverAllPrimaryServices: try start(GATTProcedure.discoverAllPrimaryServices, now: now, into: &sink)
        case .discoverAllCharacteristics(let s, let e):
            try start(GATTProcedure.discoverAllCharacteristics(serviceStart: s, serviceEnd: e), now: now, into: &sink)
        case .discoverAllDescriptors(let s, let e):
            try start(GATTProcedure.discoverAllDescriptors(start: s, end: e), now: now, into: &sink)
        case .readLong(let h): try start(GATTProcedure.readLong(handle: h), now: now, into: &sink)
        }
    }
}

func hexBytes(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
