import Testing
@testable import BluetoothHost

/// An application that records link events and serves one dynamic value.
struct RecordingApp: LEApplication {
    var ready = false
    var connected: [ConnectionSummary] = []
    var disconnected: [(UInt16, UInt8)] = []
    var failedToConnect: [(DeviceAddress, UInt8)] = []
    var clientPDUs: [[UInt8]] = []
    var writes: [[UInt8]] = []
    /// The link each write and CCCD change came on, as the GATT server named it.
    var writers: [UInt16] = []
    var configured: [(link: UInt16, valueHandle: UInt16, value: UInt16)] = []
    var timedOut: [UInt16] = []
    /// Each link ATT_MTU the stack announced (`stackDidUpdateATTMTU`): handle, MTU.
    var linkMTUs: [[UInt16]] = []
    mutating func stackDidUpdateATTMTU(handle: UInt16, mtu: UInt16, now: UInt64, control: inout StackControl) {
        linkMTUs.append([handle, mtu])
    }
    mutating func stackCommandDidTimeOut(tag: CommandTag, opcode: HCIOpcode, control: inout StackControl) {
        timedOut.append(opcode.rawValue)
    }

    mutating func read<S: ByteSink>(id: UInt16, link: UInt16, offset: Int, into sink: inout S) -> ATTErrorCode? {
        StackHarness.readServedValue(offset: offset, into: &sink)
    }
    mutating func write(id: UInt16, link: UInt16, offset: Int, value: Span<UInt8>) -> ATTErrorCode? {
        var v: [UInt8] = []
        for i in value.indices { v.append(value[i]) }
        writes.append(v)
        writers.append(link)
        return nil
    }
    mutating func clientConfigurationChanged(valueHandle: UInt16, link: UInt16, configuration: GATTClientConfiguration) {
        configured.append((link, valueHandle, configuration.rawValue))
    }
    mutating func stackDidBecomeReady(_ info: ControllerInfo, now: UInt64, control: inout StackControl) { ready = true }
    mutating func stackDidConnect(_ link: ConnectionSummary, now: UInt64, control: inout StackControl) { connected.append(link) }
    mutating func stackDidDisconnect(handle: UInt16, reason: HCIStatus, now: UInt64, control: inout StackControl) {
        disconnected.append((handle, reason.rawValue))
    }
    mutating func stackDidFailToConnect(to peer: DeviceAddress, status: HCIStatus, now: UInt64, control: inout StackControl) {
        failedToConnect.append((peer, status.rawValue))
    }
    mutating func stackDidReceiveATT(handle: UInt16, pdu: Span<UInt8>, now: UInt64, control: inout StackControl) {
        var v: [UInt8] = []
        for i in pdu.indices { v.append(pdu[i]) }
        clientPDUs.append(v)
    }
}

/// A stack brought up against the scripted controller, with one GATT characteristic.
struct StackHarness {
    typealias Stack = BluetoothStack<RecordingApp, 4, 24, 256>
    var stack: Stack
    var controller = FakeController()
    var wire = WireLog()
    var now: UInt64 = 0
    var valueHandle: UInt16 = 0

    init() throws {
        var db = try GATTDatabase<24, 256, 4>(deviceName: [0x68, 0x65, 0x72, 0x61, 0x6C, 0x64].span)
        _ = try db.addPrimaryService(BluetoothUUID(uuid16: 0x180F))
        valueHandle = try db.addCharacteristic(BluetoothUUID(uuid16: 0x2A19), properties: .read | .write | .notify,
                                               permissions: .readWrite, value: .dynamic(id: 7)).value
        stack = Stack(configuration: HostConfiguration(randomAddressSeed: [1, 2, 3, 4, 5, 6]), database: db, app: RecordingApp())
        controller.aclLength = 27
        controller.aclCount = 2
        stack.start(now: now, output: &wire)
        pump()
    }

    /// Answers every command the host wrote until it writes nothing more.
    mutating func pump() { Self.pump(&stack, controller: &controller, wire: &wire, now: now) }

    /// The same for any application's stack (the tests of per-application buffer sizes).
    static func pump<App: LEApplication, let links: Int, let attributes: Int, let values: Int, let framerOctets: Int>(
        _ stack: inout BluetoothStackOf<App, links, attributes, values, framerOctets>, controller: inout FakeController,
        wire: inout WireLog, now: UInt64 = 0
    ) {
        var guardCount = 0
        while !wire.packets.isEmpty, guardCount < 100 {
            guardCount += 1
            let sent = wire.packets.removeFirst()
            let reply = controller.answer(sent)
            if !reply.isEmpty { stack.receive(reply.span, now: now, output: &wire) }
        }
    }

