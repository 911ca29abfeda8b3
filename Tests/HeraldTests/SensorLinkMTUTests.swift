import Testing
@testable import BluetoothHost
@testable import Herald

/// The central's GATT client on the stack uses the link's one ATT_MTU (Core 5.4 Vol 3 Part F
/// 3.4.2.2), whichever side's client set it.
@Suite("Sensor on the stack: the link's ATT_MTU")
struct SensorLinkMTUTests {
    typealias Stack = SensorAttemptEndTests.Stack

    static func att(_ le: inout Stack, handle: UInt16, _ pdu: [UInt8]) {
        let l2cap = [UInt8(pdu.count & 0xFF), UInt8(pdu.count >> 8), 0x04, 0x00] + pdu
        let packet = [UInt8(handle & 0xFF), UInt8(handle >> 8), UInt8(l2cap.count & 0xFF), UInt8(l2cap.count >> 8)] + l2cap
        le.hostDidReceive(acl: packet.span)
    }

    /// The peer's client exchanged 247 with our server before its server answered our client's
    /// Exchange MTU Request, which it refuses (Request Not Supported: it still works at the link's
    /// ATT_MTU, Part G 4.3.1). Its server then answers our Read By Type with 100 octets of payload:
    /// within ATT_MTU-4 of the link (Part F 3.4.4.2), so the payload is read, not refused as longer
    /// than a 23-octet bearer allows.
    @Test func aPeerThatExchangedFirstIsReadAtTheLinksMTU() throws {
        var le = try SensorAttemptEndTests.started()
        let peer = address(1)
        SensorAttemptEndTests.advert(&le, peer, at: 100)
        SensorAttemptEndTests.linkUp(&le, handle: 0x41, role: .central, peer: peer)
        Self.att(&le, handle: 0x41, [0x02, 0xF7, 0x00])
        #expect(le.mtu(handle: 0x41) == 247)
        Self.att(&le, handle: 0x41, [0x01, 0x02, 0x00, 0x00, 0x06])
        let payload = simplePayload(0x61) + [0x40, 77] + [UInt8](repeating: 0xA5, count: 77)
        #expect(payload.count == 100)
        Self.att(&le, handle: 0x41, [0x09, 102, 0x08, 0x00] + payload)
        #expect(le.app.delegate.events.contains(.read(1, payload)))
    }
}
