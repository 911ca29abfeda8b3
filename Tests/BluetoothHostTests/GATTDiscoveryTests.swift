import Testing
@testable import BluetoothHost

/// A client's full discovery (Core 5.4 Vol 3 Part G 4.4.1, 4.6.1, 4.7.1) of a database mixing 16- and
/// 128-bit services, characteristics and descriptors, decoding every response with the client-side
/// iterators: Read By Group Type until Attribute Not Found, Read By Type for characteristic
/// declarations, Find Information for descriptors.
@Suite struct GATTDiscoveryTests {
    static let uartService = BluetoothUUID("6e400001-b5a3-f393-e0a9-e50e24dcca9e")!
    static let uartTX = BluetoothUUID("6e400003-b5a3-f393-e0a9-e50e24dcca9e")!
    static let vendorDescriptor = BluetoothUUID("6e40ffff-b5a3-f393-e0a9-e50e24dcca9e")!

    func database() throws -> GATTStandardDatabase {
        var db = try heraldDatabase()                                  // 0x0001–0x0012
        try db.addPrimaryService(BluetoothUUID(uuid16: 0x180F))        // 0x0013
        try db.addCharacteristic(BluetoothUUID(uuid16: 0x2A19), properties: .read | .notify,
                                 permissions: .read, value: .dynamic(id: 2))  // 0x0014, 0x0015, CCCD 0x0016
        let description = Array("Battery".utf8)
        try db.addDescriptor(BluetoothUUID(uuid16: 0x2901), permissions: .read,
                             value: .stored(description.span, maxLength: 7))  // 0x0017
        try db.addPrimaryService(Self.uartService)                      // 0x0018
        try db.addCharacteristic(Self.uartTX, properties: .notify, permissions: .none,
                                 value: .dynamic(id: 3))                // 0x0019, 0x001A, CCCD 0x001B
        let one: [UInt8] = [1]
        try db.addDescriptor(Self.vendorDescriptor, permissions: .read, value: .stored(one.span, maxLength: 1))  // 0x001C
        return db
    }

    struct Service: Equatable { var start: UInt16; var end: UInt16; var uuid: BluetoothUUID }
    struct Characteristic: Equatable {
        var declaration: UInt16; var properties: UInt8; var value: UInt16; var uuid: BluetoothUUID
    }

    func isAttributeNotFound(_ r: [UInt8], _ opcode: ATTOpcode) -> Bool {
        guard let e = try? ATTErrorResponse(r.span) else { return false }
        return e.requestOpcode == opcode && e.error == .attributeNotFound
    }

