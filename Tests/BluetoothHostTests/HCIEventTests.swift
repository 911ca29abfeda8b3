import Testing
@testable import BluetoothHost

// Event bytes without the H4 indicator. "capture" marks bytes copied from
// ../shared/captures (beside the repository)/*.btsnoop; the others are assembled from Core 5.4 Vol 4 Part E 7.7.

/// An LE Meta event packet with the length octet computed.
private func meta(_ subevent: UInt8, _ paramsHex: String) -> [UInt8] {
    let p = hex(paramsHex)
    return [0x3E, UInt8(p.count + 1), subevent] + p
}

private func parseMeta<T>(_ bytes: [UInt8], _ body: (HCILEMetaEvent) throws(DecodeError) -> T) throws(DecodeError) -> T {
    let packet = try HCIEventPacket(parsing: bytes.span)
    let m = try HCILEMetaEvent(packet)
    return try body(m)
}

@Suite struct HCIEventPacketTests {
    @Test func packetLengthMustMatch() throws {
        let good = hex("0e04 01 030c 00")  // capture: Reset complete
        let packet = try HCIEventPacket(parsing: good.span)
        let (code, count, first) = (packet.code, packet.parameters.count, packet.parameters[0])
        #expect(code == HCIEventCode.commandComplete && count == 4 && first == 1)
        #expect(throws: DecodeError.truncated(needed: 6, available: 5)) { _ = try HCIEventPacket(parsing: hex("0e04 01 030c").span).code }
        #expect(throws: DecodeError.trailingBytes(count: 1)) { _ = try HCIEventPacket(parsing: hex("0e04 01 030c 00 00").span).code }
        #expect(throws: DecodeError.truncated(needed: 2, available: 1)) { _ = try HCIEventPacket(parsing: hex("0e").span).code }
        let empty = try HCIEventPacket(parsing: hex("1000").span)
        let emptyCount = empty.parameters.count
        #expect(emptyCount == 0)
    }

