import Testing
@testable import BluetoothHost

/// Runs the signalling handler on `pdu` and returns the action and the reply bytes.
func signal(_ pdu: [UInt8], role: ConnectionRole = .central,
            procedures: L2CAPSignalingProcedures = .all) -> (L2CAPSignalingAction, [UInt8]) {
    var reply = FixedBytes<23>()
    let action = L2CAPSignalingHandler.handle(pdu.span, role: role, procedures: procedures, reply: &reply)
    precondition(!reply.overflowed)
    return (action, (0..<reply.count).map { reply[$0] })
}

// Reference bytes below were produced by Bumble 0.0.236's L2CAP/SMP classes (independent encoder).
@Suite struct L2CAPSignalingTests {
    static let updateRequest = aclHex("12 01 08 00 18 00 28 00 00 00 2a 00")  // 24..40, latency 0, 420 ms

    @Test func centralAcceptsValidUpdateRequestAsAnAction() {
        let (action, reply) = signal(Self.updateRequest, role: .central)
        #expect(reply.isEmpty)  // answered only after HCI LE Connection Update
        #expect(action == .updateConnectionParameters(
            L2CAPConnectionParameterUpdateRequest(identifier: 1, intervalMin: 24, intervalMax: 40, latency: 0, timeout: 42)))
        var accepted = FixedBytes<8>()
        L2CAPConnectionParameterUpdateResponse(identifier: 7, accepted: true).write(to: &accepted)
        #expect(aclArray(accepted) == aclHex("13 07 02 00 00 00"))
        var rejected = FixedBytes<8>()
        L2CAPConnectionParameterUpdateResponse(identifier: 7, accepted: false).write(to: &rejected)
        #expect(aclArray(rejected) == aclHex("13 07 02 00 01 00"))
    }

    @Test func peripheralEncodesItsOwnRequest() throws {
        let ours = L2CAPConnectionParameterUpdateRequest(identifier: 1, intervalMin: 24, intervalMax: 40,
                                                         latency: 0, timeout: 42)
        #expect(ours.isValid)
        var out = FixedBytes<16>()
        ours.write(to: &out)
        #expect(aclArray(out) == Self.updateRequest)
        let command = try L2CAPSignalingCommand(parsing: out.span)
        #expect(try L2CAPConnectionParameterUpdateRequest(parsing: command) == ours)
    }

    @Test func peripheralRejectsUpdateRequestFromCentral() {
        let (action, reply) = signal(Self.updateRequest, role: .peripheral)
        #expect(action == L2CAPSignalingAction.none)
        #expect(reply == aclHex("01 01 02 00 00 00"))
    }

    @Test func invalidParameterRangesAreRejected() {
        // (min, max, latency, timeout) each breaking one rule of Core 5.4 Vol 3 Part A 4.20.
        let invalid: [(UInt16, UInt16, UInt16, UInt16)] = [
            (5, 40, 0, 42),        // interval min below 7.5 ms
            (6, 0x0C81, 0, 0x0C80), // interval max above 4 s
            (40, 24, 0, 42),       // min > max
            (24, 40, 500, 3200),   // latency above 499
            (6, 6, 0, 9),          // timeout below 100 ms
            (24, 40, 0, 0x0C81),   // timeout above 32 s
        ]
        for (i, p) in invalid.enumerated() {
            let request = L2CAPConnectionParameterUpdateRequest(identifier: 0x42, intervalMin: p.0, intervalMax: p.1,
                                                                latency: p.2, timeout: p.3)
            #expect(!request.isValid, "case \(i)")
            var bytes = FixedBytes<16>()
            request.write(to: &bytes)
            let (action, reply) = signal((0..<bytes.count).map { bytes[$0] })
            #expect(action == L2CAPSignalingAction.none, "case \(i)")
            #expect(reply == aclHex("13 42 02 00 01 00"), "case \(i)")
        }
        // Supervision timeout must exceed (1 + latency) × interval max × 2:
        // max 40 (50 ms), latency 3 → 400 ms needed; 40 (400 ms) is not enough, 41 is.
        let tight = L2CAPConnectionParameterUpdateRequest(identifier: 2, intervalMin: 24, intervalMax: 40,
                                                          latency: 3, timeout: 40)
        #expect(throws: DecodeError.invalidValue(field: "timeout", value: 40)) { try tight.validate() }
        var ok = tight
        ok.timeout = 41
        #expect(ok.isValid)
        // Range edges are valid.
        let edges = L2CAPConnectionParameterUpdateRequest(identifier: 2, intervalMin: 6, intervalMax: 0x0C80,
                                                          latency: 0, timeout: 0x0C80)
        #expect(edges.isValid)
        #expect(L2CAPConnectionParameterUpdateRequest(identifier: 2, intervalMin: 6, intervalMax: 6,
                                                      latency: 0x01F3, timeout: 0x0C80).isValid)
    }

    @Test func leCreditBasedConnectionRefusedWithSPSMNotSupported() throws {
        let (action, reply) = signal(aclHex("14 03 0a 00 80 00 40 00 f7 00 f7 00 0a 00"))
        #expect(action == L2CAPSignalingAction.none)
        #expect(reply == aclHex("15 03 0a 00 00 00 00 00 00 00 00 00 02 00"))
        let command = try L2CAPSignalingCommand(parsing: reply.span)
        let response = try L2CAPLECreditBasedConnectionResponse(parsing: command)
        #expect(response.result == .spsmNotSupported && response.identifier == 3)
    }

    @Test func enhancedCreditBasedConnectionRefusedPerChannel() {
        let (_, reply) = signal(aclHex("17 05 0c 00 80 00 f7 00 f7 00 0a 00 40 00 41 00"))
        #expect(reply == aclHex("18 05 0c 00 00 00 00 00 00 00 02 00 00 00 00 00"))
        // No source CID at all is malformed.
        let (_, bad) = signal(aclHex("17 06 08 00 80 00 f7 00 f7 00 0a 00"))
        #expect(bad == aclHex("01 06 02 00 00 00"))
    }

    @Test func disconnectionRequestForUnknownChannelGetsInvalidCID() {
        let (action, reply) = signal(aclHex("06 04 04 00 40 00 41 00"))
        #expect(action == L2CAPSignalingAction.none)
        #expect(reply == aclHex("01 04 06 00 02 00 40 00 41 00"))
    }

    @Test func unknownAndMalformedCommandsAreNotUnderstood() {
        // Echo Request is BR/EDR-only.
        #expect(signal(aclHex("08 06 02 00 68 69")).1 == aclHex("01 06 02 00 00 00"))
        // Declared length longer / shorter than the frame.
        #expect(signal(aclHex("12 09 08 00 18 00 28 00 00 00")).1 == aclHex("01 09 02 00 00 00"))
        #expect(signal(aclHex("06 0a 02 00 40 00 41 00")).1 == aclHex("01 0a 02 00 00 00"))
        // Update request with a short body (consistent header).
        #expect(signal(aclHex("12 0b 06 00 18 00 28 00 00 00")).1 == aclHex("01 0b 02 00 00 00"))
        // Unassigned code.
        #expect(signal(aclHex("7f 0c 00 00")).1 == aclHex("01 0c 02 00 00 00"))
    }

    @Test func oversizedCommandGetsSignalingMTUExceeded() {
        var pdu = aclHex("08 0d 14 00")
        pdu += [UInt8](repeating: 0, count: 20)  // 24 bytes > 23
        #expect(signal(pdu).1 == aclHex("01 0d 04 00 01 00 17 00"))
    }

    @Test func identifierZeroAndFragmentsAreIgnored() {
        let (a1, r1) = signal(aclHex("12 00 08 00 18 00 28 00 00 00 2a 00"))
        #expect(a1 == .ignored && r1.isEmpty)
        let (a2, r2) = signal(aclHex("12 01 08"))
        #expect(a2 == .ignored && r2.isEmpty)
    }

    @Test func responsesBecomeActionsAndAreNeverAnswered() {
        let (a1, r1) = signal(aclHex("13 07 02 00 00 00"), role: .peripheral)
        #expect(a1 == .connectionParameterUpdateResponse(identifier: 7, accepted: true) && r1.isEmpty)
        let (a2, _) = signal(aclHex("13 07 02 00 01 00"), role: .peripheral)
        #expect(a2 == .connectionParameterUpdateResponse(identifier: 7, accepted: false))
        let (a3, r3) = signal(aclHex("01 09 02 00 00 00"), role: .peripheral)
        #expect(a3 == .commandRejected(identifier: 9, reason: .commandNotUnderstood) && r3.isEmpty)
        let (a4, _) = signal(aclHex("01 09 06 00 02 00 40 00 41 00"))
        #expect(a4 == .commandRejected(identifier: 9, reason: .invalidCID(local: 0x40, remote: 0x41)))
        let (a5, _) = signal(aclHex("01 09 04 00 01 00 17 00"))
        #expect(a5 == .commandRejected(identifier: 9, reason: .signalingMTUExceeded(actualMTU: 23)))
        // Unsolicited or malformed responses: silently discarded.
        for pdu in ["07 02 04 00 40 00 41 00", "15 03 0a 00 00 00 00 00 00 00 00 00 02 00",
                    "13 07 01 00 00", "13 07 02 00 05 00", "01 09 00 00"] {
            let (action, reply) = signal(aclHex(pdu))
            #expect(action == .ignored, "\(pdu)")
            #expect(reply.isEmpty, "\(pdu)")
        }
        // Flow Control Credit indication for a channel we never opened: no reply.
        let (a6, r6) = signal(aclHex("16 08 04 00 40 00 05 00"))
        #expect(a6 == .ignored && r6.isEmpty)
    }

    /// A host that is never central and sends no update requests (a venue beacon) parses neither
    /// the request nor the answers: it rejects the one as a peripheral always does, and ignores the
    /// others as a host ignores any response it is not waiting for; everything else is as before.
    @Test func proceduresLeftOutByTypeAnswerAsAPeripheralWithoutRequests() {
        let none = L2CAPSignalingProcedures(answersParameterRequests: false, sendsParameterRequests: false)
        for pdu in [Self.updateRequest, aclHex("12 05 04 00 18 00 28 00"), aclHex("12 05 0a 00 18 00 28 00 00 00 2a 00 00 00")] {
            let (action, reply) = signal(pdu, role: .peripheral, procedures: none)
            #expect(action == L2CAPSignalingAction.none)
            #expect(reply == [0x01, pdu[1], 0x02, 0x00, 0x00, 0x00], "\(pdu)")
            #expect(signal(pdu, role: .peripheral) == (action, reply))
        }
        for pdu in ["13 07 02 00 00 00", "01 09 02 00 00 00", "01 09 06 00 02 00 40 00 41 00", "13 07 01 00 00"] {
            let (action, reply) = signal(aclHex(pdu), role: .peripheral, procedures: none)
            #expect(action == .ignored && reply.isEmpty, "\(pdu)")
        }
        // Channel requests and unknown codes are answered as with every procedure.
        for pdu in ["14 03 0a 00 80 00 40 00 f7 00 f7 00 0a 00", "06 02 04 00 40 00 41 00", "0a 04 02 00 01 00",
                    "16 08 04 00 40 00 05 00"] {
            #expect(signal(aclHex(pdu), role: .peripheral, procedures: none) == signal(aclHex(pdu), role: .peripheral), "\(pdu)")
        }
    }

    @Test func commandRejectEncodings() {
        var out = FixedBytes<12>()
        L2CAPCommandReject(identifier: 9, reason: .commandNotUnderstood).write(to: &out)
        #expect(aclArray(out) == aclHex("01 09 02 00 00 00"))
        #expect(L2CAPCommandRejectReason.other(0x0003).rawValue == 0x0003)
    }
}

