/// The LE 2M PHY on each link: asked for when it comes up, and what the controller reports applied.
extension LEStack {
    /// Asks the controller to move `handle` to the LE 2M PHY, 1M allowed (`LEPHYPreference.le1MOr2M`),
    /// when bring-up set 2M as the default preference and the controller has LE Set PHY. Both roles
    /// ask: a central that never starts the procedure (Bumble's host, many phones) would otherwise
    /// keep the link at 1M. When both ask at once, the link layer resolves the collision and the
    /// central's procedure wins (Core 5.4 Vol 6 Part B 5.3); the loser ends with an error status,
    /// counted in `failedPHYUpdates`, and the winner's update is reported as usual.
    mutating func requestPHY(handle: UInt16) {
        guard asks2MPHY, connections.update(handle: handle, { $0.phyRequests &+= 1 }) != nil else { return }
        control.send(HCILESetPHY(handle: handle), tag: .gap)
    }

    /// How many times one link is asked: the first request and two retries after collisions.
    static var phyRequestLimit: UInt8 { 3 }
    /// How long after a collision the request is sent again if no procedure completes first (ms):
    /// a few connection events at the intervals centrals use.
    static var phyRetryDelay: UInt64 { 500 }

    /// Applies LE PHY Update Complete (Core 5.4 Vol 4 Part E 7.7.65.12) to the link and tells the
    /// application; a failed procedure leaves the link's PHYs as they were.
    mutating func phyUpdated(_ u: HCILEPHYUpdateCompleteEvent) {
        guard u.status == .success else {
            counters.failedPHYUpdates &+= 1
            // Our procedure lost to another one of the link layer's (0x23 LL Procedure Collision,
            // 0x2A Different Transaction Collision, Core 5.4 Vol 1 Part F 2.35, 2.42): on Zephyr 2.5,
            // one of four links a peripheral asked for 2M ended so, against the central's connection
            // update, and stayed at 1M; asked again at once, it collided again, three times out of
            // three. So it is asked again when the link's other procedure has completed (LE
            // Connection Update Complete or Data Length Change, `retryPHYAfterProcedure`), or after
            // `phyRetryDelay` when no such event comes (a procedure that changed nothing reports none).
            if u.status.rawValue == 0x23 || u.status.rawValue == 0x2A {
                let at = now &+ Self.phyRetryDelay
                _ = connections.update(handle: u.handle) { link in
                    link.phyRetryPending = link.phy == .initial && link.phyRequests < Self.phyRequestLimit
                    link.phyRetryAt = at
                }
            }
            return
        }
        let phy = LinkPHY(tx: u.txPHY, rx: u.rxPHY)
        guard connections.update(handle: u.handle, { $0.phy = phy }) != nil else { return }
        counters.phyUpdates &+= 1
        counters.lastTxPHY = u.txPHY
        counters.lastRxPHY = u.rxPHY
        app.stackDidUpdatePHY(handle: u.handle, phy, now: now, control: &control)
    }

    /// Sends the LE Set PHY that lost a collision on `handle`, now that another procedure completed.
    mutating func retryPHYAfterProcedure(handle: UInt16) {
        guard connections[handle: handle]?.phyRetryPending == true else { return }
        _ = connections.update(handle: handle) { $0.phyRetryPending = false }
        requestPHY(handle: handle)
    }

    /// The PHYs in use on `handle` (LE 1M until a PHY Update).
    public func phy(handle: UInt16) -> LinkPHY? {
        connections[handle: handle]?.phy
    }
}
