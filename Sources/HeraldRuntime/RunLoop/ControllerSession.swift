import BluetoothHost
import Foundation

/// Milliseconds on a monotonic clock: the only time the core ever sees.
public enum MonotonicClock {
    public static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000 + UInt64(ts.tv_nsec) / 1_000_000
    }
}

/// What the run loop should do after each turn.
public enum RunDecision {
    case keepRunning
    case stop
}

/// One controller behind one transport, driven by the sans-I/O `Host`.
///
/// The session is the only place where the core meets the outside world for the controller link:
/// it reads the port, passes bytes and the time into the host, writes what the host sends, and
/// records every packet in both directions to the btsnoop capture if one is open.
public final class ControllerSession {
    public let transport: HCITransport
    public private(set) var host: HCIHost
    public let snoop: BTSnoopWriter?
    /// The first write error since the last turn; writes happen inside the core's calls, which
    /// cannot throw, so the loop checks this after each one.
    private var writeError: TransportError?
    private var readBuffer = [UInt8](repeating: 0, count: 4096)

    public init(transport: HCITransport, snoop: BTSnoopWriter? = nil, configuration: HostConfiguration? = nil) {
        self.transport = transport
        self.snoop = snoop
        self.host = HCIHost(configuration: configuration ?? ControllerSession.defaultConfiguration())
    }

    /// Default host settings, with six bytes from the system RNG for a generated static address.
    public static func defaultConfiguration() -> HostConfiguration {
        var rng = SystemRandomNumberGenerator()
        var seed = InlineArray<6, UInt8>(repeating: 0)
        for i in 0..<6 { seed[i] = UInt8.random(in: 0...255, using: &rng) }
        return HostConfiguration(randomAddressSeed: seed)
    }

    /// Starts bring-up (HCI Reset and the rest).
    public func start() throws(TransportError) {
        var out = Output(session: self)
        host.start(now: MonotonicClock.now(), output: &out)
        try checkWrites()
    }

    /// Queues a command; its completion reaches the delegate of the running loop with `tag`.
    public func send<C: HCICommand>(_ command: C, tag: CommandTag) throws {
        var out = Output(session: self)
        try host.send(command, tag: tag, now: MonotonicClock.now(), output: &out)
        try checkWrites()
    }

    /// Runs until `step` says stop or `deadline` (monotonic ms) passes. `step` runs after every turn
    /// (each read or timer), with the delegate, so the caller can act on what it recorded.
    public func run<D: HostDelegate>(
        delegate: inout D, deadline: UInt64? = nil, step: (inout D, ControllerSession) throws -> RunDecision
    ) throws {
        var tap = CaptureTap(inner: delegate, snoop: snoop)
        defer { delegate = tap.inner }
        while true {
            let now = MonotonicClock.now()
            if let deadline, now >= deadline { return }
            // Sleep in the read until the core's next timer, but wake at least every 50 ms so `step`
            // can react to outside events (signals, standard input).
            var wait: UInt64 = 50
            if let d = host.nextDeadline { wait = d > now ? min(wait, d - now) : 0 }
            if let deadline { wait = min(wait, deadline > now ? deadline - now : 0) }
            let count = try readBuffer.withUnsafeMutableBytes { buffer throws(TransportError) in
                try transport.read(into: buffer, timeout: .milliseconds(Int(wait)))
            }
            var out = Output(session: self)
            let after = MonotonicClock.now()
            if count > 0 {
                readBuffer.withUnsafeBufferPointer { raw in
                    let span = Span(_unsafeElements: UnsafeBufferPointer(rebasing: raw[0..<count]))
                    host.receive(span, now: after, delegate: &tap, output: &out)
                }
            }
            if let d = host.nextDeadline, after >= d {
                host.tick(now: after, delegate: &tap, output: &out)
            }
            try checkWrites()
            if try step(&tap.inner, self) == .stop { return }
        }
    }

    private func checkWrites() throws(TransportError) {
        if let e = writeError {
            writeError = nil
            throw e
        }
    }

    /// Writes what the core sends: to the port, and to the capture.
    struct Output: H4Output {
        let session: ControllerSession
        mutating func send(h4 packet: Span<UInt8>) {
            packet.withUnsafeBytes { raw in
                session.snoop?.write(packet: raw, direction: .sent, at: Date())
                do throws(TransportError) {
                    try session.transport.write(raw)
                } catch {
                    if session.writeError == nil { session.writeError = error }
                }
            }
        }
    }
}

/// Forwards every host callback to the caller's delegate and captures received packets.
struct CaptureTap<Inner: HostDelegate>: HostDelegate {
    var inner: Inner
    let snoop: BTSnoopWriter?

    mutating func hostDidFrame(packet: Span<UInt8>) {
        if let snoop { packet.withUnsafeBytes { snoop.write(packet: $0, direction: .received, at: Date()) } }
        inner.hostDidFrame(packet: packet)
    }
    mutating func hostDidBecomeReady(_ info: ControllerInfo) { inner.hostDidBecomeReady(info) }
    mutating func hostControllerDidFail(_ failure: ControllerFailure) { inner.hostControllerDidFail(failure) }
    mutating func hostCommandDidComplete(tag: CommandTag, opcode: HCIOpcode, status: HCIStatus, returnParameters: Span<UInt8>) {
        inner.hostCommandDidComplete(tag: tag, opcode: opcode, status: status, returnParameters: returnParameters)
    }
    mutating func hostCommandDidTimeOut(tag: CommandTag, opcode: HCIOpcode) { inner.hostCommandDidTimeOut(tag: tag, opcode: opcode) }
    mutating func hostDidReceive(advertisingReport: borrowing AdvertisingReport) { inner.hostDidReceive(advertisingReport: advertisingReport) }
    mutating func hostDidReceive(event: borrowing HCIEventPacket) { inner.hostDidReceive(event: event) }
    mutating func hostDidReceive(acl: Span<UInt8>) { inner.hostDidReceive(acl: acl) }
}
