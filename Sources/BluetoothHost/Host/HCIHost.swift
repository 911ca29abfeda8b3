/// What the host tells the layer above it. Every method has a default that ignores the call, so an
/// observer implements only what it needs.
public protocol HostDelegate {
    /// Bring-up finished: the controller is ready for advertising, scanning and connections.
    mutating func hostDidBecomeReady(_ info: ControllerInfo)
    /// The controller failed; the host is idle until `start` is called again.
    mutating func hostControllerDidFail(_ failure: ControllerFailure)
    /// A command sent with `Host.send` completed (Command Complete, or Command Status for commands
    /// that complete later with their own event). `returnParameters` follow the status byte.
    mutating func hostCommandDidComplete(tag: CommandTag, opcode: HCIOpcode, status: HCIStatus, returnParameters: Span<UInt8>)
    /// A command sent with `Host.send` was never answered.
    mutating func hostCommandDidTimeOut(tag: CommandTag, opcode: HCIOpcode)
    /// One advertising report, legacy or extended.
    mutating func hostDidReceive(advertisingReport: borrowing AdvertisingReport)
    // The events about links, each parsed once, in `HCIHost`, and handed on typed
    // (`HCIHost+ConnectionEvents.swift`).
    /// LE Connection Complete, of any of its three forms (Core 5.4 Vol 4 Part E 7.7.65.1,
    /// 7.7.65.10): the host reads it for its own initiating state too.
    mutating func hostDidReceive(connectionComplete: HCILEConnectionCompleteEvent)
    /// Disconnection Complete (7.7.5), whatever its status.
    mutating func hostDidReceive(disconnectionComplete: HCIDisconnectionCompleteEvent)
    /// Number Of Completed Packets (7.7.19): ACL credits back.
    mutating func hostDidReceive(completedPackets: borrowing HCINumberOfCompletedPacketsEvent)
    /// LE Connection Update Complete (7.7.65.3), whatever its status.
    mutating func hostDidReceive(connectionUpdateComplete: HCILEConnectionUpdateCompleteEvent)
    /// LE Remote Connection Parameter Request (7.7.65.6): the controller waits for the host's answer.
    mutating func hostDidReceive(remoteConnectionParameterRequest: HCILERemoteConnectionParameterRequestEvent)
    /// LE Data Length Change (7.7.65.7).
    mutating func hostDidReceive(dataLengthChange: HCILEDataLengthChangeEvent)
    /// LE PHY Update Complete (7.7.65.12), whatever its status.
    mutating func hostDidReceive(phyUpdateComplete: HCILEPHYUpdateCompleteEvent)
    /// Any event the host neither consumes nor hands on typed (other events, other LE subevents), as
    /// it came.
    mutating func hostDidReceive(event: borrowing HCIEventPacket)
    /// An ACL data packet, without its H4 indicator.
    mutating func hostDidReceive(acl: Span<UInt8>)
    /// False when advertising reports are of no interest (see `LEApplication.scans`): the host then
    /// drops them without parsing.
    static var receivesAdvertisingReports: Bool { get }
    /// False when the delegate never has the controller initiate connections (see
    /// `LEApplication.connectsAsCentral`): the host then skips tracking LE Create Connection's
    /// progress, which only the command flow's dropping of obsolete cancels reads.
    static var initiatesConnections: Bool { get }
    /// False when LE PHY Update Complete is of no interest (see `LEApplication.tracksPHYUpdates`):
    /// the host then drops it without parsing.
    static var receivesPHYUpdates: Bool { get }
    /// False when nobody reads `HCIHost.drops` (see `LEApplication.recordsInputDrops`): input that
    /// does not parse is then dropped uncounted, and the records' code is left out.
    static var recordsInputDrops: Bool { get }
    /// False when LE Data Length Change is of no interest (see `LEApplication.tracksDataLengthChanges`):
    /// the host then drops it without parsing.
    static var receivesDataLengthChanges: Bool { get }
    /// False when LE Connection Update Complete is of no interest (see
    /// `LEApplication.tracksConnectionTiming`): the host then drops it without parsing.
    static var receivesConnectionUpdates: Bool { get }
    /// False when the host's configuration never sets `livenessInterval` (see
    /// `LEApplication.probesControllerLiveness`): the probe's timer and command are then left out,
    /// and a configuration that sets an interval stops `BluetoothStack.start` with a message.
    static var probesLiveness: Bool { get }
}