    @Test func commandCompleteFields() throws {
        let bytes = hex("0e0c 01 0110 00 09 0000 09 ffff 0000")  // capture
        let cc = try HCICommandCompleteEvent(try HCIEventPacket(parsing: bytes.span))
        let (n, op, status, rp) = (cc.numHCICommandPackets, cc.opcode, cc.status, cc.returnParameters.count)
        #expect(n == 1 && op == HCIReadLocalVersionInformation.opcode && status == .success && rp == 8)

        // NOP: only a credit update, no status.
        let nopBytes = hex("0e03 05 0000")
        let nop = try HCICommandCompleteEvent(try HCIEventPacket(parsing: nopBytes.span))
        let (nopN, nopStatus, nopOp) = (nop.numHCICommandPackets, nop.status, nop.opcode)
        #expect(nopN == 5 && nopStatus == nil && nopOp == .nop)

        // A real opcode must carry a status.
        #expect(throws: DecodeError.truncated(needed: 4, available: 3)) {
            _ = try HCICommandCompleteEvent(try HCIEventPacket(parsing: hex("0e03 01 030c").span)).opcode
        }
        #expect(throws: DecodeError.truncated(needed: 3, available: 2)) {
            _ = try HCICommandCompleteEvent(try HCIEventPacket(parsing: hex("0e02 01 03").span)).opcode
        }
        // The wrong event code is refused by the typed initialiser.
        #expect(throws: DecodeError.unexpectedCode(field: "HCI event code", value: 0x0F)) {
            _ = try HCICommandCompleteEvent(try HCIEventPacket(parsing: hex("0f04 00 01 0d20").span)).opcode
        }
    }

    @Test func statusNames() {
        #expect(HCIStatus.commandDisallowed.specificationName?.description == "Command Disallowed")
        #expect(HCIStatus(rawValue: 0x3E).specificationName?.description == "Connection Failed to be Established / Synchronization Timeout")
        #expect(HCIStatus(rawValue: 0x2B).specificationName == nil && HCIStatus(rawValue: 0xFF).specificationName == nil)
    }

    @Test func commandStatusFromCapture() throws {
        let s = try HCICommandStatusEvent(try HCIEventPacket(parsing: hex("0f04 00 01 0d20").span))
        #expect(s.status == .success && s.numHCICommandPackets == 1 && s.opcode == HCILECreateConnection.opcode)
        let d = try HCICommandStatusEvent(try HCIEventPacket(parsing: hex("0f04 00 01 0604").span))
        #expect(d.opcode == HCIDisconnect.opcode)
        let refused = try HCICommandStatusEvent(parsing: hex("0c 01 0d20").span)
        #expect(refused.status == .commandDisallowed)
        #expect(throws: DecodeError.trailingBytes(count: 1)) { _ = try HCICommandStatusEvent(parsing: hex("00 01 0d20 00").span) }
        #expect(throws: DecodeError.truncated(needed: 4, available: 3)) { _ = try HCICommandStatusEvent(parsing: hex("00 01 0d").span) }
    }

    @Test func disconnectionCompleteFromCapture() throws {
        let d = try HCIDisconnectionCompleteEvent(try HCIEventPacket(parsing: hex("0504 00 0100 13").span))
        #expect(d == HCIDisconnectionCompleteEvent(status: .success, handle: 1, reason: .remoteUserTerminated))
        let timeout = try HCIDisconnectionCompleteEvent(parsing: hex("00 4020 08").span)
        #expect(timeout.handle == 0x0040 && timeout.reason == .connectionTimeout)  // flag bits masked off
        #expect(throws: DecodeError.truncated(needed: 4, available: 3)) { _ = try HCIDisconnectionCompleteEvent(parsing: hex("00 0100").span) }
        #expect(throws: DecodeError.unexpectedCode(field: "HCI event code", value: 0x13)) {
            _ = try HCIDisconnectionCompleteEvent(try HCIEventPacket(parsing: hex("1305 01 0100 0100").span))
        }
    }

    @Test func numberOfCompletedPackets() throws {
        let capture = hex("1305 01 0100 0100")
        let e = try HCINumberOfCompletedPacketsEvent(try HCIEventPacket(parsing: capture.span))
        let (count, h, c) = (e.count, e.handle(at: 0), e.completedPackets(at: 0))
        #expect(count == 1 && h == 1 && c == 1)

        let two = hex("02 0100 0300 4200 0a00")
        let e2 = try HCINumberOfCompletedPacketsEvent(parsing: two.span)
        var pairs: [[UInt16]] = []
        e2.forEach { pairs.append([$0, $1]) }
        #expect(pairs == [[1, 3], [0x42, 10]])

        // The handle count must agree with the length in both directions.
        #expect(throws: DecodeError.badLength(field: "Num_Handles", declared: 2, limit: 1)) {
            _ = try HCINumberOfCompletedPacketsEvent(parsing: hex("02 0100 0300").span).count
        }
        #expect(throws: DecodeError.badLength(field: "Num_Handles", declared: 1, limit: 1)) {
            _ = try HCINumberOfCompletedPacketsEvent(parsing: hex("01 0100 0300 00").span).count
        }
        #expect(throws: DecodeError.truncated(needed: 1, available: 0)) {
            _ = try HCINumberOfCompletedPacketsEvent(parsing: hex("").span).count
        }
    }

    @Test func hardwareErrorAndBufferOverflow() throws {
        let hw = try HCIHardwareErrorEvent(try HCIEventPacket(parsing: hex("1001 03").span))
        #expect(hw.hardwareCode == 3)
        #expect(throws: DecodeError.trailingBytes(count: 1)) { _ = try HCIHardwareErrorEvent(parsing: hex("0300").span) }
        let overflow = try HCIDataBufferOverflowEvent(try HCIEventPacket(parsing: hex("1a01 01").span))
        #expect(overflow.isACL)
        #expect(throws: DecodeError.truncated(needed: 1, available: 0)) { _ = try HCIDataBufferOverflowEvent(parsing: hex("").span) }
    }

    @Test func zephyrFatalVendorEvent() throws {
        // 0xAA, "lll.c", NUL, line 291 (0x123) little-endian.
        let bytes = hex("ff0b aa 6c6c6c2e63 00 23010000")
        let v = try HCIVendorEvent(try HCIEventPacket(parsing: bytes.span))
        let (fatal, line, file) = (v.isZephyrFatal, v.zephyrAssertLine, Array(v.zephyrAssertFile.indices).map { v.zephyrAssertFile[$0] })
        #expect(fatal && line == 291)
        #expect(String(decoding: file, as: UTF8.self) == "lll.c")

        // Fatal marker with a malformed tail: still fatal, but no location.
        let odd = HCIVendorEvent(parsing: hex("aa 6c6c 00 2301").span)
        let (oddFatal, oddLine, oddFile) = (odd.isZephyrFatal, odd.zephyrAssertLine, odd.zephyrAssertFile.count)
        #expect(oddFatal && oddLine == nil && oddFile == 0)

        // Another vendor subevent is not fatal.
        let other = HCIVendorEvent(parsing: hex("04 01 665544332211 c4").span)
        let (otherFatal, sub) = (other.isZephyrFatal, other.subevent)
        #expect(!otherFatal && sub == 0x04)
        let empty = HCIVendorEvent(parsing: hex("").span)
        let (emptyFatal, emptySub) = (empty.isZephyrFatal, empty.subevent)
        #expect(!emptyFatal && emptySub == nil)
    }
}

