import Testing
@testable import BluetoothHost

// The GATT client against this repository's ATT server and GATT database, in process: every request
// the client writes goes to `ATTServer.handle`, every response back to `GATTClient.handle`, so both
// ends of each procedure are the real code.

/// One link: a client, a server with its bearer and database, and a log of what crossed it.
struct GATTLoopback {
    var client: GATTStandardClient
    var delegate = RecordingGATTDelegate()
    var server = ATTServer()
    var bearer = ATTStandardBearer()
    var database: GATTStandardDatabase
    var serverDelegate = GATTNoDelegate()
    /// Client-to-server PDUs, in order.
    var requests: [[UInt8]] = []

    let payload: [UInt8]
    var payloadHandle: UInt16 = 0
    var signal = GATTCharacteristicHandles(declaration: 0, value: 0, clientConfiguration: 0)
    var status = GATTCharacteristicHandles(declaration: 0, value: 0, clientConfiguration: 0)
    var descriptionHandle: UInt16 = 0
    var serviceHandle: UInt16 = 0

    /// A Herald-like service: a 200-octet readable payload, a writable 300-octet signal value and a
    /// notifying/indicating status with a user description.
    init(clientMTU: UInt16 = 247) throws {
        client = GATTStandardClient(maximumMTU: clientMTU)
        let payload = (0..<200).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
        self.payload = payload
        let name: [UInt8] = Array("herald".utf8)
        database = try GATTStandardDatabase(deviceName: name.span)
        serviceHandle = try database.addPrimaryService(heraldServiceUUID)
        payloadHandle = try database.addCharacteristic(heraldPayloadUUID, properties: .read, permissions: .read,
                                                       value: .stored(payload.span, maxLength: 200)).value
        let empty: [UInt8] = []
        signal = try database.addCharacteristic(heraldSignalUUID, properties: .write, permissions: .write,
                                                value: .stored(empty.span, maxLength: 300))
        let zero: [UInt8] = [0]
        status = try database.addCharacteristic(BluetoothUUID(uuid16: 0x2A19), properties: GATTCharacteristicProperties.read | .notify | .indicate,
                                                permissions: .read, value: .stored(zero.span, maxLength: 1))
        let description: [UInt8] = Array("status".utf8)
        descriptionHandle = try database.addDescriptor(BluetoothUUID(uuid16: 0x2901), permissions: .read,
                                                       value: .stored(description.span, maxLength: 6))
    }

    /// Runs `procedure` to completion through the server at `now`.
    mutating func run(_ procedure: borrowing GATTProcedure, now: UInt64 = 0) throws(GATTClientError) {
        var first = ATTTestSink()
        try client.start(procedure, now: now, into: &first)
        var pdu = first.bytes
        var steps = 0
        while !pdu.isEmpty, steps < 100 {
            requests.append(pdu)
            var response = ATTTestSink()
            let action = server.handle(pdu: pdu.span, bearer: &bearer, link: ServerLinks()[0x0040], now: now, database: &database,
                                       delegate: &serverDelegate, response: &response)
            guard action == .respond else { break }
            var next = ATTTestSink()
            _ = client.handle(pdu: response.bytes.span, now: now, delegate: &delegate, reply: &next)
            pdu = next.bytes
            steps += 1
        }
    }

    /// Requests with `opcode`, in order.
    func sent(_ opcode: ATTOpcode) -> [[UInt8]] { requests.filter { $0.first == opcode.rawValue } }
}