    /// Starts `stack` against a controller with two 27-octet ACL buffers and answers its bring-up.
    static func bringUp<App: LEApplication, let links: Int, let attributes: Int, let values: Int, let framerOctets: Int>(
        _ stack: inout BluetoothStackOf<App, links, attributes, values, framerOctets>
    ) -> (FakeController, WireLog) {
        var controller = FakeController()
        controller.aclLength = 27
        controller.aclCount = 2
        var wire = WireLog()
        stack.start(now: 0, output: &wire)
        pump(&stack, controller: &controller, wire: &wire)
        return (controller, wire)
    }

    /// The 200-octet value the test applications serve (octets 0, 1, … 199), from `offset` on.
    static func readServedValue<S: ByteSink>(offset: Int, into sink: inout S) -> ATTErrorCode? {
        guard offset >= 0, offset <= 200 else { return .invalidOffset }
        for b in offset..<200 { sink.append(UInt8(b)) }
        return nil
    }

    /// A two-link stack for `app` on `batteryDatabase(properties:)`, brought up against a controller
    /// with 251-octet ACL buffers, `aclCount` of them: the stack, the controller, the wire, and the
    /// value's handle. For the tests of per-application buffer sizes.
    static func startedStack<App: LEApplication>(app: App, properties: GATTCharacteristicProperties, aclCount: UInt8) throws
        -> (BluetoothStack<App, 2, 24, 256>, FakeController, WireLog, UInt16) where App.GATTHandles == AnyGATTHandles {
        let (db, value): (GATTDatabase<24, 256, 2>, UInt16) = try batteryDatabase(properties: properties)
        var stack = BluetoothStack<App, 2, 24, 256>(configuration: HostConfiguration(randomAddressSeed: [1, 2, 3, 4, 5, 6]),
                                                    database: db, app: app)
        var controller = FakeController()
        controller.aclLength = 251
        controller.aclCount = aclCount
        var wire = WireLog()
        stack.start(now: 0, output: &wire)
        pump(&stack, controller: &controller, wire: &wire)
        return (stack, controller, wire, value)
    }

    /// A database with one Battery Level characteristic served by the application (id 7): the
    /// database and the value's handle.
    static func batteryDatabase<let links: Int>(properties: GATTCharacteristicProperties) throws
        -> (GATTDatabase<24, 256, links>, UInt16) {
        var db = try GATTDatabase<24, 256, links>(deviceName: Array("herald".utf8).span)
        _ = try db.addPrimaryService(BluetoothUUID(uuid16: 0x180F))
        let value = try db.addCharacteristic(BluetoothUUID(uuid16: 0x2A19), properties: properties,
                                             permissions: .readWrite, value: .dynamic(id: 7)).value
        return (db, value)
    }

    mutating func feed(_ bytes: [UInt8]) { stack.receive(bytes.span, now: now, output: &wire) }

    /// LE Connection Complete (subevent 0x01): handle, role, peer F0:F1:F2:F3:F4:F5 random.
    static func connectionComplete(handle: UInt16, role: UInt8, status: UInt8 = 0) -> [UInt8] {
        [0x04, 0x3E, 0x13, 0x01, status, UInt8(handle & 0xFF), UInt8(handle >> 8), role, 0x01,
         0xF5, 0xF4, 0xF3, 0xF2, 0xF1, 0xF0, 0x18, 0x00, 0x00, 0x00, 0x48, 0x00, 0x00]
    }

    /// One ACL packet carrying a whole L2CAP PDU on `channel`.
    static func acl(handle: UInt16, channel: UInt16, _ payload: [UInt8]) -> [UInt8] {
        let l2cap = [UInt8(payload.count & 0xFF), UInt8(payload.count >> 8), UInt8(channel & 0xFF), UInt8(channel >> 8)] + payload
        return [0x02, UInt8(handle & 0xFF), UInt8(handle >> 8), UInt8(l2cap.count & 0xFF), UInt8(l2cap.count >> 8)] + l2cap
    }

    /// ACL packets the host sent since the last call, reassembled into whole L2CAP payloads.
    mutating func sentL2CAP() -> [(channel: UInt16, payload: [UInt8])] {
        let packets = takeACL()
        return Self.reassemble(packets)
    }

    /// Removes and returns the ACL packets written so far.
    mutating func takeACL() -> [[UInt8]] {
        let packets = wire.packets.filter { $0.first == 0x02 }
        wire.packets.removeAll { $0.first == 0x02 }
        return packets
    }

    static func reassemble(_ packets: [[UInt8]]) -> [(channel: UInt16, payload: [UInt8])] {
        var out: [(UInt16, [UInt8])] = []
        var current: [UInt8] = []
        for p in packets {
            let data = Array(p[5...])
            if (p[2] >> 4) & 0x3 == 0 { current = data } else { current += data }
            let length = Int(current[0]) | Int(current[1]) << 8
            if current.count == 4 + length {
                out.append((UInt16(current[2]) | UInt16(current[3]) << 8, Array(current[4...])))
            }
        }
        return out
    }