extension HostDelegate {
    public mutating func hostDidBecomeReady(_ info: ControllerInfo) {}
    public mutating func hostControllerDidFail(_ failure: ControllerFailure) {}
    public mutating func hostCommandDidComplete(tag: CommandTag, opcode: HCIOpcode, status: HCIStatus, returnParameters: Span<UInt8>) {}
    public mutating func hostCommandDidTimeOut(tag: CommandTag, opcode: HCIOpcode) {}
    public mutating func hostDidReceive(advertisingReport: borrowing AdvertisingReport) {}
    public mutating func hostDidReceive(connectionComplete: HCILEConnectionCompleteEvent) {}
    public mutating func hostDidReceive(disconnectionComplete: HCIDisconnectionCompleteEvent) {}
    public mutating func hostDidReceive(completedPackets: borrowing HCINumberOfCompletedPacketsEvent) {}
    public mutating func hostDidReceive(connectionUpdateComplete: HCILEConnectionUpdateCompleteEvent) {}
    public mutating func hostDidReceive(remoteConnectionParameterRequest: HCILERemoteConnectionParameterRequestEvent) {}
    public mutating func hostDidReceive(dataLengthChange: HCILEDataLengthChangeEvent) {}
    public mutating func hostDidReceive(phyUpdateComplete: HCILEPHYUpdateCompleteEvent) {}
    public mutating func hostDidReceive(event: borrowing HCIEventPacket) {}
    public mutating func hostDidReceive(acl: Span<UInt8>) {}
    public static var receivesAdvertisingReports: Bool { true }
    public static var initiatesConnections: Bool { true }
    public static var receivesPHYUpdates: Bool { true }
    public static var recordsInputDrops: Bool { true }
    public static var receivesDataLengthChanges: Bool { true }
    public static var receivesConnectionUpdates: Bool { true }
    public static var probesLiveness: Bool { true }
}

public struct HostConfiguration: Sendable {
    /// HCI Reset is resent this often until answered (a board may still be booting).
    public var resetInterval: UInt64 = 200
    /// How many Resets before the controller is declared absent.
    public var resetAttempts = 15
    public var commandTimeout: UInt64 = 2_000
    /// Vendor commands get less patience: controllers that do not know them may never answer.
    /// (Declared before `livenessInterval`: the optional's tag after the 64-bit fields, not between
    /// them, is 8 octets less padding on 32-bit targets.)
    public var vendorCommandTimeout: UInt64 = 500
    /// A ready controller that has sent nothing for this long is asked something harmless (Read
    /// BD_ADDR); no answer within `commandTimeout` fails it. UART H4 has no link-level keepalive, so
    /// without this a controller that died behind a still-open port (a rebooted board whose UART
    /// bridge stays enumerated) goes unnoticed by a role that only listens, like a scanner. nil: off.
    public var livenessInterval: UInt64? = nil
    /// LE Write Suggested Default Data Length; clamped to the controller's maximum. 251 octets /
    /// 2120 µs is the largest LE 1M packet (Core 5.4 Vol 6 Part B 4.5.10).
    public var suggestedDataLength: (octets: UInt16, time: UInt16)? = (251, 2120)
    /// Whether links move to the LE 2M PHY where both controllers have it: LE Set Default PHY at
    /// bring-up, LE Set PHY on each link (Core 5.4 Vol 4 Part E 7.8.48-49). Twice the bits per
    /// microsecond of air; the range is a little shorter than LE 1M's (Vol 6 Part A 3).
    public var prefers2MPHY = true
    /// Six bytes from the runtime's random number generator, for a static random address when the
    /// controller has neither a public nor a factory static address (Core 5.4 Vol 6 Part B 1.3.2.1).
    public var randomAddressSeed: InlineArray<6, UInt8>

