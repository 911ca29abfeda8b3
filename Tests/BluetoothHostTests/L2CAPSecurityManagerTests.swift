import Testing
@testable import BluetoothHost

func smp(_ pdu: [UInt8]) -> (SMPOutcome, [UInt8]) {
    var reply = FixedBytes<23>()
    let outcome = SMPPairingRefusal.handle(pdu.span, reply: &reply)
    return (outcome, aclArray(reply))
}

// Reference bytes from Bumble 0.0.236's SMP classes.
@Suite struct L2CAPSecurityManagerTests {
    @Test func pairingRequestIsRefusedWithPairingNotSupported() throws {
        let (outcome, reply) = smp(aclHex("01 03 00 0d 10 07 07"))
        #expect(outcome == .refusedPairing(.pairingNotSupported))
        #expect(reply == aclHex("05 05"))
        let failed = try SMPPairingFailed(parsing: reply.span)
        #expect(failed.reason == .pairingNotSupported)
        let request = try SMPPairingRequest(parsing: aclHex("01 03 00 0d 10 07 07").span)
        #expect(request.ioCapability == 3 && request.authRequirements == 0x0D && request.maxEncryptionKeySize == 16)
    }

    @Test func malformedPairingRequestGetsInvalidParameters() {
        for pdu in ["01 03 00 0d 10 07", "01 03 00 0d 10 07 07 00", "01"] {
            let (outcome, reply) = smp(aclHex(pdu))
            #expect(outcome == .refusedPairing(.invalidParameters), "\(pdu)")
            #expect(reply == aclHex("05 0a"), "\(pdu)")
        }
    }

    @Test func securityRequestIsIgnored() {
        let (outcome, reply) = smp(aclHex("0b 0d"))
        #expect(outcome == .ignoredSecurityRequest)
        #expect(reply.isEmpty)
    }

    @Test func everythingElseIsDroppedSilently() {
        for pdu in ["", "02 03 00 0d 10 07 07", "03 00", "05 05", "ff"] {
            let (outcome, reply) = smp(pdu.isEmpty ? [] : aclHex(pdu))
            #expect(outcome == .dropped, "\(pdu)")
            #expect(reply.isEmpty, "\(pdu)")
        }
    }

    @Test func pairingFailedParsingIsLengthChecked() {
        #expect(throws: DecodeError.trailingBytes(count: 1)) { _ = try SMPPairingFailed(parsing: aclHex("05 05 00").span) }
        #expect(throws: DecodeError.unexpectedCode(field: "SMP code", value: 1)) {
            _ = try SMPPairingFailed(parsing: aclHex("01 05").span)
        }
    }
}
