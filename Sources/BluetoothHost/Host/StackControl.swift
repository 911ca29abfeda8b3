/// The capacities of an application's `StackControlOf` (`LEApplication.ControlBuffers`): its command
/// queue and its outbound ACL queue, chosen by what the application sends.
public protocol StackControlBuffers {
    associatedtype Commands: HCICommandQueueing
    associatedtype ACL: ACLOutboundQueueing
    /// The ACL credit table: one entry per link the application may hold at once (16 unless chosen).
    associatedtype Credits: ACLCreditLedger = ACLCredits<16>
}

/// A command queue of `commandOctets` and an outbound ACL queue of `aclOctets` (each packed: see
/// `HCICommandQueue`, `ACLOutboundQueue` for what a record takes).
public enum StackControlQueues<let commandOctets: Int, let aclOctets: Int>: StackControlBuffers {
    public typealias Commands = HCICommandQueue<commandOctets>
    public typealias ACL = ACLOutboundQueue<aclOctets>
}

/// The Herald sensor's: 384 octets of commands, because one callback of the sensor can
/// legitimately queue 10 commands of 213 octets in all (a connection attempt plus the advertiser's
/// address change: scan off, advertising off, address, parameters, data, scan response, advertising
/// on, scan parameters, scan on; when the room was too small the final Scan Enable was dropped and
/// the sensor stopped hearing adverts); 1,024 octets of ACL data, four full 247-octet ATT PDUs
/// (forty 27-octet fragments: far more than a controller buffers at once, so the wire never idles)
/// or dozens of the short responses a Herald peer exchanges.
public typealias StandardControlBuffers = StackControlQueues<384, 1024>

/// The `StackControlOf` of every application that does not choose its buffers.
public typealias StackControl = StackControlOf<StandardControlBuffers>

/// What an application may ask the stack to do, from inside any callback.
///
/// Callbacks run while the HCI host is busy delivering an event, so nothing is sent from inside them:
/// commands and ACL data are queued here and flushed by `BluetoothStack` as soon as the callback
/// returns (within the same `receive`/`tick` call). This is what lets the whole stack be plain values
/// with no references between layers.
public struct StackControlOf<Buffers: StackControlBuffers> {
    /// Commands waiting to enter the HCI host's queue, packed (`HCICommandQueue`), as many as the
    /// application's busiest callback queues (`StandardControlBuffers` says why the sensor's are 384
    /// octets).
    static var commandCapacity: Int { Buffers.Commands.totalOctets }
    var commands = Buffers.Commands()
    /// Commands that did not fit (the application asked for more than 16 in one callback).
    public private(set) var droppedCommands = 0
    /// Outbound L2CAP PDUs waiting for controller buffers, packed; at least one whole PDU of the
    /// application's `LinkBuffers` (`LEStack` checks), since a response that never fits would be
    /// held forever.
    public internal(set) var acl = Buffers.ACL()
    /// Host→controller flow control (Core 5.4 Vol 4 Part E 4.1.1): by default for up to 16 links (the
    /// most Zephyr's hci_uart can be built for), whatever the connection table holds; an application
    /// that holds fewer links chooses a smaller table (`StackControlBuffers.Credits`).
    public internal(set) var credits = Buffers.Credits()
    /// The outstanding LE Create Connection, if any: the controller's own connect procedure has no
    /// timeout, so the host keeps one and cancels (Core 5.4 Vol 4 Part E 7.8.13).
    public internal(set) var connecting: ConnectionAttempt?
    /// The scan the application asked for (`startScanning`), held through connection attempts:
    /// the stack pauses the scanner to initiate and resumes this when the attempt ends.
    public internal(set) var scanning: ScanIntent?
    /// Whether our last LE Set Scan Enable turned the controller's scanner on. Kept so that no
    /// command restates a state the controller already holds (Zephyr answers some with 0x0C).
    public internal(set) var scannerEnabled = false
    /// Our identity: which own-address type to use in advertising, scanning and connecting.
    public internal(set) var ownAddressType: HCIOwnAddressType = .randomAddress
    /// Advertising the application asked for; re-enabled after a peripheral connection if wanted.
    public internal(set) var advertising: AdvertisingIntent?
    /// Whether our last LE Set Advertising Enable through `startAdvertising` turned advertising on
    /// (and no connection has stopped it since). Disabling advertising that is off is refused by
    /// some controllers (Zephyr 2.5 answers 0x0C), so it is only sent when on.
    public internal(set) var advertiserEnabled = false
    /// Whether another peripheral link is welcome (`LEApplication.inboundLinks`): false when the
    /// links not kept for the central role are all taken. Connectable advertising stays off then.
    public internal(set) var acceptsInboundLinks = true
    /// Centrals that connected while we advertised and were refused before the application heard of
    /// them (no free slot in the link table): the controller stopped connectable advertising for
    /// each (Core 5.4 Vol 6 Part B 4.4.2.3), so an application advertising on its own reads this.
    public internal(set) var refusedWhileAdvertising = 0
    /// Counts `startAdvertising`/`stopAdvertising` calls, so the stack can tell whether the
    /// application configured advertising during a callback.
    var advertisingRequests = 0
    /// Set when an ATT PDU could not be queued (queue full): the caller should retry later.
    public private(set) var aclQueueFullEvents = 0

    public init() {}

    /// Queues any HCI command; its completion reaches the application with `tag`.
    /// Out of line: one copy per command type, rather than the encoder written out again at each of
    /// the dozens of places that send (0.4 KB of a beacon image); each copy only encodes, and one
    /// non-generic `enqueue` queues them all.
    @inline(never)
    public mutating func send<C: HCICommand>(_ command: C, tag: CommandTag = .application) {
        var packet = HCICommandPacket(opcode: C.opcode)
        packet.appendParameters(of: command)
        packet.finish()
        enqueue(packet, tag: tag)
    }