    public init(randomAddressSeed: InlineArray<6, UInt8>) { self.randomAddressSeed = randomAddressSeed }
}

public enum HostState: Equatable, Sendable {
    case off
    case bringingUp(BringUpStep)
    case ready
    case failed(ControllerFailure)
}

/// The controller-facing half of the host: H4 in, H4 out, bring-up, command flow, failure detection.
///
/// Sans-I/O: the runtime passes received bytes and the current time (milliseconds on any monotonic
/// clock) and calls `tick` at `nextDeadline`; outgoing packets go to the `H4Output` it passes in.
///
/// `Drops` keeps the input that did not parse (`LEApplication.InputDrops`); `HCIHost` is the host
/// that counts and names it.
public struct HCIHostOf<Drops: HCIInputDropRecording> {
    public var configuration: HostConfiguration
    public internal(set) var state: HostState = .off
    public internal(set) var info = ControllerInfo()
    /// 256 octets: bring-up queues one command at a time, and an application callback rarely more
    /// than ten of 4–36 octets (StackControl keeps any overflow for the next turn).
    public internal(set) var commands = HCICommandFlow<256>()
    /// Input dropped because it did not parse: counted by kind, the last few named.
    public internal(set) var drops = Drops()
    private var resetsSent = 0
    /// When the controller last sent anything, and whether a liveness probe is outstanding.
    private var lastHeard: UInt64 = 0
    private var probing = false
    private var nextResetAt: UInt64 = 0
    /// Generated once and kept across Resets, so our identity does not change when the controller
    /// restarts (a static address may only change at power-up).
    var generatedAddress: BDAddress?

    public init(configuration: HostConfiguration) {
        self.configuration = configuration
        commands.timeout = configuration.commandTimeout
    }

    public var isReady: Bool { state == .ready }

    /// Starts (or restarts, after a failure) bring-up with HCI Reset.
    public mutating func start<O: H4Output>(now: UInt64, output: inout O) {
        info = ControllerInfo()
        resetsSent = 0
        lastHeard = now
        probing = false
        state = .bringingUp(.reset)
        sendReset(now: now, output: &output)
    }

    /// Queues a command for the controller; its completion goes to the delegate with `tag`.
    public mutating func send<C: HCICommand, O: H4Output>(
        _ command: C, tag: CommandTag, now: UInt64, output: inout O
    ) throws(CommandQueueError) {
        let timeout = C.opcode.isVendorSpecific ? configuration.vendorCommandTimeout : configuration.commandTimeout
        try commands.enqueue(command, tag: tag, timeout: timeout)
        commands.pump(now: now, to: &output)
    }

    /// Moves commands the application queued into the command queue, as far as there is room;
    /// the rest stay in `control` for the next call.
    mutating func takeCommands<B: StackControlBuffers, O: H4Output>(from control: inout StackControlOf<B>, now: UInt64,
                                                                   output: inout O) {
        // Read in place: `control.commands.first` copied the application's whole queue on each turn.
        while let first = control.commands.firstInPlace() {
            let timeout = first.opcode.isVendorSpecific ? configuration.vendorCommandTimeout : nil
            guard commands.take(from: &control.commands, timeout: timeout) else { break }
        }
        commands.pump(now: now, to: &output)
    }

    /// The next time `tick` must run, if any timer is armed.
    public var nextDeadline: UInt64? { deadline(probing: true) }

    /// `nextDeadline` for a delegate of type `D`: the liveness timer only if `D` probes.
    func nextDeadline<D: HostDelegate>(for _: D.Type) -> UInt64? { deadline(probing: D.probesLiveness) }

    @inline(__always)
    private func deadline(probing probes: Bool) -> UInt64? {
        var d = commands.deadline
        if state == .bringingUp(.reset) { d = min(d ?? .max, nextResetAt) }
        if probes, state == .ready, !probing, let interval = configuration.livenessInterval { d = min(d ?? .max, lastHeard &+ interval) }
        return d
    }

