/// Whether a packet for a handle may be sent now.
public enum ACLCreditGrant: Sendable, Equatable {
    /// A credit was taken: send the packet.
    case granted
    /// Every controller buffer is in use: wait for Number Of Completed Packets.
    case noCredits
    /// The handle is not open (never connected or already disconnected): do not send.
    case unknownHandle
}

/// What the stack asks of its ACL credit table (`StackControlBuffers.Credits`): `ACLCredits` of
/// any number of links is one. An application's table tracks as many handles as it holds links
/// (`LEStack` refuses a link it cannot track), so its size is the application's choice.
public protocol ACLCreditLedger {
    init()
    var total: Int { get }
    var maxDataLength: Int { get }
    var inFlight: Int { get }
    var available: Int { get }
    mutating func configure(leDataLength: UInt16, leTotalPackets: UInt8, sharedDataLength: UInt16, sharedTotalPackets: UInt16)
    @discardableResult
    mutating func open(handle: UInt16) -> Bool
    func isOpen(handle: UInt16) -> Bool
    func inFlight(handle: UInt16) -> Int
    mutating func consume(handle: UInt16) -> ACLCreditGrant
    @discardableResult
    mutating func apply(_ event: borrowing HCINumberOfCompletedPacketsEvent) -> Int
    @discardableResult
    mutating func close(handle: UInt16) -> Int
    func isDisconnecting(handle: UInt16) -> Bool
    mutating func markDisconnecting(handle: UInt16)
}

/// Host → controller ACL flow control (Core 5.4 Vol 4 Part E 4.1.1).
///
/// The controller has `total` ACL buffers; the host takes one per packet sent and gets it back through
/// Number Of Completed Packets (7.7.19), or implicitly for every packet still in flight on a handle
/// when Disconnection Complete (7.7.5) arrives, since the controller flushes them. Credits are tracked
/// per handle so that the implicit return is exact. `links` is the number of handles tracked at once
/// (match the connection table).
///
/// Robustness against a confused controller: completions for handles that are not open are ignored
/// and counted as `bogusReturns`; returns beyond what a handle has in flight are clamped and counted as
/// `overReturns`. `available` therefore never exceeds `total`, so a leak check is
/// `inFlight == sum of per-handle counts` and `available + inFlight == total`.
public struct ACLCredits<let links: Int>: ACLCreditLedger {
    /// 8 octets, with no tail padding: an `InlineArray` element whose size is not its stride is
    /// addressed as if 1-aligned (Swift 6.3), each field an octet at a time on a Cortex-M0
    /// (`Connection.phyRequestAt` says more).
    struct Entry {
        var handle: UInt16 = 0
        var isOpen = false
        /// Disconnect (Core 5.4 Vol 4 Part E 7.1.6) was queued for this handle (see `StackControl.disconnect`).
        var disconnecting = false
        var inFlight = 0
    }

    var entries: InlineArray<links, Entry>

    /// Controller ACL buffers usable for LE traffic.
    public private(set) var total = 0
    /// Largest ACL data length the controller accepts (what `ACLFragmenter` must use).
    public private(set) var maxDataLength = 0
    /// Packets sent and not yet reported complete, across all handles.
    public private(set) var inFlight = 0
    /// Completed-packet counts reported for handles that are not open.
    public private(set) var bogusReturns = 0
    /// Completed-packet counts beyond what an open handle had in flight.
    public private(set) var overReturns = 0
    /// Credits returned implicitly by disconnections.
    public private(set) var releasedOnDisconnect = 0

    public init() { entries = InlineArray(repeating: Entry()) }

    /// Credits that may be used now.
    // Counts of the controller's buffers (at most 65,535) in this file's arithmetic: no sum or
    // difference of two can overflow, unchecked.
    public var available: Int { max(0, total &- inFlight) }

    /// Sets the buffer pool from LE Read Buffer Size (Core 5.4 Vol 4 Part E 7.8.2). If the controller
    /// reports zero for either LE value, LE shares the BR/EDR buffers, so the values from Read Buffer
    /// Size (7.4.5) apply instead.
    public mutating func configure(leDataLength: UInt16, leTotalPackets: UInt8,
                                   sharedDataLength: UInt16 = 0, sharedTotalPackets: UInt16 = 0) {
        if leDataLength != 0 && leTotalPackets != 0 {
            maxDataLength = Int(leDataLength)
            total = Int(leTotalPackets)
        } else {
            maxDataLength = Int(sharedDataLength)
            total = Int(sharedTotalPackets)
        }
    }

