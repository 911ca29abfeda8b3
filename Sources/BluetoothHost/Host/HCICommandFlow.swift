/// Where the core writes whole H4 packets (indicator included) bound for the controller. It also
/// sees every whole packet received, before the host acts on it, so a runtime can capture both
/// directions (btsnoop) in one place.
public protocol H4Output {
    mutating func send(h4 packet: Span<UInt8>)
    mutating func didReceive(h4 packet: Span<UInt8>)
}

extension H4Output {
    public mutating func didReceive(h4 packet: Span<UInt8>) {}
}

/// Who asked for a command, so its completion can be routed without closures.
/// Values below 0x100 belong to the host itself (bring-up, GAP); upper layers pick their own.
public struct CommandTag: RawRepresentable, Equatable, Hashable, Sendable {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public static let bringUp = CommandTag(rawValue: 0x0001)
    public static let gap = CommandTag(rawValue: 0x0002)
    public static let connection = CommandTag(rawValue: 0x0003)
    /// The host's own liveness probe (`HostConfiguration.livenessInterval`).
    public static let liveness = CommandTag(rawValue: 0x0004)
    public static let application = CommandTag(rawValue: 0x0100)
}

/// Why a command could not be queued.
public enum CommandQueueError: Error, Equatable, Sendable {
    case queueFull
    case parametersTooLong(Int)
}

/// The result of matching a Command Complete / Command Status against what we sent.
public enum CommandMatch: Equatable, Sendable {
    /// It completes the command we were waiting for.
    case pending(CommandTag)
    /// Opcode 0x0000: the controller only announces its command credits (Core 5.4 Vol 4 Part E 7.7.14).
    case nop
    /// A completion for a command no longer pending (it timed out, or a Reset overtook it): ignored.
    case late
}

/// Host→controller command flow control (Core 5.4 Vol 4 Part E 4.4).
///
/// The controller says in every Command Complete/Status how many commands it will accept
/// (Num_HCI_Command_Packets); Zephyr's controller accepts one. We keep at most one command outstanding
/// whatever the controller allows, which is always within its limit and keeps completions
/// unambiguous, and queue the rest in fixed storage. After power-on the host may assume one credit.
public struct HCICommandFlow<let octets: Int> {
    /// Commands waiting for the controller, packed (see `HCICommandQueue` for why).
    public private(set) var queue = HCICommandQueue<octets>()
    /// Commands the controller will accept now.
    public private(set) var credits = 1
    public private(set) var pending: (opcode: HCIOpcode, tag: CommandTag, deadline: UInt64)?
    public private(set) var lateCompletions = 0
    /// Whether the controller has an LE Create Connection under way, from its successful Command
    /// Status to the LE Connection Complete that ends it (`HCIHost` keeps it). While it has none, an
    /// LE Create Connection Cancel still queued is obsolete and is dropped unsent: the controller
    /// must refuse it (0x0C Command Disallowed, Core 5.4 Vol 4 Part E 7.8.13). That happens when the
    /// attempt ends while the cancel waits behind another command: the two devices connect to each
    /// other at once (the peer's link makes the stack cancel ours, then ours completes as well).
    public internal(set) var initiating = false
    /// Obsolete LE Create Connection Cancels dropped unsent (see `initiating`).
    public private(set) var obsoleteCancels = 0
    /// How long a command may go unanswered unless `enqueue` says otherwise.
    public var timeout: UInt64
    /// After a standard command times out, how much longer its answer is waited for before one
    /// credit is assumed. A stalled controller answers late but in order (seen: 11.6 s under load),
    /// and commands sent meanwhile would exceed its one credit (Core 5.4 Vol 4 Part E 4.4) and find
    /// their answers mixed with the late ones: so nothing is sent until the answer or this grace.
    /// Zephyr's own host gives a command 10 s in all before it stops.
    public var lateAnswerGrace: UInt64 = 8_000
    /// Until when the controller owes the answer to a command that timed out (see `lateAnswerGrace`).
    public private(set) var owedUntil: UInt64?

    public init(timeout: UInt64 = 2_000) { self.timeout = timeout }

    public var queuedCount: Int { queue.count }

    /// Forgets every queued and pending command (after Reset or a controller failure).
    public mutating func clear() {
        queue.removeAll()
        pending = nil
        owedUntil = nil
        credits = 1
        initiating = false
    }

    /// Queues `command`; `timeout` overrides the default (vendor commands use a short one, because a
    /// controller that does not know them may never answer).
    public mutating func enqueue<C: HCICommand>(
        _ command: C, tag: CommandTag, timeout: UInt64? = nil
    ) throws(CommandQueueError) {
        let packet = HCICommandPacket(command)
        // The length is counted only to name it in the error.
        guard packet.fits else { throw .parametersTooLong(command.parameterLength) }
        guard queue.append(packet: packet, tag: tag, timeout: timeout ?? self.timeout) else { throw .queueFull }
    }