    @inline(never)
    mutating func enqueue(_ packet: consuming HCICommandPacket, tag: CommandTag) {
        if !commands.append(packet: packet, tag: tag, timeout: 0) { droppedCommands &+= 1 }
    }

    /// Queues an L2CAP PDU on `handle`, fragmented to the controller's ACL length. False when the
    /// queue has no room for all of it (nothing is queued then).
    @discardableResult
    public mutating func sendL2CAP(handle: UInt16, channel: L2CAPChannelID, payload: Span<UInt8>) -> Bool {
        do throws(ACLQueueError) {
            try acl.enqueue(handle: handle, channel: channel, payload: payload)
            return true
        } catch {
            aclQueueFullEvents &+= 1
            return false
        }
    }

    /// Queues an ATT PDU (channel 0x0004).
    @discardableResult
    public mutating func sendATT(handle: UInt16, pdu: Span<UInt8>) -> Bool {
        sendL2CAP(handle: handle, channel: .att, payload: pdu)
    }

    /// Queues Disconnect for a link, once: the controller refuses a second one while the link is
    /// already being terminated (0x0C Command Disallowed from Zephyr 2.5 and 3.0), and two owners may
    /// both close a link (a role's stop closes its links, then the runtime's `releaseLinks` closes
    /// every link still in the table until Disconnection Complete arrives). A Disconnect the command
    /// queue had no room for is not noted, so a later call sends it.
    /// Out of line: a dozen callers (timeouts, refusals, failed procedures) each had the check, the
    /// command's encoding call and the note inlined (wearable -576 B, beacon -128 B).
    @inline(never)
    public mutating func disconnect(handle: UInt16, reason: HCIStatus = .remoteUserTerminated) {
        guard !credits.isDisconnecting(handle: handle) else { return }
        let dropped = droppedCommands
        send(HCIDisconnect(handle: handle, reason: reason), tag: .connection)
        if droppedCommands == dropped { credits.markDisconnecting(handle: handle) }
    }

    /// Configures and enables legacy advertising. With `restartAfterConnection` the stack enables it
    /// again whenever a peripheral connection is made (legacy connectable advertising stops then,
    /// Core 5.4 Vol 6 Part B 4.4.2.3), so more centrals can find us.
    public mutating func startAdvertising(_ intent: AdvertisingIntent) {
        advertising = intent
        advertisingRequests &+= 1
        var parameters = intent.parameters
        parameters.ownAddressType = ownAddressType
        // Parameters cannot change while advertising (Core 5.4 Vol 4 Part E 7.8.5).
        if advertiserEnabled { send(HCILESetAdvertisingEnable(false), tag: .gap) }
        send(parameters, tag: .gap)
        send(HCILESetAdvertisingData(data: intent.data), tag: .gap)
        send(HCILESetScanResponseData(data: intent.scanResponse), tag: .gap)
        send(HCILESetAdvertisingEnable(true), tag: .gap)
        advertiserEnabled = true
    }

    public mutating func stopAdvertising() {
        advertising = nil
        advertisingRequests &+= 1
        guard advertiserEnabled else { return }
        send(HCILESetAdvertisingEnable(false), tag: .gap)
        advertiserEnabled = false
    }

    /// Drops everything tied to the controller (after a failure or Reset).
    mutating func reset() {
        commands.removeAll()
        acl = Buffers.ACL()
        credits = Buffers.Credits()
        connecting = nil
        scanning = nil
        scannerEnabled = false
        advertiserEnabled = false
        acceptsInboundLinks = true
    }
}

/// Legacy advertising the application wants (Core 5.4 Vol 4 Part E 7.8.5-7.8.9).
public struct AdvertisingIntent {
    // The flag between the parameters (15 octets, 2-aligned) and the data (2-aligned), where the
    // octet of padding was: LLVM split an intent at that padding and copied the parameters an octet
    // at a time on the Cortex-M0, which has no unaligned access (docs/footprint.md, issue 37's
    // sixth round).
    public var parameters: HCILESetAdvertisingParameters
    public var restartAfterConnection: Bool
    public var data: FixedBytes<31>
    public var scanResponse: FixedBytes<31>

    public init(parameters: HCILESetAdvertisingParameters, data: FixedBytes<31>,
                scanResponse: FixedBytes<31> = FixedBytes<31>(), restartAfterConnection: Bool = true) {
        self.parameters = parameters
        self.data = data
        self.scanResponse = scanResponse
        self.restartAfterConnection = restartAfterConnection
    }
}

extension StackControlOf {
    /// `init()` for memory that holds no value yet, a stored property at a time, each queue in a
    /// frame of its own (`BluetoothStack.initialize`): the 1.8 KB value is never built whole in a
    /// temporary. `BluetoothStackInPlaceTests` checks it leaves no property unset.
    @inline(never)
    mutating func initializeInPlace() {
        assignInPlace(&commands) { Buffers.Commands() }
        droppedCommands = 0
        assignInPlace(&acl) { Buffers.ACL() }
        assignInPlace(&credits) { Buffers.Credits() }
        connecting = nil
        scanning = nil
        scannerEnabled = false
        ownAddressType = .randomAddress
        advertising = nil
        advertiserEnabled = false
        acceptsInboundLinks = true
        refusedWhileAdvertising = 0
        advertisingRequests = 0
        aclQueueFullEvents = 0
    }
}