    @inline(__always)
    func index(of handle: UInt16) -> Int? {
        // Inlined so mutating callers do not copy the whole table to pass `self`.
        for i in 0..<links where entries[i].isOpen && entries[i].handle == handle { return i }
        return nil
    }

    /// Starts tracking a handle (on LE Connection Complete). False when already open or no room;
    /// the caller must then disconnect the link, since its traffic could not be accounted for.
    @discardableResult
    public mutating func open(handle: UInt16) -> Bool {
        guard index(of: handle) == nil else { return false }
        for i in 0..<links where !entries[i].isOpen {
            entries[i] = Entry(handle: handle, isOpen: true, inFlight: 0)
            return true
        }
        return false
    }

    public func isOpen(handle: UInt16) -> Bool { index(of: handle) != nil }

    /// Packets in flight on one handle (0 when not open).
    public func inFlight(handle: UInt16) -> Int {
        guard let i = index(of: handle) else { return 0 }
        return entries[i].inFlight
    }

    /// Takes one credit for a packet about to be sent on `handle`.
    public mutating func consume(handle: UInt16) -> ACLCreditGrant {
        guard let i = index(of: handle) else { return .unknownHandle }
        guard available > 0 else { return .noCredits }
        // Below the controller's buffer count (at most 65,535), so neither can overflow.
        entries[i].inFlight &+= 1
        inFlight &+= 1
        return .granted
    }

    /// Applies one (handle, count) pair of a Number Of Completed Packets event (Core 5.4 Vol 4 Part E
    /// 7.7.19). Returns the credits actually restored.
    @discardableResult
    public mutating func completed(handle: UInt16, count: UInt16) -> Int {
        let n = Int(count)
        guard let i = index(of: handle) else {
            bogusReturns &+= n
            return 0
        }
        // At most what the handle, and so the whole table, had in flight.
        let restored = min(n, entries[i].inFlight)
        overReturns &+= n &- restored
        entries[i].inFlight &-= restored
        inFlight &-= restored
        return restored
    }

    /// Applies a whole Number Of Completed Packets event (Core 5.4 Vol 4 Part E 7.7.19), which
    /// `HCIHost` parsed and length-checked before any credit is restored. Returns the credits restored.
    @discardableResult
    public mutating func apply(_ event: borrowing HCINumberOfCompletedPacketsEvent) -> Int {
        var restored = 0
        event.forEach { handle, count in restored &+= completed(handle: handle, count: count) }
        return restored
    }

    /// Stops tracking a handle on Disconnection Complete: the controller has flushed its packets, so
    /// all of them come back (Core 5.4 Vol 4 Part E 4.1.1, 7.7.5). Returns the number released.
    @discardableResult
    public mutating func close(handle: UInt16) -> Int {
        guard let i = index(of: handle) else { return 0 }
        let released = entries[i].inFlight
        entries[i] = Entry()
        inFlight &-= released
        releasedOnDisconnect &+= released
        return released
    }

    /// Whether Disconnect was queued for an open `handle` (false for one not open).
    public func isDisconnecting(handle: UInt16) -> Bool {
        guard let i = index(of: handle) else { return false }
        return entries[i].disconnecting
    }

    /// Notes that Disconnect was queued for `handle` (nothing for a handle not open); cleared when the
    /// handle closes and is opened again.
    public mutating func markDisconnecting(handle: UInt16) {
        guard let i = index(of: handle) else { return }
        entries[i].disconnecting = true
    }

    /// Number of handles tracked.
    public var openHandles: Int {
        var n = 0
        for i in 0..<links where entries[i].isOpen { n += 1 }
        return n
    }

    /// Sum of the per-handle in-flight counts; equals `inFlight` unless there is a bug.
    public var inFlightPerHandleSum: Int {
        var n = 0
        for i in 0..<links where entries[i].isOpen { n += entries[i].inFlight }
        return n
    }
}
