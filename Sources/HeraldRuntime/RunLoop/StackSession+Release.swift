import BluetoothHost

extension StackSession {
    /// Ends every link before the program lets go of the controller, and waits up to `grace` ms for
    /// the controller to confirm each (Disconnection Complete, Core 5.4 Vol 4 Part E 7.7.5).
    ///
    /// Why: closing the port does not reset a dongle. A link left open stays up in the controller,
    /// with nobody to serve it, until the next bring-up's Reset; its peer finds out only when that
    /// happens or when its supervision timeout runs out. Remote User Terminated (0x13, Vol 4 Part E
    /// 7.1.6) tells the peer at once. Call it after the application has stopped advertising and
    /// scanning, so nothing reconnects meanwhile. Returns how many links were still open at the end
    /// (0 unless the controller did not answer in time); a controller that is not up is left alone.
    @discardableResult
    public func releaseLinks(grace: UInt64 = 2_000) -> Int {
        guard stack.hci.isReady else { return stack.le.connections.count }
        do throws(TransportError) {
            try perform { le in
                for position in 0..<links {
                    if let handle = le.connections.handle(at: position) { le.control.disconnect(handle: handle) }
                }
            }
        } catch {
            return stack.le.connections.count
        }
        let deadline = MonotonicClock.now() + grace
        try? run(deadline: deadline) { s in s.stack.le.connections.isEmpty ? .stop : .keepRunning }
        return stack.le.connections.count
    }
}