    /// Runs timers: Reset retries and command timeouts.
    public mutating func tick<D: HostDelegate, O: H4Output>(now: UInt64, delegate: inout D, output: inout O) {
        if state == .bringingUp(.reset), now >= nextResetAt {
            if resetsSent >= configuration.resetAttempts {
                fail(.noResponse(resets: resetsSent), delegate: &delegate)
                return
            }
            sendReset(now: now, output: &output)
            return
        }
        if D.probesLiveness, state == .ready, !probing, let interval = configuration.livenessInterval, now &- lastHeard >= interval {
            // Queued like any command: it waits behind the application's, and its timeout is the usual one.
            if (try? send(HCIReadBDADDR(), tag: .liveness, now: now, output: &output)) != nil { probing = true }
        }
        let owed = commands.owedUntil != nil
        if let expired = commands.expired(now: now) {
            if case .bringingUp(let step) = state, expired.tag == .bringUp {
                // A vendor command that is never answered means "not supported", not a dead controller.
                if step.isVendorCommand {
                    advance(from: step, now: now, delegate: &delegate, output: &output)
                } else {
                    fail(.commandTimeout(expired.opcode), delegate: &delegate)
                }
            } else if expired.tag == .liveness {
                fail(.commandTimeout(expired.opcode), delegate: &delegate)
            } else {
                delegate.hostCommandDidTimeOut(tag: expired.tag, opcode: expired.opcode)
                commands.pump(now: now, to: &output)
            }
        } else if owed, commands.owedUntil == nil {
            // The late answer never came: the credit assumed lets the queue move again.
            commands.pump(now: now, to: &output)
        }
    }

    /// Feeds bytes received from the controller, through `framer` (the caller's: `BluetoothStack`
    /// keeps it beside the host). Being no part of the host, the framer's completed packet is
    /// handled where it lies while the host changes: when the framer was a field of the host, each
    /// packet was first copied out into a 268-octet local of this frame.
    ///
    /// With `inPlace` (the default) a packet that `bytes` holds whole is handled where it lies, not
    /// copied into the framer first: the common case for a host reading a USB UART in large reads.
    /// A caller whose reads are a few octets (the firmware's main loop reads at most 23) passes a
    /// constant false: the few packets that short are copied once, and the in-place path's code is
    /// left out of its image (176 B on the Cortex-M4 images, 272-288 B on the micro:bit's). Which packets are handled, and
    /// how, is the same either way.
    public mutating func receive<D: HostDelegate, O: H4Output, let capacity: Int>(
        _ bytes: Span<UInt8>, framer: inout H4Framer<capacity>, now: UInt64, delegate: inout D, output: inout O,
        inPlace: Bool = true
    ) {
        if bytes.count > 0 { lastHeard = now }
        var offset = 0
        while true {
            while let type = framer.completedType {
                handlePacket(type: type, framer.completedPacket, now: now, delegate: &delegate, output: &output)
                framer.release()
            }
            guard offset < bytes.count else { return }
            let rest = bytes.extracting(offset..<bytes.count)
            // A whole packet in the caller's bytes is handled where it lies: no copy at all.
            let whole = inPlace ? framer.wholePacket(at: rest) : 0
            // Both counts are of `rest`'s octets, so `offset` stays within `bytes`: unchecked sums.
            if whole > 0, let type = H4PacketType(rawValue: rest[0]) {
                handlePacket(type: type, rest.extracting(0..<whole), now: now, delegate: &delegate, output: &output)
                offset &+= whole
            } else {
                offset &+= framer.ingest(rest)
            }
        }
    }

    // MARK: - Packets

