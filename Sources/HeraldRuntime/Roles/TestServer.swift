import BluetoothHost
import Foundation

/// The application behind `herald serve`: advertises connectably, serves `TestProfile`, and records
/// what clients do as `TestServerEvent`s for the command to print.
///
/// Notifications and indications go out from `pump`, which the run loop calls between turns: the
/// stack's `notify`/`indicate` live on `LEStack`, outside any application callback.
public struct TestServer: LEApplication {
    public struct Handles: Equatable, Sendable {
        public var service: UInt16 = 0
        public var longValue: UInt16 = 0
        public var writable: UInt16 = 0
        public var notifying: UInt16 = 0
        public var indicating: UInt16 = 0
        public var battery: UInt16 = 0
    }

    /// One link's state, in whichever entry of `links` was free when it connected, found by handle.
    struct LinkState {
        var handle: UInt16?
        var mtu = 23
        /// Whether this link's central was asked for a short interval (see `pump`).
        var askedForInterval = false
        var notifying = false
        var indicating = false
        var notified = 0
        var indicated = 0
        var confirmed = 0
        /// A write being assembled from one Write or the parts of an Execute Write: parts arrive as
        /// consecutive offsets within one turn and are reported as one value when the turn ends.
        var write: [UInt8]?
        var writeParts = 0
        /// The last value this link wrote to `writable`, returned by its reads: each client sees its
        /// own writes even when several write at once.
        var lastWrite: [UInt8] = []
    }

    public let name: String
    public let count: Int
    public let handles: Handles
    public private(set) var events: [TestServerEvent] = []
    var links: [LinkState]
    let started: UInt64
    var now: UInt64 = 0
    /// Leave this many ACL queue octets free so requests on every link can still be answered (two
    /// full MTU-247 responses with their record headers).
    static let queueHeadroom = 2 * 255

    init(name: String, count: Int, handles: Handles, links: Int, now: UInt64) {
        self.name = name
        self.count = count
        self.handles = handles
        self.links = Array(repeating: LinkState(), count: links)
        self.started = now
        self.now = now
    }

    /// Builds the stack: database with `TestProfile`, and the application serving it.
    public static func makeStack(name: String, count: Int, configuration: HostConfiguration,
                                 now: UInt64) throws -> TestServerStack {
        let (db, h) = try makeDatabase(name: name)
        let app = TestServer(name: name, count: count, handles: h, links: TestServerDatabase.linkCount, now: now)
        return TestServerStack(configuration: configuration, database: db, app: app)
    }

    /// The GAP and GATT services, `TestProfile`'s service and Battery, and where their values are.
    public static func makeDatabase(name: String) throws -> (TestServerDatabase, Handles) {
        let nameBytes = Array(name.utf8)
        var db = try TestServerDatabase(deviceName: nameBytes.span)
        var h = Handles()
        h.service = try db.addPrimaryService(TestProfile.service)
        let long = (0..<TestProfile.longValueLength).map { UInt8($0) }
        h.longValue = try db.addCharacteristic(TestProfile.longValue, properties: .read, permissions: .read,
                                               value: .stored(long.span, maxLength: long.count)).value
        let description = Array(TestProfile.longValueDescription.utf8)
        try db.addDescriptor(BluetoothUUID(uuid16: GATTAttributeType.characteristicUserDescription),
                             permissions: .read, value: .stored(description.span, maxLength: description.count))
        h.writable = try db.addCharacteristic(
            TestProfile.writable, properties: GATTCharacteristicProperties.read | .write | .writeWithoutResponse,
            permissions: .readWrite, value: .dynamic(id: TestProfile.writableID)).value
        let zero = [UInt8](repeating: 0, count: 4)
        h.notifying = try db.addCharacteristic(TestProfile.notifying, properties: GATTCharacteristicProperties.read | .notify,
                                               permissions: .read, value: .stored(zero.span, maxLength: 4)).value
        h.indicating = try db.addCharacteristic(TestProfile.indicating, properties: GATTCharacteristicProperties.read | .indicate,
                                                permissions: .read, value: .stored(zero.span, maxLength: 4)).value
        try db.addPrimaryService(TestProfile.batteryService)
        let level = [TestProfile.batteryPercent]
        h.battery = try db.addCharacteristic(TestProfile.batteryLevel, properties: .read, permissions: .read,
                                             value: .stored(level.span, maxLength: 1)).value
        return (db, h)
    }

    /// Connectable undirected advertising: flags, Battery and the name in the advert, our 128-bit
    /// service in the scan response (18 octets of 31 leave no room for both in one PDU).
    func advertisingIntent() -> AdvertisingIntent {
        var adv = AdvertisingDataBuilder<31>()
        try? adv.addFlags(ADFlags.generalDiscoverableLEOnly)
        try? adv.addServiceUUID(TestProfile.batteryService)
        try? adv.addLocalNameFitting(Array(name.utf8).span)
        var scan = AdvertisingDataBuilder<31>()
        try? scan.addServiceUUID(TestProfile.service)
        // 100 ms (160 x 0.625 ms): quick to find, and Bumble's virtual radio does not care.
        let parameters = HCILESetAdvertisingParameters(intervalMin: 0x00A0, intervalMax: 0x00A0)
        return AdvertisingIntent(parameters: parameters, data: adv.build(), scanResponse: scan.build(),
                                 restartAfterConnection: true)
    }

