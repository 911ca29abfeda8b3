import BluetoothHost

extension StackSession {
    /// Ends every link, and the connection attempt under way if any, before the program lets go of
    /// the controller, and waits up to `grace` ms for the controller to confirm each (Disconnection
    /// Complete, Core 5.4 Vol 4 Part E 7.7.5; LE Connection Complete after LE Create Connection Cancel,
    /// 7.8.13).
    ///
    /// Why: closing the port does not reset a dongle. A link left open stays up in the controller,
    /// with nobody to serve it, until the next bring-up's Reset; its peer finds out only when that
    /// happens or when its supervision timeout runs out. Remote User Terminated (0x13, Vol 4 Part E
    /// 7.1.6) tells the peer at once. An attempt left pending would connect, unattended, whenever the
    /// peer advertises. Call it after the application has stopped advertising and scanning, so
    /// nothing reconnects meanwhile; calling it again costs nothing. Returns how many links were still
    /// open at the end (0 unless the controller did not answer in time); a controller that is not up
    /// is left alone.
    ///
    /// A link that comes up while it waits (its LE Connection Complete crossed the cancel, or the
    /// advertising disable) is ended at the next turn, not after the deadline. The grace is 5 s: Zephyr's
    /// controllers (2.5 and 3.0.99) took up to 3.9 s to end a link whose central had gone quiet
    /// (Disconnection Complete 0x22 or 0x08, 1.7–3.9 s after our Disconnect, in four silent-siege
    /// captures); with 2 s the wearable exited with one still open (docs/crowd-issue-39.md). A link
    /// that answers ends within a few connection events, and the wait ends with it.
    @discardableResult
    public func releaseLinks(grace: UInt64 = 5_000) -> Int {
        guard stack.hci.isReady else { return stack.le.connections.count }
        let deadline = MonotonicClock.now() + grace
        // Both calls send once per link and attempt (`StackControl.disconnect`, `cancelAttempt`), so
        // asking again each turn only reaches what is new.
        func endWhatIsOpen(_ session: StackSession) throws(TransportError) -> Bool {
            if session.stack.le.connections.isEmpty, session.stack.le.control.connecting == nil { return true }
            try session.perform { le in
                le.control.cancelConnecting(now: MonotonicClock.now())
                for position in 0..<links {
                    if let handle = le.connections.handle(at: position) { le.control.disconnect(handle: handle) }
                }
            }
            return false
        }
        do {
            guard try !endWhatIsOpen(self) else { return 0 }
            try run(deadline: deadline) { s in try endWhatIsOpen(s) ? .stop : .keepRunning }
        } catch {
            // A port that fails now: what the controller has not confirmed stays counted.
        }
        return stack.le.connections.count
    }
}
