import BluetoothHost
import Foundation
import Herald

/// Reads the Herald payload of each Herald advertiser a bench scan finds, one device at a time:
/// stop scanning, connect, discover the Herald service and its payload characteristic (Core 5.4
/// Vol 3 Part G 4.4.1, 4.6.1), read it long (4.8.3), disconnect, scan again.
///
/// Driven from the `LEApplication` callbacks of `herald scan --read-payloads`; it never blocks and
/// keeps its own deadline for a peer that stops answering.
public struct BenchPayloadReader {
    public enum Outcome: Equatable {
        case payload([UInt8])
        case failed(String)
    }

    /// Collects what the GATT client reports during one procedure.
    struct Collector: GATTClientDelegate {
        var services: [GATTDiscoveredService] = []
        var characteristics: [GATTDiscoveredCharacteristic] = []
        var value: [UInt8] = []
        var completed: (GATTProcedureKind, GATTClientError?)?

        mutating func gattClientDidDiscover(service: GATTDiscoveredService) { services.append(service) }
        mutating func gattClientDidDiscover(characteristic: GATTDiscoveredCharacteristic) { characteristics.append(characteristic) }
        mutating func gattClientDidRead(handle: UInt16, offset: Int, value v: Span<UInt8>) {
            if offset == 0 { value.removeAll() }
            for i in v.indices { value.append(v[i]) }
        }
        mutating func gattClientDidComplete(_ procedure: GATTProcedureKind, error: GATTClientError?) { completed = (procedure, error) }
    }

    enum Phase: Equatable {
        case idle
        case connecting(DeviceAddress)
        case connected(DeviceAddress, handle: UInt16)
        case disconnecting(DeviceAddress, handle: UInt16)
    }

    /// Whether scans resume actively after each read.
    public let activeScanning: Bool
    /// Longest a whole read may take once connected, milliseconds.
    public var readTimeout: UInt64 = 10_000
    public var connectTimeout: UInt64 = 5_000
    /// At most this many connection attempts per advertiser.
    public var maxAttempts = 2
    /// Links lost before the payload was read are tried up to this many times, each a little later
    /// than the last: a Herald device busy with links of its own (the reference C++ apps) fails two
    /// in a row often enough (0x3E, the link never carried a packet) that two tries left a device of a
    /// 40 s scan unread, and the reference ends every link on its periodic restart of scanning and
    /// advertising (0x13), which once cut a scan's only link to it before the read.
    public var maxLostLinkAttempts = 4
    /// Milliseconds before the next try after a lost link, times the tries so far.
    public var lostLinkBackoff: UInt64 = 1_000
    /// Outcome per advertiser address (`AA:BB:…`).
    public private(set) var outcomes: [String: Outcome] = [:]
    /// New outcomes since `takeNewOutcomes`, for logging as they happen.
    private var fresh: [(address: String, outcome: Outcome)] = []
    var phase = Phase.idle
    var attempts: [String: Int] = [:]
    /// Per advertiser: how many attempts it may have (`maxAttempts` unless a link was lost before
    /// the read) and when the next may start.
    var allowed: [String: Int] = [:]
    var notBefore: [String: UInt64] = [:]
    var client = GATTStandardClient(maximumMTU: 247)
    var collector = Collector()
    var deadline: UInt64?
    /// The latest time any entry point was given, for deadlines set where no time is passed in.
    var clock: UInt64 = 0
    /// The scan's time is up (`finishReads`): the read under way goes on to its end, bounded by its own
    /// deadlines, and nothing new starts.
    public private(set) var finishing = false

    public init(activeScanning: Bool) { self.activeScanning = activeScanning }

    public var isIdle: Bool { phase == .idle }
    public var nextDeadline: UInt64? {
        [deadline, client.nextDeadline].compactMap { $0 }.min()
    }