@Suite struct HCILEEventTests {
    @Test func metaEventSplitsSubevent() throws {
        let bytes = hex("3e06 12 00 00 0100 00")  // capture: advertising set terminated
        let (sub, count) = try parseMeta(bytes) { m throws(DecodeError) in (m.subevent, m.parameters.count) }
        #expect(sub == HCILESubeventCode.advertisingSetTerminated && count == 5)
        let t = try parseMeta(bytes) { m throws(DecodeError) in try HCILEAdvertisingSetTerminatedEvent(m) }
        #expect(t.status == .success && t.advertisingHandle == 0 && t.connectionHandle == 1 && t.numCompletedExtendedAdvertisingEvents == 0)
        #expect(throws: DecodeError.truncated(needed: 1, available: 0)) { _ = try HCILEMetaEvent(parsing: hex("").span).subevent }
    }

    @Test func connectionCompleteFromCaptures() throws {
        // Central side (herald-central-reads-phone).
        let central = try parseMeta(hex("3e13 01 00 0100 00 01 f5f4f3f2f1f0 0c00 0000 4800 00")) { m throws(DecodeError) in
            try HCILEConnectionCompleteEvent(m)
        }
        #expect(central.status == .success && central.handle == 1 && central.role == .central)
        #expect(central.peer == DeviceAddress(type: .randomDevice, address: BDAddress(displayOrder: 0xF0, 0xF1, 0xF2, 0xF3, 0xF4, 0xF5)))
        #expect(central.connectionInterval == 12 && central.peripheralLatency == 0 && central.supervisionTimeout == 72)
        // Peripheral side (herald-phone-peripheral).
        let peripheral = try parseMeta(hex("3e13 01 00 0100 01 01 c5c4c3c2c1c0 0a00 0000 0a00 07")) { m throws(DecodeError) in
            try HCILEConnectionCompleteEvent(m)
        }
        #expect(peripheral.role == .peripheral && peripheral.connectionInterval == 10 && peripheral.centralClockAccuracy == 7)
        #expect(peripheral.peer.address.bytes[5] == 0xC0)

        #expect(throws: DecodeError.truncated(needed: 18, available: 17)) {
            _ = try HCILEConnectionCompleteEvent(parsing: hex("00 0100 00 01 f5f4f3f2f1f0 0c00 0000 4800").span)
        }
        #expect(throws: DecodeError.trailingBytes(count: 1)) {
            _ = try HCILEConnectionCompleteEvent(parsing: hex("00 0100 00 01 f5f4f3f2f1f0 0c00 0000 4800 00 00").span)
        }
        #expect(throws: DecodeError.invalidValue(field: "Role", value: 2)) {
            _ = try HCILEConnectionCompleteEvent(parsing: hex("00 0100 02 01 f5f4f3f2f1f0 0c00 0000 4800 00").span)
        }
        #expect(throws: DecodeError.invalidValue(field: "Peer_Address_Type", value: 9)) {
            _ = try HCILEConnectionCompleteEvent(parsing: hex("00 0100 00 09 f5f4f3f2f1f0 0c00 0000 4800 00").span)
        }
        // A cancelled connection (0x02) carries meaningless fields; they do not make it an error.
        let cancelled = try HCILEConnectionCompleteEvent(parsing: hex("02 0000 ff ff 000000000000 0000 0000 0000 00").span)
        #expect(cancelled.status == .unknownConnectionIdentifier)
        #expect(throws: DecodeError.unexpectedCode(field: "LE subevent code", value: 0x12)) {
            _ = try parseMeta(hex("3e06 12 00 00 0100 00")) { m throws(DecodeError) in try HCILEConnectionCompleteEvent(m) }
        }
    }

    @Test func enhancedConnectionCompleteV1AndV2() throws {
        let body = "00 4000 01 02 665544332211 010203040546 000000000000 1800 0000 4800 01"
        let v1 = try parseMeta(meta(0x0A, body)) { m throws(DecodeError) in try HCILEEnhancedConnectionCompleteEvent(m) }
        #expect(v1.handle == 0x40 && v1.role == .peripheral && v1.peer.type == .publicIdentity)
        #expect(v1.localResolvablePrivateAddress.randomSubtype == .resolvablePrivate && v1.peerResolvablePrivateAddress.isZero)
        #expect(v1.connectionInterval == 24 && v1.supervisionTimeout == 72 && v1.centralClockAccuracy == 1)
        #expect(v1.advertisingHandle == nil && v1.syncHandle == nil)
        let v2 = try parseMeta(meta(0x29, body + "00 ffff")) { m throws(DecodeError) in try HCILEEnhancedConnectionCompleteEvent(m) }
        #expect(v2.advertisingHandle == 0 && v2.syncHandle == 0xFFFF)
        #expect(v2.basic == v1.basic)
        #expect(v2.basic.peer == DeviceAddress(type: .publicIdentity, address: BDAddress(displayOrder: 0x11, 0x22, 0x33, 0x44, 0x55, 0x66)))
        // v1 layout under the v2 code is short; v2 layout under the v1 code is long.
        #expect(throws: DecodeError.truncated(needed: 33, available: 30)) {  // fixed layouts name their whole length
            _ = try parseMeta(meta(0x29, body)) { m throws(DecodeError) in try HCILEEnhancedConnectionCompleteEvent(m) }
        }
        #expect(throws: DecodeError.trailingBytes(count: 3)) {
            _ = try parseMeta(meta(0x0A, body + "00 ffff")) { m throws(DecodeError) in try HCILEEnhancedConnectionCompleteEvent(m) }
        }
        #expect(throws: DecodeError.unexpectedCode(field: "LE subevent code", value: 1)) {
            _ = try HCILEEnhancedConnectionCompleteEvent(parsing: hex(body).span, subevent: 0x01)
        }
    }

    /// The stack's one reader of all three connection-complete layouts agrees with each type's own.
    @Test func anyConnectionCompleteReadsAllThreeLayouts() throws {
        func any(_ bytes: [UInt8]) throws(DecodeError) -> HCILEConnectionCompleteEvent {
            try parseMeta(bytes) { m throws(DecodeError) in try HCILEConnectionCompleteEvent(anyConnectionComplete: m) }
        }
        let legacy = hex("3e13 01 00 0100 01 01 c5c4c3c2c1c0 0a00 0000 0a00 07")
        #expect(try any(legacy) == parseMeta(legacy) { m throws(DecodeError) in try HCILEConnectionCompleteEvent(m) })
        let body = "00 4000 01 02 665544332211 010203040546 000000000000 1800 0000 4800 01"
        for layout in [meta(0x0A, body), meta(0x29, body + "00 ffff")] {
            let enhanced = try parseMeta(layout) { m throws(DecodeError) in try HCILEEnhancedConnectionCompleteEvent(m) }
            #expect(try any(layout) == enhanced.basic)
        }
        #expect(try any(meta(0x0A, body)).connectionInterval == 24)
        // Each code keeps its own length, and the peer and role checks apply to all.
        #expect(throws: DecodeError.truncated(needed: 33, available: 30)) { _ = try any(meta(0x29, body)) }
        #expect(throws: DecodeError.trailingBytes(count: 3)) { _ = try any(meta(0x0A, body + "00 ffff")) }
        #expect(throws: DecodeError.trailingBytes(count: 12)) { _ = try any(meta(0x01, body)) }
        #expect(throws: DecodeError.invalidValue(field: "Role", value: 2)) {
            _ = try any(meta(0x0A, "00 4000 02 02 665544332211 010203040546 000000000000 1800 0000 4800 01"))
        }
        #expect(throws: DecodeError.unexpectedCode(field: "LE subevent code", value: 0x12)) { _ = try any(hex("3e06 12 00 00 0100 00")) }
    }

    @Test func connectionUpdateAndDataLength() throws {
        let u = try parseMeta(meta(0x03, "00 0100 2800 0400 f401")) { m throws(DecodeError) in try HCILEConnectionUpdateCompleteEvent(m) }
        #expect(u.status == .success && u.handle == 1 && u.connectionInterval == 40 && u.peripheralLatency == 4 && u.supervisionTimeout == 500)
        #expect(throws: DecodeError.truncated(needed: 9, available: 8)) {
            _ = try HCILEConnectionUpdateCompleteEvent(parsing: hex("00 0100 2800 0400 f4").span)
        }
        let d = try parseMeta(meta(0x07, "0100 fb00 4808 fb00 4808")) { m throws(DecodeError) in try HCILEDataLengthChangeEvent(m) }
        #expect(d.handle == 1 && d.maxTxOctets == 251 && d.maxTxTime == 2120 && d.maxRxOctets == 251 && d.maxRxTime == 2120)
        #expect(throws: DecodeError.trailingBytes(count: 2)) {
            _ = try HCILEDataLengthChangeEvent(parsing: hex("0100 fb00 4808 fb00 4808 0000").span)
        }
        #expect(throws: DecodeError.unexpectedCode(field: "LE subevent code", value: 3)) {
            _ = try parseMeta(meta(0x03, "00 0100 2800 0400 f401")) { m throws(DecodeError) in try HCILEDataLengthChangeEvent(m) }
        }
    }
}