    mutating func record(_ e: TestServerEvent) { events.append(e) }

    func event(_ name: String) -> TestServerEvent { TestServerEvent(name, time: now &- started) }

    /// Hands over the events recorded since the last call, with writes of the turn now complete.
    public mutating func takeEvents() -> [TestServerEvent] {
        for i in links.indices { finishWrite(i) }
        defer { events.removeAll() }
        return events
    }

    mutating func finishWrite(_ i: Int) {
        guard let value = links[i].write else { return }
        var e = event("write")
        e.handle = links[i].handle
        e.attribute = handles.writable
        e.value = value.map { String(format: "%02x", $0) }.joined()
        e.length = value.count
        e.parts = links[i].writeParts
        record(e)
        links[i].lastWrite = value
        links[i].write = nil
        links[i].writeParts = 0
    }

    // MARK: LEApplication

    public mutating func stackDidBecomeReady(_ info: ControllerInfo, now: UInt64, control: inout StackControl) {
        self.now = now
        control.startAdvertising(advertisingIntent())
        var e = event("advertising")
        e.address = info.address.description
        record(e)
    }

    public mutating func stackDidConnect(_ link: ConnectionSummary, now: UInt64, control: inout StackControl) {
        self.now = now
        var e = event("connected")
        e.handle = link.handle
        e.peer = link.peer.address.description
        e.peerType = link.peer.type.name
        if let i = links.firstIndex(where: { $0.handle == nil }) {
            links[i] = LinkState(handle: link.handle)
            }
        record(e)
    }

    public mutating func stackDidChangeDataLength(handle: UInt16, _ length: LinkDataLength, now: UInt64, control: inout StackControl) {
        self.now = now
        var e = event("data-length")
        e.handle = handle
        e.txOctets = Int(length.maxTxOctets)
        e.rxOctets = Int(length.maxRxOctets)
        record(e)
    }

    public mutating func stackDidUpdatePHY(handle: UInt16, _ phy: LinkPHY, now: UInt64, control: inout StackControl) {
        self.now = now
        var e = event("phy")
        e.handle = handle
        e.txPHY = "\(phy.tx.name)"
        e.rxPHY = "\(phy.rx.name)"
        record(e)
    }

    public mutating func stackDidDisconnect(handle: UInt16, reason: HCIStatus, now: UInt64, control: inout StackControl) {
        self.now = now
        var e = event("disconnected")
        e.handle = handle
        e.reason = "0x" + hex(reason.rawValue).lowercased()
        if let i = entry(of: handle) {
            finishWrite(i)
            links[i] = LinkState()
        }
        record(e)
    }

    public mutating func stackIndicationConfirmed(handle: UInt16, attribute: UInt16, now: UInt64, control: inout StackControl) {
        self.now = now
        guard let i = entry(of: handle) else { return }
        var e = event("indication-confirmed")
        e.handle = handle
        e.attribute = attribute
        e.index = links[i].confirmed
        links[i].confirmed += 1
        record(e)
    }

    // MARK: GATTServerDelegate

    /// The entry of link `handle` (the GATT delegate's calls name links by handle, as the stack's do).
    func entry(of handle: UInt16) -> Int? { links.firstIndex { $0.handle == handle } }

    public mutating func read<S: ByteSink>(id: UInt16, link: UInt16, offset: Int, into sink: inout S) -> ATTErrorCode? {
        guard id == TestProfile.writableID, let k = entry(of: link) else { return .readNotPermitted }
        let value = links[k].lastWrite
        guard offset <= value.count else { return .invalidOffset }
        for b in value[offset...] { sink.append(b) }
        return nil
    }

    public mutating func write(id: UInt16, link: UInt16, offset: Int, value: Span<UInt8>) -> ATTErrorCode? {
        guard id == TestProfile.writableID, let k = entry(of: link) else { return .writeNotPermitted }
        // Offset 0 starts a new value; the parts of an Execute Write continue it (Part F 3.4.6.3).
        if offset == 0 {
            finishWrite(k)
            links[k].write = []
        }
        guard var buffer = links[k].write, offset == buffer.count else { return .invalidOffset }
        guard offset + value.count <= ATTMTU.maximumAttributeLength else { return .invalidAttributeValueLength }
        for i in value.indices { buffer.append(value[i]) }
        links[k].write = buffer
        links[k].writeParts += 1
        return nil
    }

