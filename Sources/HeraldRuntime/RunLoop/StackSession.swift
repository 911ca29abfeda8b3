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

/// One controller behind one transport, driven by a sans-I/O `BluetoothStack`.
///
/// The session is where the core meets the outside world for the controller link: it reads the port,
/// passes bytes and the time into the stack, writes what the stack sends, and records every packet in
/// both directions to the btsnoop capture if one is open.
public final class StackSession<App: LEApplication, let links: Int, let attributes: Int, let values: Int> {
    public typealias Stack = BluetoothStack<App, links, attributes, values>
    public let transport: HCITransport
    public var stack: Stack
    public let snoop: BTSnoopWriter?
    /// The first write error since the last turn; writes happen inside the core's calls, which
    /// cannot throw, so the loop checks this after each one.
    fileprivate var writeError: TransportError?
    private var readBuffer = [UInt8](repeating: 0, count: 4096)

    public init(transport: HCITransport, snoop: BTSnoopWriter? = nil, stack: Stack) {
        self.transport = transport
        self.snoop = snoop
        self.stack = stack
    }

    public var app: App {
        get { stack.app }
        set { stack.app = newValue }
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
        var out = SessionOutput(session: self)
        stack.start(now: MonotonicClock.now(), output: &out)
        try checkWrites()
    }

    /// Acts on the stack from outside a callback (connect, notify, advertise), then sends what it queued.
    @discardableResult
    public func perform<R>(_ body: (inout LEStack<App, links, attributes, values>) -> R) throws(TransportError) -> R {
        var out = SessionOutput(session: self)
        let r = stack.perform(now: MonotonicClock.now(), output: &out, body)
        try checkWrites()
        return r
    }

    /// Runs until `step` says stop or `deadline` (monotonic ms) passes. `step` runs after every turn
    /// (each read or timer), so the caller can react to what the application recorded.
    public func run(deadline: UInt64? = nil, step: (StackSession) throws -> RunDecision) throws {
        while true {
            let now = MonotonicClock.now()
            if let deadline, now >= deadline { return }
            // Sleep in the read until the core's next timer, but wake at least every 50 ms so `step`
            // can react to outside events (signals, standard input).
            var wait: UInt64 = 50
            if let d = stack.nextDeadline { wait = d > now ? min(wait, d - now) : 0 }
            if let deadline { wait = min(wait, deadline > now ? deadline - now : 0) }
            let count = try readBuffer.withUnsafeMutableBytes { buffer throws(TransportError) in
                try transport.read(into: buffer, timeout: .milliseconds(Int(wait)))
            }
            var out = SessionOutput(session: self)
            let after = MonotonicClock.now()
            if count > 0 {
                readBuffer.withUnsafeBufferPointer { raw in
                    let span = Span(_unsafeElements: UnsafeBufferPointer(rebasing: raw[0..<count]))
                    stack.receive(span, now: after, output: &out)
                }
            }
            if let d = stack.nextDeadline, after >= d { stack.tick(now: after, output: &out) }
            try checkWrites()
            if try step(self) == .stop { return }
        }
    }

    private func checkWrites() throws(TransportError) {
        if let e = writeError {
            writeError = nil
            throw e
        }
    }

    /// Closes the capture and the port.
    public func close() {
        snoop?.close()
        transport.close()
    }
}

/// Writes what the core sends to the port, and captures both directions.
struct SessionOutput<App: LEApplication, let links: Int, let attributes: Int, let values: Int>: H4Output {
    let session: StackSession<App, links, attributes, values>

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

    mutating func didReceive(h4 packet: Span<UInt8>) {
        guard let snoop = session.snoop else { return }
        packet.withUnsafeBytes { snoop.write(packet: $0, direction: .received, at: Date()) }
    }
}