    static func numberOfCompleted(handle: UInt16, _ count: Int) -> [UInt8] {
        [0x04, 0x13, 0x05, 0x01, UInt8(handle & 0xFF), UInt8(handle >> 8), UInt8(count), 0x00]
    }
}

@Suite struct BluetoothStackTests {
    @Test func readRequestOverACLIsAnsweredAndFragmentedToTheControllerBuffers() throws {
        var h = try StackHarness()
        #expect(h.stack.app.ready)
        h.feed(StackHarness.connectionComplete(handle: 0x0040, role: 0x01))
        #expect(h.stack.app.connected.count == 1)
        // Exchange MTU 247, then Read of the 200-byte value: the response is 244 bytes of value in one
        // ATT PDU, split into 27-byte ACL packets, of which the controller takes 2 at a time.
        h.feed(StackHarness.acl(handle: 0x0040, channel: 4, [0x02, 0xF7, 0x00]))
        let mtu = h.sentL2CAP()
        #expect(mtu.count == 1 && mtu[0].channel == 4 && mtu[0].payload == [0x03, 0xF7, 0x00])
        h.feed(StackHarness.numberOfCompleted(handle: 0x0040, 1))
        h.feed(StackHarness.acl(handle: 0x0040, channel: 4, [0x0A, UInt8(h.valueHandle), 0x00]))
        // 204 bytes of L2CAP in 27-byte packets is 8 packets; the controller holds 2 at a time, so
        // each Number Of Completed Packets releases the next 2 and the queue never idles with credits.
        var packets: [[UInt8]] = []
        for _ in 0..<20 {
            let new = h.takeACL()
            #expect(new.count <= 2)
            #expect(h.stack.le.control.credits.inFlight <= 2)
            packets += new
            if new.isEmpty { break }
            h.feed(StackHarness.numberOfCompleted(handle: 0x0040, new.count))
        }
        #expect(packets.count == 8)
        #expect(packets.allSatisfy { $0.count <= 5 + 27 })
        let all = StackHarness.reassemble(packets)
        let response = try #require(all.first)
        #expect(response.payload.first == 0x0B)
        #expect(response.payload.count == 1 + 200)
        #expect(Array(response.payload[1...]) == Array(0..<200))
    }

    @Test func writeRequestReachesTheApplicationAndIsAcknowledged() throws {
        var h = try StackHarness()
        h.feed(StackHarness.connectionComplete(handle: 0x0041, role: 0x01))
        h.feed(StackHarness.acl(handle: 0x0041, channel: 4, [0x12, UInt8(h.valueHandle), 0x00, 0xCA, 0xFE]))
        #expect(h.stack.app.writes == [[0xCA, 0xFE]])
        #expect(h.sentL2CAP().map(\.payload) == [[0x13]])
    }

    @Test func disconnectionReleasesCreditsQueueAndLink() throws {
        var h = try StackHarness()
        h.feed(StackHarness.connectionComplete(handle: 0x0040, role: 0x01))
        h.feed(StackHarness.acl(handle: 0x0040, channel: 4, [0x0A, UInt8(h.valueHandle), 0x00]))
        #expect(h.stack.le.control.credits.inFlight == 1)
        // Disconnection Complete: status 0, handle 0x0040, reason 0x13.
        h.feed([0x04, 0x05, 0x04, 0x00, 0x40, 0x00, 0x13])
        #expect(h.stack.app.disconnected.count == 1 && h.stack.app.disconnected[0].1 == 0x13)
        #expect(h.stack.le.control.credits.inFlight == 0)
        #expect(h.stack.le.control.acl.isEmpty)
        #expect(h.stack.le.connections.isEmpty)
    }

    @Test func smpPairingRequestIsRefusedAndUnknownChannelDropped() throws {
        var h = try StackHarness()
        h.feed(StackHarness.connectionComplete(handle: 0x0040, role: 0x01))
        h.feed(StackHarness.acl(handle: 0x0040, channel: 6, [0x01, 0x03, 0x00, 0x01, 0x10, 0x07, 0x07]))
        h.feed(StackHarness.acl(handle: 0x0040, channel: 0x0040, [0x01, 0x02]))
        let sent = h.sentL2CAP()
        #expect(sent.count == 1)
        #expect(sent[0].channel == 6 && sent[0].payload == [0x05, 0x05])
    }