    // Not inlined: `receive` reaches it from two places (a whole packet in the caller's bytes, and
    // one the framer assembled), and inlining copied the whole event and ACL path into both.
    @inline(never)
    mutating func handlePacket<D: HostDelegate, O: H4Output>(
        type: H4PacketType, _ packet: Span<UInt8>, now: UInt64, delegate: inout D, output: inout O
    ) {
        output.didReceive(h4: packet)
        let body = packet.extracting(1..<packet.count)
        switch type {
        case .event:
            do throws(DecodeError) {
                let event = try HCIEventPacket(parsing: body)
                handleEvent(event, now: now, delegate: &delegate, output: &output)
            } catch {
                drop(D.self, .eventPacket, eventCode: body.count > 0 ? body[0] : 0, reason: error)
            }
        case .acl:
            delegate.hostDidReceive(acl: body)
        default:
            return
        }
    }

    private mutating func handleEvent<D: HostDelegate, O: H4Output>(
        _ event: borrowing HCIEventPacket, now: UInt64, delegate: inout D, output: inout O
    ) {
        switch event.code {
        case HCIEventCode.commandComplete:  // Core 5.4 Vol 4 Part E 7.7.14
            do throws(DecodeError) {
                let complete = try HCICommandCompleteEvent(parsing: event.parameters)
                let match = commands.complete(opcode: complete.opcode, numPackets: complete.numHCICommandPackets)
                guard case .pending(let tag) = match else {
                    commands.pump(now: now, to: &output)
                    return
                }
                let status = complete.status ?? .success
                if tag == .liveness {
                    probing = false
                } else if tag == .bringUp, case .bringingUp(let step) = state {
                    bringUpCompleted(step, status: status, returnParameters: complete.returnParameters, now: now, delegate: &delegate, output: &output)
                } else {
                    delegate.hostCommandDidComplete(tag: tag, opcode: complete.opcode, status: status, returnParameters: complete.returnParameters)
                }
                commands.pump(now: now, to: &output)
            } catch {
                // The command it answers stays pending and times out, as if unanswered.
                drop(D.self, .commandComplete, eventCode: event.code, reason: error)
            }
        case HCIEventCode.commandStatus:  // 7.7.15
            let s: HCICommandStatusEvent
            do throws(DecodeError) { s = try HCICommandStatusEvent(parsing: event.parameters) } catch {
                return drop(D.self, .commandStatus, eventCode: event.code, reason: error)
            }
            if D.initiatesConnections, s.opcode == HCILECreateConnection.opcode, s.status == .success { commands.initiating = true }
            if case .pending(let tag) = commands.complete(opcode: s.opcode, numPackets: s.numHCICommandPackets) {
                let empty = InlineArray<1, UInt8>(repeating: 0)
                delegate.hostCommandDidComplete(tag: tag, opcode: s.opcode, status: s.status, returnParameters: empty.span.extracting(0..<0))
            }
            commands.pump(now: now, to: &output)
        case HCIEventCode.hardwareError:  // 7.7.16
            let code = event.parameters.count > 0 ? event.parameters[0] : 0
            fail(.hardwareError(code: code), delegate: &delegate)
        case HCIEventCode.vendorSpecific:
            if HCIVendorEvent(parsing: event.parameters).isZephyrFatal {
                fail(.controllerAssert, delegate: &delegate)
            } else {
                delegate.hostDidReceive(event: event)
            }
        case HCIEventCode.disconnectionComplete, HCIEventCode.numberOfCompletedPackets, HCIEventCode.leMeta:  // 7.7.5, 7.7.19, 7.7.65
            handleConnectionEvent(event, delegate: &delegate)
        default:
            delegate.hostDidReceive(event: event)
        }
    }

    mutating func fail<D: HostDelegate>(_ failure: ControllerFailure, delegate: inout D) {
        commands.clear()
        state = .failed(failure)
        delegate.hostControllerDidFail(failure)
    }

    mutating func sendReset<O: H4Output>(now: UInt64, output: inout O) {
        resetsSent &+= 1  // one a second at most (`resetInterval`): it would wrap after 68 years
        nextResetAt = now &+ configuration.resetInterval
        commands.sendImmediately(HCIReset(), tag: .bringUp, now: now, to: &output)
    }
}

/// The host that counts and names the input it drops (`--stats`).
public typealias HCIHost = HCIHostOf<HCIInputDrops>