    /// The scan's time is up. A read under way is finished rather than cut: on a loaded machine a
    /// simulated Herald reference wearable was first heard 42 s into a 55 s scan, its link came up
    /// 1.2 s after the end, and the scan reported "the scan ended before the payload was read"
    /// (docs/ci-flakes.md). Each phase keeps its own bound (connection 5 s, read 10 s, disconnection
    /// 3 s); no new read starts, scanning is not resumed, and a link lost now is not tried again.
    public mutating func finishReads() { finishing = true }

    public mutating func takeNewOutcomes() -> [(address: String, outcome: Outcome)] {
        defer { fresh.removeAll() }
        return fresh
    }

    /// Starts a read of this advertiser if nothing else is under way and it is worth one.
    public mutating func consider(_ address: DeviceAddress, isHerald: Bool, connectable: Bool, now: UInt64, control: inout StackControl) {
        clock = max(clock, now)
        let key = address.address.description
        guard !finishing, phase == .idle, isHerald, connectable, outcomes[key] == nil,
              attempts[key, default: 0] < allowed[key, default: maxAttempts], now >= notBefore[key, default: 0] else { return }
        attempts[key, default: 0] += 1
        // One radio activity at a time keeps this working on controllers that cannot scan while initiating.
        control.stopScanning()
        guard control.connect(to: address, now: now, timeout: connectTimeout) else {
            control.startScanning(active: activeScanning)
            return
        }
        phase = .connecting(address)
    }

    public mutating func didConnect(_ link: ConnectionSummary, now: UInt64, control: inout StackControl) {
        guard case .connecting(let address) = phase, link.peer.address == address.address else { return }
        clock = max(clock, now)
        phase = .connected(address, handle: link.handle)
        client = GATTStandardClient(maximumMTU: 247)
        collector = Collector()
        deadline = now &+ readTimeout
        start(.discoverAllPrimaryServices, handle: link.handle, now: now, control: &control)
    }

    public mutating func didFailToConnect(to peer: DeviceAddress, status: HCIStatus, control: inout StackControl) {
        guard case .connecting(let address) = phase, peer.address == address.address else { return }
        let key = address.address.description
        if attempts[key, default: 0] >= maxAttempts || finishing {
            record(key, .failed("connection failed (status 0x\(hex(status.rawValue)))"))
        }
        phase = .idle
        deadline = nil
        resumeScanning(&control)
    }

    public mutating func didDisconnect(handle: UInt16, reason: HCIStatus, control: inout StackControl) {
        switch phase {
        case .connected(let address, let h) where h == handle:
            // The link ended before the payload was read, and not by us: 0x3E (Connection Failed to be
            // Established, Core 5.4 Vol 1 Part F 2.62: it never carried a packet), the peer's own end
            // (0x13) or a lost link (0x08). Each is tried again a little later, as a refused connection is.
            let key = address.address.description
            let tries = attempts[key, default: 0]
            if tries < maxLostLinkAttempts, !finishing {
                allowed[key] = maxLostLinkAttempts
                notBefore[key] = clock &+ lostLinkBackoff &* UInt64(tries)
            } else if outcomes[key] == nil {
                record(key, .failed("disconnected (reason 0x\(hex(reason.rawValue))) before the payload was read"))
            }
        case .disconnecting(_, let h) where h == handle:
            break  // our own Disconnect: `finish` recorded the outcome
        default:
            return
        }
        phase = .idle
        deadline = nil
        resumeScanning(&control)
    }

    mutating func resumeScanning(_ control: inout StackControl) {
        if !finishing { control.startScanning(active: activeScanning) }
    }

    public mutating func didReceiveATT(handle: UInt16, pdu: Span<UInt8>, now: UInt64, control: inout StackControl) {
        clock = max(clock, now)
        guard case .connected(_, let h) = phase, h == handle else { return }
        var reply = FixedBytes<256>()
        switch client.handle(pdu: pdu, now: now, delegate: &collector, reply: &reply) {
        case .send: _ = control.sendATT(handle: handle, pdu: reply.span)
        case .disconnect: finish(.failed("ATT transaction timed out"), control: &control); return
        case .none: break
        }
        advance(handle: handle, now: now, control: &control)
    }

