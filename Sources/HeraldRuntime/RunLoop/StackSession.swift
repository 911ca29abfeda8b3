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
    public private(set) var transport: HCITransport
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

    /// Long-running roles keep going through controller failures and unplugged dongles: with a
    /// supervisor, a failed controller (Hardware Error, Zephyr assert, a command never answered, no
    /// answer to Reset) is brought up again, and a lost port is reopened every `retryInterval` ms.
    public struct Supervision {
        public var reopen: () throws(TransportError) -> HCITransport
        public var log: (String) -> Void
        public var retryInterval: UInt64 = 1_000
        public init(reopen: @escaping () throws(TransportError) -> HCITransport, log: @escaping (String) -> Void) {
            self.reopen = reopen
            self.log = log
        }
    }

    public var supervision: Supervision?
    /// How often the supervisor restarted bring-up and reopened the port (for logs and tests).
    public private(set) var restarts = 0
    public private(set) var reopens = 0
    /// Print `statisticsJSON()` to standard error on `close()` (`--stats`: fault-injection tests read it).
    public var reportsStatisticsAtClose = false
    /// Also print them every this many ms while running (`--stats-interval`: the soak follows
    /// links, queues, credits and the device database over an hour).
    public var statisticsInterval: UInt64?
    private var nextStatistics: UInt64 = 0
    /// Framer skips already logged, and when the next periodic check is due.
    private var loggedSkippedBytes = 0
    private var nextSkipLog: UInt64 = 0
    private var restartAt: UInt64?

    /// Default host settings, with six bytes from the system RNG for a generated static address.
    public static func defaultConfiguration() -> HostConfiguration {
        var rng = SystemRandomNumberGenerator()
        var seed = InlineArray<6, UInt8>(repeating: 0)
        for i in 0..<6 { seed[i] = UInt8.random(in: 0...255, using: &rng) }
        var configuration = HostConfiguration(randomAddressSeed: seed)
        // A controller silent for 2 s is probed; with the 2 s command timeout a dead one is noticed
        // within 4 s even by a role that only listens.
        configuration.livenessInterval = 2_000
        return configuration
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
            do throws(TransportError) {
                try turn(now: now, deadline: deadline)
            } catch {
                guard let supervision, error.isDisconnection else { throw error }
                supervision.log("controller link \(transport.name) lost: \(error); reopening every \(supervision.retryInterval) ms")
                guard try reopenPort(supervision, deadline: deadline, step: step) else { return }
                continue
            }
            if let supervision {
                if superviseController(supervision, now: MonotonicClock.now()) {
                    guard try reopenPort(supervision, deadline: deadline, step: step) else { return }
                }
                logSkippedBytes(supervision, now: MonotonicClock.now())
            }
            if let interval = statisticsInterval { reportStatistics(every: interval, now: MonotonicClock.now()) }
            if try step(self) == .stop { return }
        }
    }

    private func reportStatistics(every interval: UInt64, now: UInt64) {
        if nextStatistics == 0 { nextStatistics = now + interval }
        guard now >= nextStatistics else { return }
        nextStatistics = now + interval
        FileHandle.standardError.write(Data("herald-stats: \(statisticsJSON())\n".utf8))
    }

    /// One read (or timer) and what follows from it.
    private func turn(now: UInt64, deadline: UInt64?) throws(TransportError) {
        // Sleep in the read until the core's next timer, but wake at least every 50 ms so `step`
        // can react to outside events (signals, standard input).
        var wait: UInt64 = 50
        if let d = stack.nextDeadline { wait = d > now ? min(wait, d - now) : 0 }
        if let deadline { wait = min(wait, deadline > now ? deadline - now : 0) }
        let count: Int
        do {
            count = try readBuffer.withUnsafeMutableBytes { buffer throws(TransportError) in
                try transport.read(into: buffer, timeout: .milliseconds(Int(wait)))
            }
        } catch let e as TransportError {
            throw e
        } catch {
            throw .io(transport.name, reason: "\(error)")
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
    }

    /// A failed controller is reset and brought up again after a short pause (a controller that
    /// asserted may need a moment to reboot; one that never answers keeps being retried).
    /// Returns true when the port itself should be reopened first: a controller that never answers
    /// Reset may sit behind a port that now leads elsewhere (a re-enumerated dongle, a pty whose far
    /// end was replaced and whose name another process now holds), so bring-up alone never recovers.
    private func superviseController(_ supervision: Supervision, now: UInt64) -> Bool {
        guard case .failed(let failure) = stack.hci.state else {
            restartAt = nil
            return false
        }
        guard let at = restartAt else {
            supervision.log("controller on \(transport.name) failed: \(ControllerDescriptions.failureDescription(failure)); restarting bring-up")
            restartAt = now + 500
            return false
        }
        guard now >= at else { return false }
        restartAt = nil
        restarts += 1
        if case .noResponse = failure {
            supervision.log("controller on \(transport.name) never answered; reopening the port")
            return true
        }
        do throws(TransportError) { try start() } catch {
            supervision.log("restart on \(transport.name) failed: \(error)")
        }
        return false
    }

    /// Reopens the port until it works, the deadline passes, or `step` says stop. Then brings the
    /// controller up again (a re-plugged dongle has rebooted and forgotten everything).
    private func reopenPort(_ supervision: Supervision, deadline: UInt64?, step: (StackSession) throws -> RunDecision) throws -> Bool {
        transport.close()
        while true {
            if let deadline, MonotonicClock.now() >= deadline { return false }
            if try step(self) == .stop { return false }
            do throws(TransportError) {
                transport = try supervision.reopen()
                reopens += 1
                supervision.log("controller link \(transport.name) reopened")
                try start()
                return true
            } catch {
                usleep(useconds_t(supervision.retryInterval * 1000))
            }
        }
    }

    private func checkWrites() throws(TransportError) {
        if let e = writeError {
            writeError = nil
            throw e
        }
    }

    /// Line noise shows up as bytes the H4 framer had to skip; report it every 10 s while it grows.
    private func logSkippedBytes(_ supervision: Supervision, now: UInt64) {
        guard now >= nextSkipLog else { return }
        nextSkipLog = now + 10_000
        let c = stack.framer.counters
        guard c.skippedBytes != loggedSkippedBytes else { return }
        loggedSkippedBytes = c.skippedBytes
        supervision.log("H4 framer on \(transport.name): \(c.skippedBytes) bytes skipped, \(c.rejectedHeaders) headers rejected, \(c.oversizePackets) oversize packets")
    }

    /// The runtime's own counters: framer, input dropped (`malformedEvents` all kinds, then each),
    /// stack, ACL credits and queue, connections, supervision. A test checks after a fault that no
    /// connection slot or ACL credit leaked.
    public var statistics: [(String, Int)] {
        let f = stack.framer.counters
        let drops = stack.hci.drops
        let le = stack.le.counters
        let control = stack.le.control
        return [
            ("packets", f.packets), ("skippedBytes", f.skippedBytes), ("rejectedHeaders", f.rejectedHeaders),
            ("oversizePackets", f.oversizePackets),
            ("malformedACL", le.malformedACL), ("malformedEvents", drops.total),
        ] + drops.statistics + [
            ("rejectedConnections", le.rejectedConnections), ("reusedHandles", le.reusedHandles), ("refusedInboundLinks", le.refusedInboundLinks),
            ("idleLinksDropped", le.idleLinksDropped), ("attResponses", le.attResponses),
            ("dataLengthChanges", le.dataLengthChanges), ("lastTxOctets", Int(le.lastTxOctets)),
            ("lastRxOctets", Int(le.lastRxOctets)),
            // PHYs as the Core numbers them: 1 LE 1M, 2 LE 2M (Vol 4 Part E 7.7.65.12).
            ("phyUpdates", le.phyUpdates), ("failedPHYUpdates", le.failedPHYUpdates),
            ("lastTxPHY", Int(le.lastTxPHY.rawValue)), ("lastRxPHY", Int(le.lastRxPHY.rawValue)),
            ("connections", stack.le.connections.count), ("creditsInFlight", control.credits.inFlight),
            ("aclQueued", control.acl.count), ("aclQueueFullEvents", control.aclQueueFullEvents),
            ("droppedCommands", control.droppedCommands), ("restarts", restarts), ("reopens", reopens),
        ] + ((stack.le.app as? any ApplicationStatistics)?.applicationStatistics ?? [])
    }

    /// `statistics` as one JSON object, and `lastDrops`: the last few inputs the host dropped, oldest
    /// first, each named with its event code, subevent and reason.
    public func statisticsJSON() -> String {
        let drops = stack.hci.drops.recentDescriptions.map { "\"" + $0.replacingOccurrences(of: "\"", with: "'") + "\"" }
        return "{" + statistics.map { "\"\($0.0)\": \($0.1)" }.joined(separator: ", ")
            + ", \"lastDrops\": [" + drops.joined(separator: ", ") + "]}"
    }

    /// Closes the capture and the port.
    public func close() {
        let skipped = stack.framer.counters.skippedBytes
        if skipped > 0 { supervision?.log("H4 framer on \(transport.name): \(skipped) bytes skipped in all") }
        if reportsStatisticsAtClose {
            FileHandle.standardError.write(Data("herald-stats: \(statisticsJSON())\n".utf8))
        }
        snoop?.close()
        // The capture never throws into the HCI path (BTSnoopWriter); a capture that stopped being
        // written (a full disk) is said here, with how much of it is there, rather than not at all.
        if let snoop, let why = snoop.lastError {
            FileHandle.standardError.write(Data(
                "herald: btsnoop capture \(snoop.path) is incomplete: \(snoop.recordCount) records written, then \(why)\n".utf8))
        }
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
