import Testing
@testable import BluetoothHost

/// One ATT bearer per link, and one ATT_MTU on it (Core 5.4 Vol 3 Part F 3.4.2.2): whichever side's
/// client exchanged it, our server and our client both use it. Herald reads over links in both
/// directions, so each side's client meets the other side's exchange.
@Suite("ATT: one ATT_MTU per link, for client and server")
struct ATTBearerMTUTests {
    /// Our client's Exchange MTU Request goes out and the peer's server answers 247.
    static func clientExchange(_ h: inout StackHarness, handle: UInt16, answer: [UInt8]) {
        let request: [UInt8] = [0x02, 0xF7, 0x00]
        _ = h.stack.perform(now: h.now, output: &h.wire) { le in le.control.sendATT(handle: handle, pdu: request.span) }
        #expect(h.sentL2CAP().map(\.payload) == [request])
        h.feed(StackHarness.numberOfCompleted(handle: handle, 1))
        h.feed(StackHarness.acl(handle: handle, channel: 4, answer))
    }

    /// The ATT PDUs our server sends in answer to `request`, credits returned as they go.
    static func serve(_ h: inout StackHarness, handle: UInt16, _ request: [UInt8]) -> [[UInt8]] {
        h.feed(StackHarness.acl(handle: handle, channel: 4, request))
        var packets: [[UInt8]] = []
        for _ in 0..<40 {
            let new = h.takeACL()
            packets += new
            if new.isEmpty { break }
            h.feed(StackHarness.numberOfCompleted(handle: handle, new.count))
        }
        return StackHarness.reassemble(packets).map(\.payload)
    }

    /// Our client exchanged ATT_MTU 247 on a link we made; the peer's client then reads our
    /// 200-octet value over the same link. It is owed all 200 octets in one Read Response (it
    /// stops at a response shorter than ATT_MTU-1, Part G 4.8.1), and a request longer than 23
    /// octets must be served, not refused as Invalid PDU.
    @Test func ourClientsExchangeIsTheMTUOurServerUses() throws {
        var h = try StackHarness()
        h.feed(StackHarness.connectionComplete(handle: 0x40, role: 0x00))
        Self.clientExchange(&h, handle: 0x40, answer: [0x03, 0xF7, 0x00])
        #expect(h.stack.app.clientPDUs == [[0x03, 0xF7, 0x00]])
        #expect(h.stack.le.mtu(handle: 0x40) == 247)
        #expect(h.stack.app.linkMTUs == [[0x40, 247]])
        let read = Self.serve(&h, handle: 0x40, [0x0A, UInt8(h.valueHandle), 0x00])
        #expect(read.count == 1)
        #expect(read.first == [0x0B] + (0..<200).map { UInt8($0) })
        let write = Self.serve(&h, handle: 0x40, [0x12, UInt8(h.valueHandle), 0x00] + [UInt8](repeating: 0x5A, count: 57))
        #expect(write == [[0x13]])
        #expect(h.stack.app.writes.last?.count == 57)
        // The peer's client may still make its own exchange (each client once, Part F 3.4.2.1): it
        // settles on the same 247 by the rule both sides follow (3.4.2.2: one's Request and Response
        // carry the same MTU).
        #expect(Self.serve(&h, handle: 0x40, [0x02, 0xF7, 0x00]) == [[0x03, 0xF7, 0x00]])
        #expect(h.stack.le.mtu(handle: 0x40) == 247)
    }

    /// The converse order: the peer's client exchanged 247 with our server first. Our client hears
    /// the link's ATT_MTU as it changes, and again when its own exchange ends, here refused by the
    /// peer's server (Request Not Supported): the link stays at 247, which our client must use to
    /// read the peer's long values (a response of ATT_MTU-1 octets is not the end, Part G 4.8.3).
    @Test func thePeersExchangeIsTheMTUOurClientUses() throws {
        var h = try StackHarness()
        h.feed(StackHarness.connectionComplete(handle: 0x40, role: 0x00))
        #expect(Self.serve(&h, handle: 0x40, [0x02, 0xF7, 0x00]) == [[0x03, 0xF7, 0x00]])
        #expect(h.stack.app.linkMTUs == [[0x40, 247]])
        Self.clientExchange(&h, handle: 0x40, answer: [0x01, 0x02, 0x00, 0x00, 0x06])
        #expect(h.stack.app.clientPDUs == [[0x01, 0x02, 0x00, 0x00, 0x06]])
        #expect(h.stack.le.mtu(handle: 0x40) == 247)
        #expect(h.stack.app.linkMTUs == [[0x40, 247], [0x40, 247]])
    }

    /// A server that can receive less than we can sets the link's ATT_MTU to its Rx MTU (the
    /// smaller, Part F 3.4.2.2), for our server's answers as well.
    @Test func theSmallerRxMTUIsTheLinks() throws {
        var h = try StackHarness()
        h.feed(StackHarness.connectionComplete(handle: 0x40, role: 0x00))
        Self.clientExchange(&h, handle: 0x40, answer: [0x03, 0x40, 0x00])
        #expect(h.stack.le.mtu(handle: 0x40) == 64)
        let read = Self.serve(&h, handle: 0x40, [0x0A, UInt8(h.valueHandle), 0x00])
        #expect(read.first?.count == 64)
        // A Server Rx MTU below 23 leaves ATT_MTU at 23 (3.4.2.2) on another link.
        h.feed(StackHarness.connectionComplete(handle: 0x41, role: 0x00))
        Self.clientExchange(&h, handle: 0x41, answer: [0x03, 0x10, 0x00])
        #expect(h.stack.le.mtu(handle: 0x41) == 23)
    }
}
