import BluetoothHost

/// The client behind `herald bench-write`, for Tools/bench-uart's other direction: connects to a
/// peripheral, exchanges the MTU, then sends `count` Write Commands (Core 5.4 Vol 3 Part F 3.4.5.3)
/// of `size` octets (ATT_MTU - 3 when 0) to `attribute` as fast as the ACL queue takes them. The
/// server times their arrival; the link's byte rate is what limits them.
///
/// With `waitsForPHY` the first write waits for the link's PHY Update to end (or `phyWait` ms): the
/// figure is the rate of the PHY asked for. Writing at once measured the change too: on Zephyr
/// 3.0.99's radio at 7.5 ms, the first 130 ms of writes went at 1M and the controller completed no
/// packet for another 98–115 ms after LE PHY Update Complete, 87.5–93.6 % of the line's ideal
/// against 97.9 % at 15 ms (`docs/performance-issue-25.md`).
public struct BenchWriter: LEApplication {
    public enum State: Equatable, Sendable {
        case connecting
        case exchangingMTU
        /// The MTU is agreed; the PHY Update the stack asked for has not ended yet.
        case awaitingPHY(until: UInt64)
        case writing
        /// Every Write Command was queued; the link stays up until the queue has drained.
        case sent
        case failed(String)
    }

    public let peer: DeviceAddress
    public let attribute: UInt16
    public let count: Int
    public let size: Int
    /// The connection interval to connect with (1.25 ms units, min = max).
    public var interval: UInt16 = 6
    public private(set) var state = State.connecting
    public private(set) var handle: UInt16?
    public private(set) var mtu = 23
    public private(set) var written = 0
    /// Wait for the link's PHY Update before writing (`herald bench-write --phy 2m`).
    public var waitsForPHY = false
    /// How long to wait for it (a controller or peer without LE 2M may never end one).
    public var phyWait: UInt64 = 2_000
    public private(set) var phy: LinkPHY?

    public init(peer: DeviceAddress, attribute: UInt16, count: Int, size: Int) {
        self.peer = peer
        self.attribute = attribute
        self.count = count
        self.size = size
    }

    public mutating func stackDidBecomeReady(_ info: ControllerInfo, now: UInt64, control: inout StackControl) {
        control.connect(to: peer, now: now, timeout: 15_000, intervalMin: interval, intervalMax: interval)
    }

    public mutating func stackDidFailToConnect(to peer: DeviceAddress, status: HCIStatus, now: UInt64, control: inout StackControl) {
        state = .failed("no connection (status 0x\(String(status.rawValue, radix: 16)))")
    }

    public mutating func stackDidConnect(_ link: ConnectionSummary, now: UInt64, control: inout StackControl) {
        guard link.role == .central, handle == nil else { return }
        handle = link.handle
        state = .exchangingMTU
        var pdu = FixedBytes<3>()
        ATTExchangeMTURequest(clientRxMTU: 247).write(to: &pdu)
        _ = control.sendATT(handle: link.handle, pdu: pdu.span)
    }

    public mutating func stackDidDisconnect(handle: UInt16, reason: HCIStatus, now: UInt64, control: inout StackControl) {
        guard handle == self.handle else { return }
        self.handle = nil
        if state != .sent { state = .failed("link lost (reason 0x\(String(reason.rawValue, radix: 16)))") }
    }

    public mutating func stackDidReceiveATT(handle: UInt16, pdu: Span<UInt8>, now: UInt64, control: inout StackControl) {
        guard handle == self.handle, state == .exchangingMTU, pdu.count == 3, pdu[0] == ATTOpcode.exchangeMTUResponse.rawValue else { return }
        // The smaller of the two (Part F 3.4.2.2); a server asking for less than 23 still gets 23.
        mtu = max(23, min(247, Int(pdu[1]) | Int(pdu[2]) << 8))
        state = waitsForPHY && phy == nil ? .awaitingPHY(until: now &+ phyWait) : .writing
    }

    public mutating func stackDidUpdatePHY(handle: UInt16, _ phy: LinkPHY, now: UInt64, control: inout StackControl) {
        guard handle == self.handle else { return }
        self.phy = phy
        if case .awaitingPHY = state { state = .writing }
    }

    public var applicationDeadline: UInt64? {
        if case .awaitingPHY(let until) = state { return until }
        return nil
    }

    public mutating func stackTimerFired(now: UInt64, control: inout StackControl) {
        if case .awaitingPHY(let until) = state, now >= until { state = .writing }
    }

    /// Queues Write Commands while the ACL queue has room: call after every run-loop turn.
    public static func pump<let links: Int, let attributes: Int, let values: Int>(
        _ le: inout LEStack<BenchWriter, links, attributes, values>) {
        guard le.app.state == .writing, let handle = le.app.handle else { return }
        let length = le.app.size > 0 ? min(le.app.size, le.app.mtu - 3) : le.app.mtu - 3
        var pdu = FixedBytes<247>()
        while le.app.written < le.app.count {
            pdu.removeAll()
            let n = UInt32(truncatingIfNeeded: le.app.written)
            pdu.append(ATTOpcode.writeCommand.rawValue)
            pdu.append(u16: le.app.attribute)
            for b in 0..<length { pdu.append(b < 4 ? UInt8(truncatingIfNeeded: n >> (8 * UInt32(b))) : 0) }
            guard le.control.sendATT(handle: handle, pdu: pdu.span) else { break }
            le.app.written += 1
        }
        if le.app.written == le.app.count { le.app.state = .sent }
    }
}