@Suite struct GATTClientServerTests {
    @Test func discoversTheWholeDatabase() throws {
        var link = try GATTLoopback()
        try link.run(.exchangeMTU)
        #expect(link.client.mtu == 247 && link.bearer.mtu == 247)

        try link.run(.discoverAllPrimaryServices)
        let services = link.delegate.services
        #expect(services.map(\.uuid) == [BluetoothUUID(uuid16: 0x1800), BluetoothUUID(uuid16: 0x1801), heraldServiceUUID])
        #expect(services.last?.startHandle == link.serviceHandle)
        #expect(services.last?.endHandle == link.descriptionHandle)
        #expect(link.delegate.completions.last.map { $0.procedure == .discoverAllPrimaryServices && $0.error == nil } == true)

        try link.run(.discoverPrimaryServices(uuid: heraldServiceUUID))
        #expect(link.delegate.services.count == 4 && link.delegate.services[3] == services[2])

        let herald = try #require(services.last)
        try link.run(.discoverAllCharacteristics(serviceStart: herald.startHandle, serviceEnd: herald.endHandle))
        #expect(link.delegate.characteristics == [
            GATTDiscoveredCharacteristic(declarationHandle: link.payloadHandle - 1, properties: .read,
                                         valueHandle: link.payloadHandle, uuid: heraldPayloadUUID),
            GATTDiscoveredCharacteristic(declarationHandle: link.signal.declaration, properties: .write,
                                         valueHandle: link.signal.value, uuid: heraldSignalUUID),
            GATTDiscoveredCharacteristic(declarationHandle: link.status.declaration,
                                         properties: GATTCharacteristicProperties.read | .notify | .indicate,
                                         valueHandle: link.status.value, uuid: BluetoothUUID(uuid16: 0x2A19)),
        ])

        // Descriptors of the last characteristic: value handle + 1 to the service's end (Part G 4.7.1).
        try link.run(.discoverAllDescriptors(start: link.status.value + 1, end: herald.endHandle))
        #expect(link.delegate.descriptors == [
            GATTDiscoveredDescriptor(handle: link.status.clientConfiguration, type: BluetoothUUID(uuid16: 0x2902)),
            GATTDiscoveredDescriptor(handle: link.descriptionHandle, type: BluetoothUUID(uuid16: 0x2901)),
        ])
        #expect(link.delegate.completions.allSatisfy { $0.error == nil })
        // The GATT service has characteristics too: all found, across several Read By Type requests at MTU 23.
        var small = try GATTLoopback(clientMTU: 23)
        let gatt = services[1]
        try small.run(.discoverAllCharacteristics(serviceStart: gatt.startHandle, serviceEnd: gatt.endHandle))
        #expect(small.delegate.characteristics.map(\.uuid) == [0x2A05, 0x2B29, 0x2B2A].map { BluetoothUUID(uuid16: $0) })
        #expect(small.delegate.completions.last?.error == nil)
    }

    @Test func longReadOf200OctetsAtMTU23() throws {
        var link = try GATTLoopback()
        try link.run(.readLong(handle: link.payloadHandle))
        #expect(link.delegate.assembled == link.payload)
        #expect(link.delegate.reads.map(\.offset) == Array(stride(from: 0, through: 198, by: 22)))
        #expect(link.sent(.readBlobRequest).count == 9 && link.sent(.readRequest).count == 1)
        #expect(link.sent(.readBlobRequest).last == [0x0C, UInt8(link.payloadHandle), 0x00, 198, 0x00])
        #expect(link.delegate.completions.count == 1 && link.delegate.completions.first?.error == nil)
    }

    @Test func longReadOf200OctetsAtMTU247() throws {
        var link = try GATTLoopback()
        try link.run(.exchangeMTU)
        try link.run(.readLong(handle: link.payloadHandle))
        #expect(link.delegate.reads.count == 1 && link.delegate.assembled == link.payload)
        #expect(link.sent(.readBlobRequest).isEmpty)
        // A plain read of the same value at MTU 23 gets the first 22 octets only.
        var small = try GATTLoopback()
        try small.run(.read(handle: small.payloadHandle))
        #expect(small.delegate.assembled == Array(small.payload[0..<22]))
    }

    @Test func longWriteThroughThePrepareQueue() throws {
        var link = try GATTLoopback()
        let value = (0..<100).map { UInt8($0) }
        try link.run(.writeLong(handle: link.signal.value, value: value.span))
        #expect(link.sent(.prepareWriteRequest).count == 6)  // ceil(100 / 18)
        #expect(link.sent(.executeWriteRequest) == [[0x18, 0x01]])
        #expect(attArray(link.database.value(link.signal.value)) == value)
        #expect(link.delegate.completions.last?.error == nil)

        // 300 octets at MTU 23 need 17 prepares, one more than the server's 16 queue entries; the
        // server extends one entry with each consecutive part, so the whole value is written.
        let medium = (0..<300).map { UInt8(truncatingIfNeeded: $0 &* 3) }
        let prepares = link.sent(.prepareWriteRequest).count
        try link.run(.writeLong(handle: link.signal.value, value: medium.span))
        #expect(link.sent(.prepareWriteRequest).count - prepares == 17)
        #expect(link.delegate.completions.last?.error == nil)
        #expect(link.requests.last == [0x18, 0x01])
        #expect(attArray(link.database.value(link.signal.value)) == medium)
        let big = (0..<300).map { UInt8(truncatingIfNeeded: $0 ^ 0x5A) }

        // At MTU 247 the same value takes two prepares.
        try link.run(.exchangeMTU)
        let before = link.sent(.prepareWriteRequest).count
        try link.run(.writeLong(handle: link.signal.value, value: big.span))
        #expect(link.sent(.prepareWriteRequest).count - before == 2)
        #expect(attArray(link.database.value(link.signal.value)) == big)
        #expect(link.delegate.completions.last?.error == nil)
    }

    @Test func writesAndPermissionErrors() throws {
        var link = try GATTLoopback()
        try link.run(.write(handle: link.signal.value, value: attHex("10 03 3a 00 02").span))
        #expect(attArray(link.database.value(link.signal.value)) == attHex("10 03 3a 00 02"))
        try link.run(.read(handle: link.signal.value))
        #expect(link.delegate.completions.last?.error == .attError(.readNotPermitted, handle: link.signal.value))
        try link.run(.write(handle: link.payloadHandle, value: attHex("01").span))
        #expect(link.delegate.completions.last?.error == .attError(.writeNotPermitted, handle: link.payloadHandle))
        // Write Without Response to a characteristic that does not declare it (Herald's signal
        // characteristic is write-with-response only): the server drops it and answers nothing.
        try link.run(.writeWithoutResponse(handle: link.signal.value, value: attHex("ca fe 01").span))
        #expect(attArray(link.database.value(link.signal.value)) == attHex("10 03 3a 00 02"))
        #expect(link.delegate.completions.count == 3)
    }

    @Test func subscribeThenReceiveNotificationsAndIndications() throws {
        var link = try GATTLoopback()
        let cccd = link.status.clientConfiguration
        try link.run(.setClientConfiguration(descriptorHandle: cccd, .notification))
        #expect(link.requests.last == [0x12, UInt8(cccd), 0x00, 0x01, 0x00])
        #expect(link.database.clientConfiguration(valueHandle: link.status.value, link: ServerLinks()[0x0040]) == .notification)

        var out = ATTTestSink()
        let level: [UInt8] = [0x42]
        #expect(link.server.notify(handle: link.status.value, value: level.span, bearer: link.bearer, link: ServerLinks()[0x0040],
                                   database: link.database, into: &out))
        var reply = ATTTestSink()
        #expect(link.client.handle(pdu: out.bytes.span, now: 5, delegate: &link.delegate, reply: &reply) == .none)
        #expect(link.delegate.notifications.count == 1 && link.delegate.notifications.first?.value == level)
        #expect(link.delegate.notifications.first?.handle == link.status.value)

        try link.run(.setClientConfiguration(descriptorHandle: cccd, .indication))
        #expect(link.database.clientConfiguration(valueHandle: link.status.value, link: ServerLinks()[0x0040]) == .indication)
        out = ATTTestSink()
        #expect(link.server.indicate(handle: link.status.value, value: level.span, bearer: &link.bearer, link: ServerLinks()[0x0040],
                                     now: 10, database: link.database, into: &out) == .sent)
        reply = ATTTestSink()
        #expect(link.client.handle(pdu: out.bytes.span, now: 11, delegate: &link.delegate, reply: &reply) == .send)
        #expect(reply.bytes == [0x1E])
        var none = ATTTestSink()
        let confirmed = link.server.handle(pdu: reply.bytes.span, bearer: &link.bearer, link: ServerLinks()[0x0040], now: 12,
                                           database: &link.database, delegate: &link.serverDelegate, response: &none)
        #expect(confirmed == .indicationConfirmed(handle: link.status.value) && none.bytes.isEmpty)

        try link.run(.setClientConfiguration(descriptorHandle: cccd, .none))
        #expect(link.requests.last == [0x12, UInt8(cccd), 0x00, 0x00, 0x00])
        #expect(link.database.clientConfiguration(valueHandle: link.status.value, link: ServerLinks()[0x0040]).isEmpty)
        #expect(link.delegate.completions.count == 3 && link.delegate.completions.allSatisfy { $0.error == nil })
    }
}