    /// Queues an encoded command.
    mutating func enqueue(packet: borrowing HCICommandPacket, tag: CommandTag, timeout: UInt64) throws(CommandQueueError) {
        guard packet.fits else { throw .parametersTooLong(packet.bytes.count &- 4) }
        guard queue.append(packet: packet, tag: tag, timeout: timeout) else { throw .queueFull }
    }

    /// Queues a command without parameters by its opcode (see `HCICommandQueue.append(parameterless:)`).
    public mutating func enqueue(parameterless opcode: HCIOpcode, tag: CommandTag, timeout: UInt64? = nil) throws(CommandQueueError) {
        guard queue.append(parameterless: opcode, tag: tag, timeout: timeout ?? self.timeout) else { throw .queueFull }
    }

    /// Takes the first of the application's deferred commands (`StackControl`), if it fits; a
    /// command queued without a timeout of its own gets `timeout` (or the flow's default).
    mutating func take<Q: HCICommandQueueing>(from commands: inout Q, timeout: UInt64? = nil) -> Bool {
        commands.moveFirst(to: &queue, defaultTimeout: timeout ?? self.timeout)
    }

    /// Sends the next command if the controller has a credit and nothing is outstanding.
    public mutating func pump<O: H4Output>(now: UInt64, to output: inout O) {
        // Not while LE Create Connection itself awaits its Command Status: the attempt is starting.
        // The queue is read in place (`firstInPlace`, `sendFirst`): through `first` and
        // `withFirstPacket` it was copied whole into this frame, three times a call.
        while !initiating, pending?.opcode != HCILECreateConnection.opcode,
              queue.firstInPlace()?.opcode == HCILECreateConnectionCancel.opcode {
            queue.removeFirst()
            obsoleteCancels &+= 1
        }
        guard pending == nil, credits > 0, let next = queue.firstInPlace() else { return }
        credits -= 1
        pending = (next.opcode, next.tag, now &+ (next.timeout == 0 ? timeout : next.timeout))
        queue.sendFirst(to: &output)
        queue.removeFirst()
    }

    /// Sends `command` at once, dropping everything queued or pending: used only for HCI Reset, which
    /// the controller must accept whatever state it is in (Core 5.4 Vol 4 Part E 7.3.2).
    public mutating func sendImmediately<C: HCICommand, O: H4Output>(
        _ command: C, tag: CommandTag, now: UInt64, to output: inout O
    ) {
        clear()
        var packet = FixedBytes<68>()
        command.writePacket(to: &packet)
        credits = 0
        pending = (C.opcode, tag, now &+ timeout)
        output.send(h4: packet.span)
    }

    /// Records a Command Complete or Command Status for `opcode` that grants `numPackets` credits.
    public mutating func complete(opcode: HCIOpcode, numPackets: UInt8) -> CommandMatch {
        credits = Int(numPackets)
        // Any answer says the controller is working through its commands again: a late one pays what
        // it owed, and it grants credits afresh.
        owedUntil = nil
        if opcode == .nop { return .nop }
        guard let p = pending, p.opcode == opcode else {
            lateCompletions &+= 1
            return .late
        }
        pending = nil
        return .pending(p.tag)
    }

    /// The pending command, if it has waited past its deadline. It is forgotten at once (its owner
    /// hears of it and gives up); the credit it held comes back with its late answer or, failing
    /// that, after `lateAnswerGrace`, so a controller that silently drops a command does not stall
    /// the queue forever; except for commands that `mayGoUnanswered`, whose credit comes back at once.
    public mutating func expired(now: UInt64) -> (opcode: HCIOpcode, tag: CommandTag)? {
        var timedOut: (opcode: HCIOpcode, tag: CommandTag)?
        if let p = pending, now >= p.deadline {
            pending = nil
            timedOut = (p.opcode, p.tag)
            if Self.mayGoUnanswered(p.opcode) {
                credits = max(credits, 1)
            } else {
                // Counted from when the answer was due, not from when a tick noticed.
                owedUntil = p.deadline &+ lateAnswerGrace
            }
        }
        if let owed = owedUntil, now >= owed {
            owedUntil = nil
            credits = max(credits, 1)
        }
        return timedOut
    }

    /// Commands a working controller may leave unanswered: vendor commands it does not know, and LE
    /// Encrypt and LE Set PHY, which Bumble's virtual controller (0.0.236) never answers (the
    /// advertiser then hashes in software; the stack asks for 2M no more). Their silence is "not
    /// supported", not a stall, so their credit comes back at once.
    static func mayGoUnanswered(_ opcode: HCIOpcode) -> Bool {
        opcode.isVendorSpecific || opcode == HCILEEncrypt.opcode || opcode == HCILESetPHY.opcode
    }

    /// The next time `expired` has something to do: a pending command's deadline or the end of the
    /// grace for a late answer.
    public var deadline: UInt64? {
        switch (pending?.deadline, owedUntil) {
        case let (p?, o?): min(p, o)
        case let (p?, nil): p
        case let (nil, o): o
        }
    }
}