    public mutating func timerFired(now: UInt64, control: inout StackControl) {
        clock = max(clock, now)
        guard let d = deadline, now >= d else {
            if case .connected(_, let h) = phase, client.tick(now: now, delegate: &collector) == .disconnect {
                finish(.failed("ATT transaction timed out"), handle: h, control: &control)
            }
            return
        }
        switch phase {
        case .connected(_, let h):
            finish(.failed("no payload within \(readTimeout) ms"), handle: h, control: &control)
        case .disconnecting(let address, _):
            // The link never reported its end; give up on it and scan again.
            phase = .idle
            deadline = nil
            if outcomes[address.address.description] == nil { record(address.address.description, .failed("disconnect never completed")) }
            resumeScanning(&control)
        default:
            deadline = nil
        }
    }

    /// After each response: when a procedure completed, start the next one or finish.
    mutating func advance(handle: UInt16, now: UInt64, control: inout StackControl) {
        guard let (kind, error) = collector.completed else { return }
        collector.completed = nil
        if let error { finish(.failed("GATT \(kind) failed: \(error)"), handle: handle, control: &control); return }
        switch kind {
        case .discoverAllPrimaryServices:
            guard let s = collector.services.first(where: {
                $0.uuid == HeraldIdentifiers.serviceUUID || $0.uuid == HeraldIdentifiers.registeredServiceUUID
            }) else { finish(.failed("no Herald service"), handle: handle, control: &control); return }
            start(.discoverAllCharacteristics(serviceStart: s.startHandle, serviceEnd: s.endHandle), handle: handle, now: now, control: &control)
        case .discoverAllCharacteristics:
            guard let c = collector.characteristics.first(where: { $0.uuid == HeraldIdentifiers.payloadCharacteristicUUID }) else {
                finish(.failed("no payload characteristic"), handle: handle, control: &control); return
            }
            start(.readLong(handle: c.valueHandle), handle: handle, now: now, control: &control)
        case .readLong:
            finish(.payload(collector.value), handle: handle, control: &control)
        default:
            break
        }
    }

    mutating func start(_ procedure: borrowing GATTProcedure, handle: UInt16, now: UInt64, control: inout StackControl) {
        var request = FixedBytes<256>()
        do {
            try client.start(procedure, now: now, into: &request)
        } catch {
            finish(.failed("GATT request refused: \(error)"), handle: handle, control: &control)
            return
        }
        if !control.sendATT(handle: handle, pdu: request.span) {
            finish(.failed("ATT queue full"), handle: handle, control: &control)
        }
    }

    /// The scan is over: a read under way is reported as cut short by it, not by the link's end that
    /// follows (the host's own Disconnect, 0x16, would otherwise read as the peer's doing).
    public mutating func scanEnded() {
        if case .connected(let address, _) = phase {
            let key = address.address.description
            if outcomes[key] == nil { record(key, .failed("the scan ended before the payload was read")) }
        }
        phase = .idle
        deadline = nil
    }

    mutating func finish(_ outcome: Outcome, control: inout StackControl) {
        if case .connected(_, let h) = phase { finish(outcome, handle: h, control: &control) }
    }

    mutating func finish(_ outcome: Outcome, handle: UInt16, control: inout StackControl) {
        guard case .connected(let address, _) = phase else { return }
        record(address.address.description, outcome)
        phase = .disconnecting(address, handle: handle)
        // If Disconnection Complete never comes, the timer gives up on the link and scans again.
        deadline = clock &+ 3_000
        control.disconnect(handle: handle)
    }

    mutating func record(_ key: String, _ outcome: Outcome) {
        outcomes[key] = outcome
        fresh.append((key, outcome))
    }
}
