/// The whole host: the controller-facing `HCIHost` and everything above it in `LEStack`, side by side.
///
/// Keeping the two as sibling values is what makes the design work without references: while
/// `hci` delivers an event, `le` is its delegate, and whatever `le` or the application wants sent is
/// queued in `le.control` and flushed into `hci` (commands) and the output (ACL data) once the call
/// returns. Runtime and firmware drive this type: bytes and time in, H4 packets out.
///
/// `framerOctets` is the largest H4 packet kept whole, indicator included (`H4Framer`): 260 for any
/// controller traffic (`BluetoothStack`); an image that knows what it receives chooses less, and
/// larger packets are discarded and counted (`H4FramerCounters.oversizePackets`).
public struct BluetoothStackOf<App: LEApplication, let links: Int, let attributes: Int, let values: Int, let framerOctets: Int> {
    public var hci: HCIHostOf<App.InputDrops>
    /// The H4 framer of the controller's byte stream, beside `hci` rather than in it, so `hci` can
    /// handle the packet the framer holds without copying it out first (`HCIHost.receive`).
    public internal(set) var framer = H4Framer<framerOctets>()
    public var le: LEStack<App, links, attributes, values>

    public init(configuration: HostConfiguration, database: LEStack<App, links, attributes, values>.Database, app: App,
                maximumMTU: UInt16 = ATTMTU.defaultMaximum) {
        hci = HCIHostOf(configuration: configuration)
        le = LEStack(app: app, database: database, maximumMTU: maximumMTU)
    }

    public var app: App {
        get { le.app }
        _modify { yield &le.app }
    }

    /// Starts (or restarts) bring-up.
    public mutating func start<O: H4Output>(now: UInt64, output: inout O) {
        if !App.probesControllerLiveness && hci.configuration.livenessInterval != nil { Self.livenessWithoutProbes() }
        le.now = now
        if le.isReady || !le.connections.isEmpty { le.hostControllerDidFail(.noResponse(resets: 0)) }
        framer.reset()
        hci.start(now: now, output: &output)
    }

    /// Feeds bytes read from the controller. `inPlace` as `HCIHostOf.receive` says: a port whose reads
    /// are a few octets passes false.
    public mutating func receive<O: H4Output>(_ bytes: Span<UInt8>, now: UInt64, output: inout O, inPlace: Bool = true) {
        le.now = now
        hci.receive(bytes, framer: &framer, now: now, delegate: &le, output: &output, inPlace: inPlace)
        flush(now: now, output: &output)
    }

    /// Runs every timer that is due (call at `nextDeadline`).
    public mutating func tick<O: H4Output>(now: UInt64, output: inout O) {
        le.now = now
        if let d = hci.nextDeadline(for: LEStack<App, links, attributes, values>.self), now >= d {
            hci.tick(now: now, delegate: &le, output: &output)
        }
        le.tick(now: now)
        flush(now: now, output: &output)
    }

    /// The earliest timer of the HCI host and the LE stack. A `mutating get`, as `LEStack.nextDeadline`:
    /// it reads the stack in place rather than a copy of it.
    public var nextDeadline: UInt64? { mutating get {
        switch (hci.nextDeadline(for: LEStack<App, links, attributes, values>.self), le.nextDeadline) {
        case let (a?, b?): return min(a, b)
        case let (a?, nil): return a
        case let (nil, b?): return b
        case (nil, nil): return nil
        }
    } }

    /// A liveness interval for an application whose type leaves the probe out
    /// (`LEApplication.probesControllerLiveness`): the controller would never be asked.
    @inline(never)
    static func livenessWithoutProbes() -> Never {
        preconditionFailure("HostConfiguration.livenessInterval set for an application whose probesControllerLiveness is false")
    }

    /// Lets the caller act on the application and the stack from outside any callback (a CLI command,
    /// a firmware button), then sends what it queued.
    public mutating func perform<O: H4Output, R>(
        now: UInt64, output: inout O, _ body: (inout LEStack<App, links, attributes, values>) -> R
    ) -> R {
        le.now = now
        let result = body(&le)
        flush(now: now, output: &output)
        return result
    }

    /// Sends queued commands and as much ACL data as the controller has buffers for. The stack never
    /// leaves the wire idle while it holds both credits and data.
    // Not inlined: `receive`, `tick`, `perform` and `start` all end here; one copy serves them all.
    @inline(never)
    mutating func flush<O: H4Output>(now: UInt64, output: inout O) {
        guard hci.isReady else { return }
        hci.takeCommands(from: &le.control, now: now, output: &output)
        // Held ATT responses go first, and again once draining has freed queue slots, ahead of
        // whatever the application queues next.
        _ = le.sendHeldResponses()
        le.control.acl.drain(credits: &le.control.credits, to: &output)
        if le.sendHeldResponses() { le.control.acl.drain(credits: &le.control.credits, to: &output) }
    }
}

/// The stack with a framer for any controller traffic: a maximal event (1 + 2 + 255 octets) or an
/// ACL packet of 251 octets with its headers.
public typealias BluetoothStack<App: LEApplication, let links: Int, let attributes: Int, let values: Int> =
    BluetoothStackOf<App, links, attributes, values, 260>
