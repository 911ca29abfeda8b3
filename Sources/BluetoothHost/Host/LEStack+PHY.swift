/// The LE 2M PHY on each link: asked for when it comes up, and what the controller reports applied.
///
/// One LL procedure at a time per link, started by one side. On Zephyr's controller (3.0.99 and 2.5,
/// legacy LL control procedures) a new link where both hosts had sent LE Set Data Length and LE Set
/// PHY at once, while another link between the same two devices was ending, went wrong in the rotation
/// test: on 3.0.99 the peripheral's PHY request lost the collision (0x23), as the Core has it (Vol 6
/// Part B 5.3), but its controller never applied the central's update at the instant: the central
/// moved to 2M, the peripheral stayed at 1M, and the link died of supervision timeout (0x08) two
/// seconds later; the peripheral's retry in between was answered Command Disallowed (0x0C), which
/// Zephyr's `ll_phy_req_send` returns while any PHY procedure, its own or the peer's, is open on the
/// link. On 2.5, with only the central asking for 2M next to both data length requests, the central's
/// PHY procedure never completed and no data crossed the link again (the central pauses its data
/// during the procedure) until we closed it 9 s later. So the central asks once its own Data Length
/// Update has ended (Zephyr's host likewise runs feature exchange, PHY and data length one after the
/// other, `conn_auto_initiate`), and the peripheral only when no update came from the central within
/// `peripheralPHYDelay`; a request never goes to a link being closed. Even so, with the central
/// alone asking, after its data length, 3.0.99's peripheral lost two links of fourteen at the
/// instant (the central reported 2M, the peripheral nothing, then 0x08): the switch itself is what
/// that controller gets wrong on a busy peripheral (advertising and scanning beside the link). So
/// the Herald applications, whose links carry one payload read, do not ask at all
/// (`LEApplication.asksForLE2MPHY`); bulk transfers (`herald bench-serve`, the test server) do.
extension LEStack {
    /// Called once per new link, after LE Set Data Length (if any) was sent.
    mutating func linkUpPHY(handle: UInt16, role: ConnectionRole) {
        // `App.asksForLE2MPHY` first: a constant, so an application that never asks carries none of this.
        guard App.asksForLE2MPHY, asks2MPHY else { return }
        if role == .central, linkDataLength == nil { return requestPHY(handle: handle) }
        let afterProcedure = role == .central
        let at = now &+ (afterProcedure ? Self.phyRetryDelay : Self.peripheralPHYDelay)
        _ = connections.update(handle: handle) { link in
            link.phyRequestPending = true
            link.phyRequestAfterProcedure = afterProcedure
            link.phyRequestAt = at
        }
    }

    /// Asks the controller to move `handle` to the LE 2M PHY, 1M allowed (`LEPHYPreference.le1MOr2M`),
    /// when bring-up set 2M as the default preference and the controller has LE Set PHY; not on a
    /// link we are closing, nor one already moved. A central that never starts the procedure (Bumble's
    /// host, many phones) would otherwise keep the link at 1M, so a peripheral asks too, later.
    // Out of line: the witness of this feature in an image's symbols (Firmware/features.py).
    @inline(never)
    mutating func requestPHY(handle: UInt16) {
        guard asks2MPHY, !control.credits.isDisconnecting(handle: handle) else { return }
        // Read and counted in place: `connections[handle:]` copies the whole link (its reassembly
        // buffer and ATT bearer) onto the stack, which a Cortex-M0 wearable has little of.
        let ask = connections.update(handle: handle) { link in
            guard !link.extra.closing, link.phy == .initial, link.phyRequests < Self.phyRequestLimit else { return false }
            link.phyRequests &+= 1
            return true
        }
        if ask == true { control.send(HCILESetPHY(handle: handle), tag: .gap) }
    }

    /// How many times one link is asked: the first request and two retries after collisions.
    static var phyRequestLimit: UInt8 { 3 }
    /// How long after a collision (or the central's LE Set Data Length) the request is sent if no
    /// procedure completes first (ms): a few connection events at the intervals centrals use.
    static var phyRetryDelay: UInt64 { 500 }
    /// How long a peripheral leaves the central to start the PHY Update (ms): our central asks as the
    /// link comes up and its procedure ends within about six connection events (the instant), plus a
    /// `phyRetryDelay` if it collided with another procedure.
    static var peripheralPHYDelay: UInt64 { 2_000 }

