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
    @discardableResult
    public func releaseLinks(grace: UInt64 = 2_000) -> Int {
        guard stack.hci.isReady else { return stack.le.connections.count }
        let deadline = MonotonicClock.now() + grace
        // Twice: a link whose LE Connection Complete crossed our cancel comes up, and is ended, then.
        for _ in 0..<2 {
            if stack.le.connections.isEmpty, stack.le.control.connecting == nil { break }
            do throws(TransportError) {
                try perform { le in
                    le.control.cancelConnecting(now: MonotonicClock.now())
                    for position in 0..<links {
                        if let handle = le.connections.handle(at: position) { le.control.disconnect(handle: handle) }
                    }
                }
            } catch {
                return stack.le.connections.count
            }
            try? run(deadline: deadline) { s in
                s.stack.le.connections.isEmpty && s.stack.le.control.connecting == nil ? .stop : .keepRunning
            }
        }
        return stack.le.connections.count
    }
}