/// Every proper prefix of a real packet must be refused with a typed error (never accepted, never a trap).
@Suite struct HCIEventTruncationTests {
    /// Runs the parser that matches the event on the first `n` parameter octets; true if it threw.
    private func rejects(_ full: [UInt8], prefix n: Int) -> Bool {
        let code = full[0]
        let params = Array(full[2..<(2 + n)])
        do {
            switch code {
            case HCIEventCode.commandComplete:
                let cc = try HCICommandCompleteEvent(parsing: params.span)
                do { _ = try cc.decode(HCIReadLocalVersionInformation.self) } catch { return true }
            case HCIEventCode.commandStatus: _ = try HCICommandStatusEvent(parsing: params.span)
            case HCIEventCode.disconnectionComplete: _ = try HCIDisconnectionCompleteEvent(parsing: params.span)
            case HCIEventCode.numberOfCompletedPackets: _ = try HCINumberOfCompletedPacketsEvent(parsing: params.span).count
            case HCIEventCode.leMeta:
                let m = try HCILEMetaEvent(parsing: params.span)
                switch m.subevent {
                case HCILESubeventCode.connectionComplete: _ = try HCILEConnectionCompleteEvent(m)
                case HCILESubeventCode.advertisingSetTerminated: _ = try HCILEAdvertisingSetTerminatedEvent(m)
                case HCILESubeventCode.extendedAdvertisingReport:
                    var it = try HCILEExtendedAdvertisingReportEvent(m)
                    while let r = try it.next() { _ = r.kind }
                default: return false
                }
            default: return false
            }
        } catch {
            return true
        }
        return false
    }

    @Test(arguments: [
        "0e0c 01 0110 00 09 0000 09 ffff 0000",
        "0f04 00 01 0d20",
        "0504 00 0100 13",
        "1305 01 0100 0100",
        "3e13 01 00 0100 00 01 f5f4f3f2f1f0 0c00 0000 4800 00",
        "3e06 12 00 00 0100 00",
        "3e39 0d 01 0800 01 f5f4f3f2f1f0 01 01 00 00 ce 0000 00 000000000000 1f 02010611079bfd5bd672451e80d3424647af32814209fffaff47bc67741cca",
    ])
    func everyPrefixIsRejected(_ eventHex: String) throws {
        let full = hex(eventHex)
        #expect(!rejects(full, prefix: full.count - 2))  // the whole packet parses
        for n in 0..<(full.count - 2) {
            #expect(rejects(full, prefix: n), "prefix of \(n) octets accepted")
            // The packet layer itself notices the missing octets.
            let cut = Array(full[0..<(2 + n)])
            #expect(throws: DecodeError.truncated(needed: full.count, available: cut.count)) {
                _ = try HCIEventPacket(parsing: cut.span).code
            }
        }
    }
}
