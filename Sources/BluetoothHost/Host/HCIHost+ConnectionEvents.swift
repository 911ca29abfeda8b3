/// The events about links, and LE Meta's advertising reports: parsed here, once, and handed to the
/// `HostDelegate` typed, one method per kind (Core 5.4 Vol 4 Part E 7.7.5, 7.7.19, 7.7.65). No layer
/// above parses an event again. An event of a kind handed on typed whose parameters do not have its
/// layout is dropped, counted and named in `drops` (`HCIInputDrops`), and so is an LE Meta event
/// without a subevent and each advertising report that does not parse.
///
/// One method per kind rather than one enum of the kinds: on firmware the enum's construction and
/// the delegate's second switch over it cost 0.3-0.5 KB of flash (`Tools/embedded-check --report`).
extension HCIHostOf {
    // Out of line, as `LEStack`'s handling of these events was: inlined into `handlePacket`, the
    // beacon image's grew by more than the code it took in.
    @inline(never)
    mutating func handleConnectionEvent<D: HostDelegate>(_ event: borrowing HCIEventPacket, delegate: inout D) {
        switch event.code {
        case HCIEventCode.disconnectionComplete:
            do throws(DecodeError) {
                delegate.hostDidReceive(disconnectionComplete: try HCIDisconnectionCompleteEvent(parsing: event.parameters))
            } catch {
                drop(D.self, .linkEvent, eventCode: event.code, reason: error)
            }
        case HCIEventCode.numberOfCompletedPackets:
            do throws(DecodeError) {
                let e = try HCINumberOfCompletedPacketsEvent(parsing: event.parameters)
                delegate.hostDidReceive(completedPackets: e)
            } catch {
                drop(D.self, .linkEvent, eventCode: event.code, reason: error)
            }
        default:
            handleLEMeta(event, delegate: &delegate)
        }
    }

    /// Advertising reports go to the delegate one by one, the subevents about links parsed, others
    /// raw.
    private mutating func handleLEMeta<D: HostDelegate>(_ event: borrowing HCIEventPacket, delegate: inout D) {
        guard event.parameters.count > 0 else {
            return drop(D.self, .leMetaWithoutSubevent, eventCode: event.code,
                                reason: .truncated(needed: 1, available: 0))
        }
        let meta = HCILEMetaEvent(checked: event.parameters)
        let p = meta.parameters
        do throws(DecodeError) {
            switch meta.subevent {
            case HCILESubeventCode.connectionComplete, HCILESubeventCode.enhancedConnectionCompleteV1,
                 HCILESubeventCode.enhancedConnectionCompleteV2:
                var c = try HCILEConnectionCompleteEvent(anyConnectionComplete: meta)
                // Only a host's own LE Create Connection makes it central (Core 5.4 Vol 6 Part B 4.5,
                // Vol 4 Part E 7.8.12): for a delegate that never initiates, every link is one a
                // central opened to us, and the role is known by type, so the layers above test no
                // central case (`HostDelegate.initiatesConnections`).
                if !D.initiatesConnections { c.role = .peripheral }
                // A failure, or a link in which we are central, ends the controller's initiating.
                if D.initiatesConnections, c.status != .success || c.role == .central { commands.initiating = false }
                delegate.hostDidReceive(connectionComplete: c)
            case HCILESubeventCode.connectionUpdateComplete:
                guard D.receivesConnectionUpdates else { return }
                delegate.hostDidReceive(connectionUpdateComplete: try HCILEConnectionUpdateCompleteEvent(parsing: p))
            case HCILESubeventCode.remoteConnectionParameterRequest:
                delegate.hostDidReceive(remoteConnectionParameterRequest: try HCILERemoteConnectionParameterRequestEvent(parsing: p))
            case HCILESubeventCode.dataLengthChange:
                guard D.receivesDataLengthChanges else { return }
                delegate.hostDidReceive(dataLengthChange: try HCILEDataLengthChangeEvent(parsing: p))
            case HCILESubeventCode.phyUpdateComplete:
                guard D.receivesPHYUpdates else { return }
                delegate.hostDidReceive(phyUpdateComplete: try HCILEPHYUpdateCompleteEvent(parsing: p))
            case HCILEAdvertisingReportEvent.subevent, HCILEExtendedAdvertisingReportEvent.subevent:
                guard D.receivesAdvertisingReports else { return }
                deliverReports(meta, delegate: &delegate)
            default:
                delegate.hostDidReceive(event: event)
            }
        } catch {
            drop(D.self, .linkEvent, eventCode: event.code, subevent: meta.subevent, reason: error)
        }
    }

    /// Each report that parses goes to the delegate; each that does not is dropped and counted, and
    /// the reports after it still arrive where its lengths locate them (`HCILEAdvertisingReportEvent`).
    private mutating func deliverReports<D: HostDelegate>(_ meta: borrowing HCILEMetaEvent, delegate: inout D) {
        do throws(DecodeError) {
            if meta.subevent == HCILEAdvertisingReportEvent.subevent {
                var reports = try HCILEAdvertisingReportEvent(parsing: meta.parameters)
                while !reports.isFinished {
                    do throws(DecodeError) {
                        if let report = try reports.next() { delegate.hostDidReceive(advertisingReport: report) }
                    } catch {
                        drop(D.self, .advertisingReport, eventCode: HCIEventCode.leMeta, subevent: meta.subevent, reason: error)
                    }
                }
            } else {
                var reports = try HCILEExtendedAdvertisingReportEvent(parsing: meta.parameters)
                while !reports.isFinished {
                    do throws(DecodeError) {
                        if let report = try reports.next() { delegate.hostDidReceive(advertisingReport: report) }
                    } catch {
                        drop(D.self, .advertisingReport, eventCode: HCIEventCode.leMeta, subevent: meta.subevent, reason: error)
                    }
                }
            }
        } catch {
            // Num_Reports 0, or no Num_Reports at all.
            drop(D.self, .advertisingReport, eventCode: HCIEventCode.leMeta, subevent: meta.subevent, reason: error)
        }
    }
}
