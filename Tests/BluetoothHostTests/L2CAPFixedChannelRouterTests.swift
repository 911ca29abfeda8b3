import Testing
@testable import BluetoothHost

@Suite struct L2CAPFixedChannelRouterTests {
    func route(_ router: inout L2CAPFixedChannelRouter, _ channel: UInt16, _ payload: [UInt8],
               role: ConnectionRole = .central) -> (L2CAPInbound, [UInt8]) {
        var reply = FixedBytes<23>()
        let result = router.route(channel: L2CAPChannelID(rawValue: channel), payload: payload.span, role: role,
                                  reply: &reply)
        return (result, aclArray(reply))
    }

    @Test func dispatchesFixedChannels() throws {
        var router = L2CAPFixedChannelRouter()
        // The captured Exchange MTU Request goes to the caller untouched.
        var run = ReassemblyRun<64>()
        try run.feed(CapturedACL.mtuRequest)
        let (pduChannel, pduBytes) = try #require(run.pdus.first)
        let (att, attReply) = route(&router, pduChannel.rawValue, pduBytes)
        #expect(att == .att && attReply.isEmpty && att.replyChannel == nil)

        let (sig, sigReply) = route(&router, 0x0005, aclHex("14 03 0a 00 80 00 40 00 f7 00 f7 00 0a 00"))
        #expect(sig == .signaling(.none) && sig.replyChannel == .leSignaling)
        #expect(sigReply == aclHex("15 03 0a 00 00 00 00 00 00 00 00 00 02 00"))

        let (sm, smReply) = route(&router, 0x0006, aclHex("01 03 00 0d 10 07 07"))
        #expect(sm == .smp(.refusedPairing(.pairingNotSupported)) && sm.replyChannel == .smp)
        #expect(smReply == aclHex("05 05"))

        #expect(router.attPDUs == 1 && router.signalingPDUs == 1 && router.smpPDUs == 1)
    }

    @Test func unknownChannelsAreDroppedAndCounted() {
        var router = L2CAPFixedChannelRouter()
        for cid: UInt16 in [0x0000, 0x0001, 0x0003, 0x0040, 0x007F, 0xFFFF] {
            let (result, reply) = route(&router, cid, [0x01, 0x02])
            #expect(result == .unknownChannel(L2CAPChannelID(rawValue: cid)))
            #expect(reply.isEmpty)
        }
        #expect(router.unknownChannelPDUs == 6)
        #expect(router.attPDUs == 0)
    }

    /// End to end: a peer's fragmented signalling request in, our fragmented reply out, credited.
    @Test func signalingRequestToACLReplyThroughQueue() throws {
        var router = L2CAPFixedChannelRouter()
        var run = ReassemblyRun<64>()
        // LE Credit Based Connection Request on CID 5, split across two controller packets.
        let frame = bFrame(0x0005, aclHex("14 03 0a 00 80 00 40 00 f7 00 f7 00 0a 00"))
        for (pb, data) in split(frame, sizes: [6]) { run.feed(pb, data) }
        let (channel, payload) = try #require(run.pdus.first)
        var reply = FixedBytes<23>()
        let result = router.route(channel: channel, payload: payload.span, role: .peripheral, reply: &reply)
        let replyChannel = try #require(result.replyChannel)
        var queue = ACLOutboundQueue<64>()
        var credits = ACLCredits<2>()
        credits.configure(leDataLength: 11, leTotalPackets: 8)
        credits.open(handle: 1)
        try queue.enqueue(handle: 1, channel: replyChannel, payload: reply.span)
        var sink = ACLTestSink()
        queue.drain(credits: &credits, into: &sink)
        #expect(sink.h4Packets() == [
            aclHex("02 01 00 0b 00 0e 00 05 00 15 03 0a 00 00 00 00"),
            aclHex("02 01 10 07 00 00 00 00 00 00 02 00"),
        ])
    }
}