    /// Command Status for LE Set PHY. Unknown HCI Command: this controller is asked no more. Command
    /// Disallowed (0x0C): a PHY procedure is already open on the link (the peer's, Zephyr's controller
    /// answers so, see above); its LE PHY Update Complete reports the outcome, so nothing is failed and
    /// nothing is asked again.
    mutating func setPHYAnswered(_ status: HCIStatus) {
        if status == .unknownCommand { asks2MPHY = false }
    }

    /// LE Set PHY was never answered: Bumble's controller (0.0.236) lists it among its supported
    /// commands but has no handler and sends neither Command Status nor Complete, so each request held
    /// the one command in flight for the command timeout (2 s), every command behind it waiting: in
    /// `test_wearable` on Bumble, six stalls of 2 s per wearable, one just after the `send`. Asked no more.
    mutating func setPHYTimedOut() { asks2MPHY = false }

    /// Applies LE PHY Update Complete (Core 5.4 Vol 4 Part E 7.7.65.12) to the link and tells the
    /// application; a failed procedure leaves the link's PHYs as they were.
    // Out of line: the witness of this feature in an image's symbols (Firmware/features.py).
    @inline(never)
    mutating func phyUpdated(_ u: HCILEPHYUpdateCompleteEvent) {
        guard u.status == .success else {
            counters.failedPHYUpdates &+= 1
            // Our procedure lost to another one of the link layer's. 0x2A Different Transaction
            // Collision (Core 5.4 Vol 1 Part F 2.42): on Zephyr 2.5, one of four links a peripheral
            // asked for 2M ended so, against the central's connection update, and stayed at 1M; asked
            // again at once, it collided again, three times out of three. So it is asked again when
            // the link's other procedure has completed (LE Connection Update Complete or Data Length
            // Change, `retryPHYAfterProcedure`), or after `phyRetryDelay` when no such event comes (a
            // procedure that changed nothing reports none). 0x23 LL Procedure Collision (2.35) means
            // the peer's own PHY Update won: it sets the PHYs and is not asked for again.
            if App.asksForLE2MPHY, u.status.rawValue == 0x2A {
                let at = now &+ Self.phyRetryDelay
                _ = connections.update(handle: u.handle) { link in
                    link.phyRequestPending = link.phy == .initial && link.phyRequests < Self.phyRequestLimit
                    link.phyRequestAfterProcedure = true
                    link.phyRequestAt = at
                }
            }
            return
        }
        let phy = LinkPHY(tx: u.txPHY, rx: u.rxPHY)
        // The peer asked first: the peripheral's own request, if still waiting, is moot.
        let applied: Bool? = connections.update(handle: u.handle) { link in
            link.phy = phy
            link.phyRequestPending = false
            return true
        }
        guard applied != nil else { return }
        counters.phyUpdates &+= 1
        counters.lastTxPHY = u.txPHY
        counters.lastRxPHY = u.rxPHY
        app.stackDidUpdatePHY(handle: u.handle, phy, now: now, control: &control)
    }

    /// Sends the LE Set PHY that waited for the link's other procedure (the central's first, after
    /// its data length; one that lost a collision), now that a procedure completed on `handle`.
    mutating func retryPHYAfterProcedure(handle: UInt16) {
        guard App.asksForLE2MPHY, connections.update(handle: handle, { $0.phyRequestPending && $0.phyRequestAfterProcedure }) == true else { return }
        sendPendingPHYRequest(handle: handle)
    }

    /// Sends the request that waited on `handle` (its time came, or the procedure it waited for ended).
    mutating func sendPendingPHYRequest(handle: UInt16) {
        let pending = connections.update(handle: handle) { link in
            defer { link.phyRequestPending = false }
            return link.phyRequestPending
        }
        if pending == true { requestPHY(handle: handle) }
    }

    /// Sends now the LE Set PHY that waits on `handle` (the peripheral's, see `peripheralPHYDelay`),
    /// for an application that knows the link is about to carry a transfer; nothing if none waits.
    public mutating func requestPendingPHY(handle: UInt16) {
        guard App.asksForLE2MPHY else { return }
        sendPendingPHYRequest(handle: handle)
    }

    /// The PHYs in use on `handle` (LE 1M until a PHY Update).
    public func phy(handle: UInt16) -> LinkPHY? {
        connections[handle: handle]?.phy
    }
}
