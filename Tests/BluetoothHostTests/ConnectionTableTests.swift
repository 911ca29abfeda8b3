import Testing
@testable import BluetoothHost

/// Stand-in for the ATT bearer: remembers what it was handed.
struct RecordingExtra: ConnectionExtra {
    var pdus = 0
    var bytes = 0
    var lastFirstByte: UInt8 = 0
    init() {}
}

@Suite struct ConnectionTableTests {
    /// herald-phone-peripheral.btsnoop frame 37: LE Connection Complete, handle 1, role peripheral,
    /// peer random C0:C1:C2:C3:C4:C5, interval 10, latency 0, timeout 10.
    static let connectionComplete = aclHex("04 3e 13 01 00 01 00 01 01 c5 c4 c3 c2 c1 c0 0a 00 00 00 0a 00 07")

    static func insertCaptured<let c: Int, let p: Int, E>(into table: inout ConnectionTable<c, p, E>) throws {
        let b = Self.connectionComplete
        var r = ByteReader(b.span.extracting(5...))  // after subevent code and status
        let handle = try r.u16()
        let role = ConnectionRole(rawValue: try r.u8())!
        let type = AddressType(rawValue: try r.u8())!
        let address = try BDAddress.read(&r)
        let timing = ConnectionTiming(interval: try r.u16(), latency: try r.u16(), supervisionTimeout: try r.u16())
        try table.insert(handle: handle, role: role, peer: DeviceAddress(type: type, address: address), timing: timing)
    }

    @Test func insertLookupUpdateRemove() throws {
        var table = StandardConnectionTable<RecordingExtra>()
        try Self.insertCaptured(into: &table)
        #expect(table.count == 1 && table.contains(handle: 1))
        let link = try #require(table[handle: 1])
        #expect(link.role == .peripheral)
        #expect(link.peer == DeviceAddress(type: .randomDevice,
                                           address: BDAddress(displayOrder: 0xC0, 0xC1, 0xC2, 0xC3, 0xC4, 0xC5)))
        #expect(link.timing == ConnectionTiming(interval: 10, latency: 0, supervisionTimeout: 10))
        // LE Connection Update Complete changes timing in place.
        let updated = table.update(handle: 1) { link -> Bool in
            link.timing = ConnectionTiming(interval: 24, latency: 0, supervisionTimeout: 72)
            link.extra.pdus = 9
            return true
        }
        #expect(updated == true)
        #expect(table[handle: 1]?.timing.interval == 24)
        #expect(table.update(handle: 2) { _ in true } == nil)
        let released = table.remove(handle: 1)
        let removed = try #require(released)
        #expect(removed.extra.pdus == 9)  // what was released comes back to the caller
        #expect(table.isEmpty && table.remove(handle: 1) == nil)
    }

    @Test func fullTableAndBadHandlesFailCleanly() throws {
        var table = ConnectionTable<2, 23, NoConnectionExtra>()
        let peer = DeviceAddress(type: .publicDevice, address: .zero)
        let timing = ConnectionTiming(interval: 24, latency: 0, supervisionTimeout: 72)
        try table.insert(handle: 0x0040, role: .central, peer: peer, timing: timing)
        #expect(throws: ConnectionTableError.duplicateHandle(0x0040)) {
            try table.insert(handle: 0x0040, role: .central, peer: peer, timing: timing)
        }
        #expect(throws: ConnectionTableError.invalidHandle(0x0F00)) {
            try table.insert(handle: 0x0F00, role: .central, peer: peer, timing: timing)
        }
        try table.insert(handle: 0x0041, role: .peripheral, peer: peer, timing: timing)
        #expect(table.isFull)
        #expect(throws: ConnectionTableError.full(capacity: 2)) {
            try table.insert(handle: 0x0042, role: .central, peer: peer, timing: timing)
        }
        // Freed entries are reused.
        _ = table.remove(handle: 0x0040)
        try table.insert(handle: 0x0042, role: .central, peer: peer, timing: timing)
        let handles = (0..<2).compactMap { table.handle(at: $0) }.sorted()
        #expect(handles == [0x0041, 0x0042])
        #expect(table.handle(at: 2) == nil)
    }

    @Test func standardTableHoldsEightLinks() throws {
        var table = StandardConnectionTable<NoConnectionExtra>()
        let peer = DeviceAddress(type: .publicDevice, address: .zero)
        for h in 0..<8 {
            try table.insert(handle: UInt16(h), role: .central, peer: peer,
                             timing: ConnectionTiming(interval: 24, latency: 0, supervisionTimeout: 72))
        }
        #expect(table.isFull)
        let link = try #require(table[handle: 7])
        #expect(link.reassembler.maxPayload == 247)
    }

    @Test func inboundPacketsAreReassembledPerLinkAndDelivered() throws {
        var table = StandardConnectionTable<RecordingExtra>()
        try Self.insertCaptured(into: &table)
        var delivered: [(UInt16, L2CAPChannelID, [UInt8])] = []
        func feed(_ h4: [UInt8]) throws -> ConnectionReceiveOutcome {
            let packet = try HCIACLDataPacket(parsing: h4.span.extracting(1...))
            return table.receive(packet) { extra, link, channel, payload in
                extra.pdus += 1
                extra.bytes += payload.count
                extra.lastFirstByte = payload[0]
                delivered.append((link.handle, channel, (0..<payload.count).map { payload[$0] }))
            }
        }
        #expect(try feed(CapturedACL.readByTypeFirst) == .incomplete)
        #expect(try feed(CapturedACL.readByTypeContinuation) == .delivered(channel: .att, length: 44))
        #expect(delivered.count == 1 && delivered.first?.2 == CapturedACL.readByTypePayload)
        #expect(delivered.first?.0 == 1)
        #expect(try feed(CapturedACL.mtuRequest) == .delivered(channel: .att, length: 3))
        let extra = try #require(table[handle: 1]?.extra)
        #expect(extra.pdus == 2 && extra.bytes == 47 && extra.lastFirstByte == 0x02)
        // Orphan continuation: dropped, link intact.
        #expect(try feed(CapturedACL.readByTypeContinuation) == .dropped(.continuationWithoutStart))
        // Unknown handle: the same packet on handle 2.
        var other = CapturedACL.mtuRequest
        other[1] = 0x02
        #expect(try feed(other) == .unknownHandle(2))
        #expect(table.unknownHandlePackets == 1)
    }

    @Test func reassemblyStateIsPerLink() throws {
        var table = ConnectionTable<4, 64, NoConnectionExtra>()
        let peer = DeviceAddress(type: .publicDevice, address: .zero)
        let timing = ConnectionTiming(interval: 24, latency: 0, supervisionTimeout: 72)
        try table.insert(handle: 1, role: .central, peer: peer, timing: timing)
        try table.insert(handle: 2, role: .central, peer: peer, timing: timing)
        var first2 = CapturedACL.readByTypeFirst
        first2[1] = 0x02
        var cont2 = CapturedACL.readByTypeContinuation
        cont2[1] = 0x02
        var done: [UInt16] = []
        // Interleave: start on 1, start on 2, continuation on 2, continuation on 1.
        for h4 in [CapturedACL.readByTypeFirst, first2, cont2, CapturedACL.readByTypeContinuation] {
            let packet = try HCIACLDataPacket(parsing: h4.span.extracting(1...))
            _ = table.receive(packet) { _, link, _, payload in
                if payload.count == 44 { done.append(link.handle) }
            }
        }
        #expect(done == [2, 1])
    }
}