    public mutating func clientConfigurationChanged(valueHandle: UInt16, link: UInt16, configuration: GATTClientConfiguration) {
        guard let k = entry(of: link) else { return }
        var e = event("subscribed")
        e.handle = link
        e.attribute = valueHandle
        e.notify = configuration.contains(.notification)
        e.indicate = configuration.contains(.indication)
        record(e)
        // Each new subscription restarts the counter from 0.
        if valueHandle == handles.notifying {
            let on = configuration.contains(.notification)
            if on && !links[k].notifying { links[k].notified = 0 }
            links[k].notifying = on
        } else if valueHandle == handles.indicating {
            let on = configuration.contains(.indication)
            if on && !links[k].indicating {
                links[k].indicated = 0
                links[k].confirmed = 0
            }
            links[k].indicating = on
        }
    }

    // MARK: Outside callbacks

    /// Sends what is due: MTU changes become events; subscribed links get their next counter values,
    /// as many notifications as the ACL queue takes while keeping headroom, and one indication at a
    /// time. Call after every run-loop turn (inside `StackSession.perform`).
    public static func pump(_ le: inout LEStack<TestServer, 8, 40, 1024>, now: UInt64) {
        le.app.now = now
        for i in le.app.links.indices {
            guard let handle = le.app.links[i].handle, le.connections.contains(handle: handle) else { continue }
            if let mtu = le.mtu(handle: handle), mtu != le.app.links[i].mtu {
                le.app.links[i].mtu = mtu
                var e = le.app.event("mtu")
                e.handle = handle
                        e.mtu = mtu
                le.app.record(e)
            }
            // A client that exchanged a larger MTU or subscribed is about to stream: ask for a short
            // interval (a 200-octet read takes one round trip of connection events; Bumble's central
            // connects at 30 ms), each link its own (`streamingInterval`). Supervision timeout 4 s.
            // Once per link; the central may refuse.
            let streaming = le.app.links[i].mtu > 23 || le.app.links[i].notifying || le.app.links[i].indicating
            // The 2M PHY as the transfer starts, not when the peripheral's wait for the central to ask
            // ends (`peripheralPHYDelay`, 2 s): in the four-centrals test on Zephyr 3.0.99 the fourth
            // central, once alone on the air, was done and gone 1.8 s after connecting, two runs in 30,
            // at 1M (captures: its Disconnect before our LE Set PHY was due). Nothing if already asked.
            if streaming { le.requestPendingPHY(handle: handle) }
            if !le.app.links[i].askedForInterval, streaming,
               let timing = le.timing(handle: handle), timing.interval != streamingInterval(entry: i) {
                le.app.links[i].askedForInterval = true
                let interval = streamingInterval(entry: i)
                if le.requestConnectionParameters(handle: handle, intervalMin: interval, intervalMax: interval, supervisionTimeout: 0x0190) {
                    var e = le.app.event("interval-requested")
                    e.handle = handle
                                le.app.record(e)
                }
            }
            let count = le.app.count
            while le.app.links[i].notifying, le.app.links[i].notified < count,
                  le.control.acl.freeOctets > queueHeadroom, le.control.acl.count(handle: handle) < 2 {
                let value = counterBytes(le.app.links[i].notified)
                guard le.notify(handle: handle, attribute: le.app.handles.notifying, value: value.span) == .sent else { break }
                le.app.links[i].notified += 1
            }
            if le.app.links[i].indicating, le.app.links[i].indicated < count, le.control.acl.freeOctets > queueHeadroom {
                let value = counterBytes(le.app.links[i].indicated)
                if le.indicate(handle: handle, attribute: le.app.handles.indicating, value: value.span) == .sent {
                    le.app.links[i].indicated += 1
                }
            }
        }
    }

    /// The interval (1.25 ms units) asked for the link in entry `entry` of `links`: 7.5 ms for the first, and no two
    /// links the same or multiples of one another (pairwise coprime), so no two links' connection
    /// events keep one offset for ever. Zephyr's controller before 3.2 reserves a peripheral's event
    /// for the shortest PDUs whatever the data length (`BT_CTLR_SLOT_RESERVATION_UPDATE` came in 3.2),
    /// and where another link's event begins inside the time a long PDU needs, it aborts that PDU
    /// mid-air. With one interval for both links that happened at the same point of every event:
    /// in the four-centrals test on 3.0.99 (air capture, BabbleSim's phy dump) our 210-octet read
    /// response began 1.1 ms before the next link's event, was cut off each time at the same octet,
    /// was sent again 30 ms later and cut again, the central never saw a whole packet, and the link
    /// ended in a supervision timeout (0x08), once in about 40 runs on a loaded machine. With
    /// intervals apart, the offset moves at every event and the next whole packet gets through.
    static func streamingInterval(entry: Int) -> UInt16 {
        coprimeIntervals[entry % coprimeIntervals.count]
    }
    private static let coprimeIntervals: [UInt16] = [6, 7, 11, 13, 17, 19, 23, 29]

    static func counterBytes(_ n: Int) -> [UInt8] {
        let v = UInt32(truncatingIfNeeded: n)
        return [UInt8(truncatingIfNeeded: v), UInt8(truncatingIfNeeded: v >> 8),
                UInt8(truncatingIfNeeded: v >> 16), UInt8(truncatingIfNeeded: v >> 24)]
    }
}
