// libFuzzer target: inbound ACL data → per-link reassembly (ConnectionTable / ACLReassembler,
// Core 5.4 Vol 4 Part E 5.4.2, Vol 3 Part A 3.1) → fixed-channel routing (L2CAPFixedChannelRouter)
// → LE signalling (L2CAPSignalingHandler, Part A 4) and SMP (SMPPairingRefusal, Part H 3.5).
// Built by Tools/fuzz; host-only code.
// Input: HCI ACL packets (header + data, no H4 indicator) as `[n][n bytes]` records, on two links
// (0x0040 we are peripheral, 0x0041 we are central); other handles are unknown.
// Invariants: no trap or over-read; a delivered PDU has the length its basic header declared and
// fits the capacity; replies go only on the signalling/SMP channels, fit the signalling MTU (23) and
// parse as a valid signalling command / SMP Pairing Failed; an SMP reply refuses pairing.
import BluetoothHost

func check(_ condition: Bool, _ message: StaticString) {
    if !condition { fatalError("invariant: \(message)") }
}

struct Sink: ByteSink {
    var bytes: [UInt8] = []
    mutating func append(_ byte: UInt8) { bytes.append(byte) }
}

typealias Table = ConnectionTable<2, 247, NoConnectionExtra>

func fuzzOne(_ input: Span<UInt8>) {
    var table = Table()
    var router = L2CAPFixedChannelRouter()
    let peer = DeviceAddress(type: .randomDevice, address: BDAddress(displayOrder: 0xC0, 1, 2, 3, 4, 5))
    let timing = ConnectionTiming(interval: 24, latency: 0, supervisionTimeout: 72)
    do {
        try table.insert(handle: 0x0040, role: .peripheral, peer: peer, timing: timing)
        try table.insert(handle: 0x0041, role: .central, peer: peer, timing: timing)
    } catch { fatalError("table") }

    var offset = 0
    while offset < input.count {
        let n = Int(input[offset])
        offset += 1
        let end = min(input.count, offset + n)
        let bytes = input.extracting(offset..<end)
        offset = end
        guard let packet = try? HCIACLDataPacket(parsing: bytes) else { continue }
        let known = packet.handle == 0x0040 || packet.handle == 0x0041
        var deliveries = 0
        var deliveredLength = -1
        let outcome = table.receive(packet) { _, link, channel, payload in
            deliveries += 1
            deliveredLength = payload.count
            check(payload.count <= 247, "PDU within capacity")
            var reply = Sink()
            let inbound = router.route(channel: channel, payload: payload, role: link.role, reply: &reply)
            guard let replyChannel = inbound.replyChannel else {
                check(reply.bytes.isEmpty, "no reply without a reply channel")
                return
            }
            guard !reply.bytes.isEmpty else { return }
            check(reply.bytes.count <= L2CAPSignalingCommand.leSignalingMTU, "reply within the signalling MTU")
            if replyChannel == .leSignaling {
                check((try? L2CAPSignalingCommand(parsing: reply.bytes.span)) != nil, "signalling reply parses")
                check(reply.bytes[1] != 0, "reply identifier is not 0")
                check(payload.count >= 2 && reply.bytes[1] == payload[1], "reply echoes the identifier")
            } else {
                check(replyChannel == .smp, "reply channel")
                check((try? SMPPairingFailed(parsing: reply.bytes.span)) != nil, "SMP reply is Pairing Failed")
                guard case .smp(.refusedPairing) = inbound else { check(false, "SMP reply only refuses pairing"); return }
            }
        }
        switch outcome {
        case .delivered(_, let length):
            check(deliveries == 1 && length == deliveredLength, "delivered once with its length")
        case .unknownHandle(let h):
            check(!known && h == packet.handle && deliveries == 0, "unknown handle")
        case .incomplete, .dropped:
            check(deliveries == 0, "nothing delivered")
        }
        if known {
            let link = table[handle: packet.handle]!
            check(link.reassembler.maxPayload == 247, "capacity")
        }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let buffer = UnsafeBufferPointer(start: size > 0 ? data : nil, count: size)
    fuzzOne(buffer.span)
    return 0
}