    @Test(arguments: [UInt16(23), 247])
    func clientWalk(mtu: UInt16) throws {
        var h = ServerHarness(db: try database())
        if mtu != 23 { _ = h.ask("02 " + le16(mtu)) }
        var requests = 0
        func ask(_ pdu: borrowing some ATTPDU & ~Escapable) -> [UInt8] {
            requests += 1
            let (action, response) = h.send(attEncode(pdu))
            #expect(action == .respond)
            return response
        }

        // Primary services.
        var services: [Service] = []
        var start: UInt16 = 1
        while true {
            let r = ask(ATTReadByGroupTypeRequest(startingHandle: start, endingHandle: 0xFFFF,
                                                  attributeGroupType: BluetoothUUID(uuid16: 0x2800)))
            if isAttributeNotFound(r, .readByGroupTypeRequest) { break }
            let p = try ATTReadByGroupTypeResponse(r.span)
            var it = p.makeIterator()
            while let e = it.next() {
                services.append(Service(start: e.handle, end: e.endGroupHandle, uuid: try BluetoothUUID(wire: e.value)))
                start = e.endGroupHandle &+ 1
            }
        }
        #expect(services == [
            Service(start: 0x01, end: 0x05, uuid: BluetoothUUID(uuid16: 0x1800)),
            Service(start: 0x06, end: 0x0D, uuid: BluetoothUUID(uuid16: 0x1801)),
            Service(start: 0x0E, end: 0x12, uuid: heraldServiceUUID),
            Service(start: 0x13, end: 0x17, uuid: BluetoothUUID(uuid16: 0x180F)),
            Service(start: 0x18, end: 0x1C, uuid: Self.uartService),
        ])
        // One format per response: {GAP, GATT}, {Herald}, {Battery}, {UART}, then Attribute Not Found.
        #expect(requests == 5)

        // Characteristics of each service.
        var characteristics: [[Characteristic]] = []
        for s in services {
            var found: [Characteristic] = []
            var from = s.start
            while from <= s.end {
                let r = ask(ATTReadByTypeRequest(startingHandle: from, endingHandle: s.end,
                                                 attributeType: BluetoothUUID(uuid16: 0x2803)))
                if isAttributeNotFound(r, .readByTypeRequest) { break }
                let p = try ATTReadByTypeResponse(r.span)
                var it = p.makeIterator()
                while let e = it.next() {
                    var v = ByteReader(e.value)
                    let props = try v.u8()
                    let valueHandle = try v.u16()
                    found.append(Characteristic(declaration: e.handle, properties: props, value: valueHandle,
                                                uuid: try BluetoothUUID(wire: v.rest())))
                    from = e.handle + 1
                }
            }
            characteristics.append(found)
        }
        #expect(characteristics[0].map(\.uuid) == [BluetoothUUID(uuid16: 0x2A00), BluetoothUUID(uuid16: 0x2A01)])
        #expect(characteristics[1].map(\.value) == [0x08, 0x0B, 0x0D])
        #expect(characteristics[1].map(\.properties) == [0x20, 0x0A, 0x02])
        #expect(characteristics[2] == [
            Characteristic(declaration: 0x0F, properties: 0x02, value: 0x10, uuid: heraldPayloadUUID),
            Characteristic(declaration: 0x11, properties: 0x08, value: 0x12, uuid: heraldSignalUUID),
        ])
        #expect(characteristics[3] == [Characteristic(declaration: 0x14, properties: 0x12, value: 0x15, uuid: BluetoothUUID(uuid16: 0x2A19))])
        #expect(characteristics[4] == [Characteristic(declaration: 0x19, properties: 0x10, value: 0x1A, uuid: Self.uartTX)])

        // Descriptors: from after each value to before the next declaration or the service end.
        var descriptors: [UInt16: [(UInt16, BluetoothUUID)]] = [:]
        var findRequests = 0
        for (s, chars) in zip(services, characteristics) {
            for (i, c) in chars.enumerated() {
                let end = i + 1 < chars.count ? chars[i + 1].declaration - 1 : s.end
                var from = c.value + 1
                while from <= end {
                    findRequests += 1
                    let r = ask(ATTFindInformationRequest(startingHandle: from, endingHandle: end))
                    if isAttributeNotFound(r, .findInformationRequest) { break }
                    let p = try ATTFindInformationResponse(r.span)
                    var it = p.makeIterator()
                    while let e = it.next() {
                        descriptors[c.value, default: []].append((e.handle, e.type))
                        from = e.handle + 1
                    }
                }
            }
        }
        #expect(descriptors[0x08]?.map(\.0) == [0x09] && descriptors[0x08]?.first?.1.uuid16 == 0x2902)
        #expect(descriptors[0x15]?.map(\.0) == [0x16, 0x17])
        #expect(descriptors[0x15]?.map(\.1.uuid16) == [0x2902, 0x2901])
        // CCCD (16-bit) and the vendor descriptor (128-bit) cannot share a response.
        #expect(descriptors[0x1A]?.map(\.0) == [0x1B, 0x1C])
        #expect(descriptors[0x1A]?.last?.1 == Self.vendorDescriptor)
        #expect(findRequests == 4)
        // Every value the walk found is described by the characteristic declarations it read.
        #expect(h.ask("0a 17 00") == [0x0B] + Array("Battery".utf8))
    }
}
