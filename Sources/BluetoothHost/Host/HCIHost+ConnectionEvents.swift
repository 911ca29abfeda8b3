/// The events about links, and LE Meta's advertising reports: parsed here, once, and handed to the
/// `HostDelegate` typed, one method per kind (Core 5.4 Vol 4 Part E 7.7.5, 7.7.19, 7.7.65). No layer
/// above parses an event again. An event of a kind handed on typed whose parameters do not have its
/// layout is dropped and reported once (`hostDidDropMalformedEvent`).
///
/// One method per kind rather than one enum of the kinds: on firmware the enum's construction and
/// the delegate's second switch over it cost 0.3-0.5 KB of flash (`Tools/embedded-check --report`).
extension HCIHost {
    // Out of line, as `LEStack`'s handling of these events was: inlined into `handlePacket`, the
    // beacon image's grew by more than the code it took in.
    @inline(never)
    mutating func handleConnectionEvent<D: HostDelegate>(_ event: borrowing HCIEventPacket, delegate: inout D) {
        switch event.code {
        case HCIEventCode.disconnectionComplete:
            guard let e = try? HCIDisconnectionCompleteEvent(parsing: event.parameters) else { return delegate.hostDidDropMalformedEvent() }
            delegate.hostDidReceive(disconnectionComplete: e)
        case HCIEventCode.numberOfCompletedPackets:
            guard let e = try? HCINumberOfCompletedPacketsEvent(parsing: event.parameters) else { return delegate.hostDidDropMalformedEvent() }
            delegate.hostDidReceive(completedPackets: e)
        default:
            handleLEMeta(event, delegate: &delegate)
        }
    }

    /// Advertising reports go to the delegate one by one, the subevents about links parsed, others
    /// raw. An LE Meta event without even a subevent code is dropped.
    private mutating func handleLEMeta<D: HostDelegate>(_ event: borrowing HCIEventPacket, delegate: inout D) {
        guard let meta = try? HCILEMetaEvent(parsing: event.parameters) else { return }
        let p = meta.parameters
        switch meta.subevent {
        case HCILESubeventCode.connectionComplete, HCILESubeventCode.enhancedConnectionCompleteV1,
             HCILESubeventCode.enhancedConnectionCompleteV2:
            guard let c = try? HCILEConnectionCompleteEvent(anyConnectionComplete: meta) else { return delegate.hostDidDropMalformedEvent() }
            // A failure, or a link in which we are central, ends the controller's initiating.
            if D.initiatesConnections, c.status != .success || c.role == .central { commands.initiating = false }
            delegate.hostDidReceive(connectionComplete: c)
        case HCILESubeventCode.connectionUpdateComplete:
            guard let u = try? HCILEConnectionUpdateCompleteEvent(parsing: p) else { return delegate.hostDidDropMalformedEvent() }
            delegate.hostDidReceive(connectionUpdateComplete: u)
        case HCILESubeventCode.remoteConnectionParameterRequest:
            guard let r = try? HCILERemoteConnectionParameterRequestEvent(parsing: p) else { return delegate.hostDidDropMalformedEvent() }
            delegate.hostDidReceive(remoteConnectionParameterRequest: r)
        case HCILESubeventCode.dataLengthChange:
            guard let d = try? HCILEDataLengthChangeEvent(parsing: p) else { return delegate.hostDidDropMalformedEvent() }
            delegate.hostDidReceive(dataLengthChange: d)
        case HCILESubeventCode.phyUpdateComplete:
            guard let u = try? HCILEPHYUpdateCompleteEvent(parsing: p) else { return delegate.hostDidDropMalformedEvent() }
            delegate.hostDidReceive(phyUpdateComplete: u)
        case HCILEAdvertisingReportEvent.subevent:
            guard D.receivesAdvertisingReports, var reports = try? HCILEAdvertisingReportEvent(meta) else { return }
            while let report = try? reports.next() { delegate.hostDidReceive(advertisingReport: report) }
        case HCILEExtendedAdvertisingReportEvent.subevent:
            guard D.receivesAdvertisingReports, var reports = try? HCILEExtendedAdvertisingReportEvent(meta) else { return }
            while let report = try? reports.next() { delegate.hostDidReceive(advertisingReport: report) }
        default:
            delegate.hostDidReceive(event: event)
        }
    }
}