    @Test func linkBeyondCapacityIsDisconnected() throws {
        var h = try StackHarness()
        for i in 0..<4 { h.feed(StackHarness.connectionComplete(handle: UInt16(0x40 + i), role: 0x01)) }
        h.feed(StackHarness.connectionComplete(handle: 0x50, role: 0x01))
        h.pump()
        #expect(h.stack.app.connected.count == 4)
        #expect(h.stack.le.counters.rejectedConnections == 1)
        // HCI Disconnect for handle 0x0050, reason 0x14.
        #expect(h.controller.seen.contains(0x0406))
    }

    @Test func aLinkBeyondTheSixteenHandlesCreditsTrackIsRefusedLikeOneBeyondTheTable() throws {
        // A stack built for 17 links: its table has room for the 17th, the ACL credits (16 handles,
        // StackControl.credits) do not, and traffic no credit accounts for must not go out.
        var db = try GATTDatabase<24, 256, 17>(deviceName: [0x68].span)
        _ = try db.addPrimaryService(BluetoothUUID(uuid16: 0x180F))
        var stack = BluetoothStack<RecordingApp, 17, 24, 256>(
            configuration: HostConfiguration(randomAddressSeed: [1, 2, 3, 4, 5, 6]), database: db, app: RecordingApp())
        var (controller, wire) = StackHarness.bringUp(&stack)
        for i in 0..<17 {
            let event = StackHarness.connectionComplete(handle: UInt16(0x40 + i), role: 0x00)
            stack.receive(event.span, now: 0, output: &wire)
            StackHarness.pump(&stack, controller: &controller, wire: &wire)
        }
        #expect(stack.app.connected.count == 16)
        #expect(stack.le.connections.count == 16)
        #expect(stack.le.counters.rejectedConnections == 1)
        #expect(controller.seen.contains(0x0406))  // HCI Disconnect (for the 17th)
    }

    @Test func aCommandRejectOfOurParameterRequestLetsTheLinkAskAgain() throws {
        var h = try StackHarness()
        h.feed(StackHarness.connectionComplete(handle: 0x0040, role: 0x01))
        h.pump()
        func ask(_ h: inout StackHarness) -> Bool {
            h.stack.perform(now: h.now, output: &h.wire) { le in
                le.requestConnectionParameters(handle: 0x0040, intervalMin: 6, intervalMax: 12, supervisionTimeout: 200)
            }
        }
        #expect(ask(&h))
        h.pump()
        #expect(!ask(&h))  // one outstanding
        // Command Reject (Core 5.4 Vol 3 Part A 4.1), identifier 1, reason 0x0000 Command not understood.
        h.feed(StackHarness.acl(handle: 0x0040, channel: 5, [0x01, 0x01, 0x02, 0x00, 0x00, 0x00]))
        #expect(h.stack.le.counters.refusedParameterRequests == 1)
        #expect(ask(&h))
    }

    @Test func centralConnectTimesOutWithCancel() throws {
        var h = try StackHarness()
        let peer = DeviceAddress(type: .randomDevice, address: BDAddress(displayOrder: 0xF0, 0xF1, 0xF2, 0xF3, 0xF4, 0xF5))
        let started = h.stack.perform(now: h.now, output: &h.wire) { le in le.control.connect(to: peer, now: 0, timeout: 8_000) }
        #expect(started)
        h.pump()
        #expect(h.controller.seen.contains(0x200D))
        h.now = 8_000
        h.stack.tick(now: h.now, output: &h.wire)
        h.pump()
        #expect(h.controller.seen.contains(0x200E))
        // The controller ends the attempt with status 0x02 after a cancel.
        h.feed(StackHarness.connectionComplete(handle: 0, role: 0x00, status: 0x02))
        #expect(h.stack.app.failedToConnect.count == 1)
        #expect(h.stack.app.failedToConnect.first?.1 == HCIStatus.connectionTimeout.rawValue)
        #expect(h.stack.le.control.connecting == nil)
    }

    @Test func clientSidePDUsGoToTheApplication() throws {
        var h = try StackHarness()
        h.feed(StackHarness.connectionComplete(handle: 0x0040, role: 0x00))
        // A Handle Value Notification from the peer's server.
        h.feed(StackHarness.acl(handle: 0x0040, channel: 4, [0x1B, 0x10, 0x00, 0x01]))
        #expect(h.stack.app.clientPDUs == [[0x1B, 0x10, 0x00, 0x01]])
    }

    @Test func unansweredApplicationCommandIsReportedAsTimedOut() throws {
        var h = try StackHarness()
        h.controller.silent = true
        h.stack.perform(now: h.now, output: &h.wire) { le in le.control.send(HCILERand()) }
        h.pump()
        h.now = 10_000
        h.stack.tick(now: h.now, output: &h.wire)
        #expect(h.stack.app.timedOut == [HCILERand.opcode.rawValue])
    }
}