@Suite struct L2CAPSignalingStateTests {
    @Test func identifiersSkipZeroAndWrap() {
        var state = L2CAPSignalingState()
        let first = state.nextIdentifier()
        var last: UInt8 = 0
        for _ in 2...255 { last = state.nextIdentifier() }
        let wrapped = state.nextIdentifier()
        #expect(first == 1 && last == 255 && wrapped == 1)
    }

    @Test func ourUpdateRequestIsTrackedUntilAnsweredOrTimedOut() throws {
        var state = L2CAPSignalingState()
        let made = state.makeParameterUpdateRequest(intervalMin: 24, intervalMax: 40, latency: 0, timeout: 42,
                                                    now: 1_000)
        let request = try #require(made)
        var bytes = FixedBytes<16>()
        request.write(to: &bytes)
        #expect(aclArray(bytes) == L2CAPSignalingTests.updateRequest)  // identifier 1, as Bumble encodes it
        // Only one at a time.
        let second = state.makeParameterUpdateRequest(intervalMin: 24, intervalMax: 40, latency: 0, timeout: 42,
                                                      now: 1_001)
        #expect(second == nil)
        #expect(!state.requestTimedOut(now: 30_999))
        #expect(state.requestTimedOut(now: 31_000))
        // The central's response: a wrong identifier is not ours, the right one resolves it.
        let (action, _) = signal(aclHex("13 02 02 00 00 00"), role: .peripheral)
        guard case .connectionParameterUpdateResponse(let id, let accepted) = action else {
            Issue.record("expected a response action")
            return
        }
        #expect(accepted)
        let wrong = state.resolve(identifier: id)
        let right = state.resolve(identifier: 1)
        #expect(!wrong && right)
        #expect(state.outstandingRequest == nil && !state.requestTimedOut(now: 100_000))
        let next = state.makeParameterUpdateRequest(intervalMin: 24, intervalMax: 40, latency: 0, timeout: 42,
                                                    now: 2_000)
        #expect(next?.identifier == 2)
    }

    @Test func anUnansweredRequestIsAbandonedAfterTheResponseTimeout() throws {
        // Vol 3 Part A 6.2.1: a central that never answers does not stop the link asking again.
        var state = L2CAPSignalingState()
        let first = state.makeParameterUpdateRequest(intervalMin: 24, intervalMax: 40, latency: 0, timeout: 42, now: 0)
        let early = state.makeParameterUpdateRequest(intervalMin: 24, intervalMax: 40, latency: 0, timeout: 42, now: 29_999)
        let again = state.makeParameterUpdateRequest(intervalMin: 24, intervalMax: 40, latency: 0, timeout: 42, now: 30_000)
        #expect(first?.identifier == 1 && early == nil)
        #expect(again?.identifier == 2 && state.outstandingRequest == 2)
    }
}
