import Testing
@testable import BluetoothHost

@Suite struct ACLCreditsTests {
    /// herald-phone-peripheral.btsnoop frames 18 and 20: Command Complete for Read Buffer Size and
    /// LE Read Buffer Size [v2] as Bumble's controller answers them (27-byte packets, 64 buffers).
    static let readBufferSizeComplete = aclHex("04 0e 0b 01 05 10 00 1b 00 00 40 00 00 00")
    static let leReadBufferSizeComplete = aclHex("04 0e 0a 01 60 20 00 1b 00 40 c0 03 40")

    @Test func configuresFromCapturedLEReadBufferSize() {
        // LE Read Buffer Size v2 return parameters after the status: LE ACL length u16, LE ACL count u8.
        let b = Self.leReadBufferSizeComplete
        let length = UInt16(b[7]) | UInt16(b[8]) << 8
        var credits = ACLCredits<8>()
        credits.configure(leDataLength: length, leTotalPackets: b[9])
        #expect(credits.maxDataLength == 27)
        #expect(credits.total == 64)
        #expect(credits.available == 64)
    }

    @Test func fallsBackToSharedBuffersWhenLEReportsZero() {
        // Read Buffer Size: ACL length u16 = 27, SCO length u8, total ACL packets u16 = 64.
        let b = Self.readBufferSizeComplete
        var credits = ACLCredits<8>()
        credits.configure(leDataLength: 0, leTotalPackets: 0,
                          sharedDataLength: UInt16(b[7]) | UInt16(b[8]) << 8,
                          sharedTotalPackets: UInt16(b[10]) | UInt16(b[11]) << 8)
        #expect(credits.maxDataLength == 27 && credits.total == 64)
        credits.configure(leDataLength: 251, leTotalPackets: 0, sharedDataLength: 100, sharedTotalPackets: 3)
        #expect(credits.maxDataLength == 100 && credits.total == 3)
    }

    @Test func consumeUntilEmptyThenCompletedPacketsReturnThem() {
        var credits = ACLCredits<4>()
        credits.configure(leDataLength: 27, leTotalPackets: 3)
        #expect(credits.consume(handle: 1) == .unknownHandle)
        #expect(credits.open(handle: 1) == true)
        #expect(credits.open(handle: 2) == true)
        #expect(credits.consume(handle: 1) == .granted)
        #expect(credits.consume(handle: 1) == .granted)
        #expect(credits.consume(handle: 2) == .granted)
        #expect(credits.consume(handle: 2) == .noCredits)
        #expect(credits.available == 0 && credits.inFlight == 3)
        #expect(credits.inFlight(handle: 1) == 2 && credits.inFlight(handle: 2) == 1)
        // herald-phone-peripheral.btsnoop: Number Of Completed Packets, 1 handle, handle 0x0001, 1 packet.
        let nocp = aclHex("04 13 05 01 01 00 01 00")
        let handle = UInt16(nocp[4]) | UInt16(nocp[5]) << 8
        let count = UInt16(nocp[6]) | UInt16(nocp[7]) << 8
        #expect(credits.completed(handle: handle, count: count) == 1)
        #expect(credits.available == 1 && credits.inFlight(handle: 1) == 1)
        #expect(credits.inFlight == credits.inFlightPerHandleSum)
    }

    @Test func bogusAndExcessReturnsNeverInflateTheTotal() {
        var credits = ACLCredits<4>()
        credits.configure(leDataLength: 27, leTotalPackets: 4)
        credits.open(handle: 7)
        _ = credits.consume(handle: 7)
        // Unknown handle: ignored and counted.
        #expect(credits.completed(handle: 0x0099, count: 5) == 0)
        #expect(credits.bogusReturns == 5)
        #expect(credits.available == 3)
        // More than in flight: clamped.
        #expect(credits.completed(handle: 7, count: 3) == 1)
        #expect(credits.overReturns == 2)
        #expect(credits.available == 4 && credits.available <= credits.total)
        #expect(credits.inFlight == 0)
    }

    @Test func disconnectionReturnsAllInFlightCreditsOfThatHandle() {
        var credits = ACLCredits<4>()
        credits.configure(leDataLength: 27, leTotalPackets: 5)
        credits.open(handle: 1)
        credits.open(handle: 2)
        for _ in 0..<3 { _ = credits.consume(handle: 1) }
        for _ in 0..<2 { _ = credits.consume(handle: 2) }
        #expect(credits.available == 0)
        // herald-phone-peripheral.btsnoop frame 62: Disconnection Complete, status 0, handle 0x0001, reason 0x13.
        let dc = aclHex("04 05 04 00 01 00 13")
        let handle = UInt16(dc[4]) | UInt16(dc[5]) << 8
        #expect(credits.close(handle: handle) == 3)
        #expect(credits.available == 3 && credits.inFlight == 2)
        #expect(credits.releasedOnDisconnect == 3)
        // A late completion for the closed handle is bogus, not a second return.
        #expect(credits.completed(handle: 1, count: 1) == 0)
        #expect(credits.bogusReturns == 1 && credits.available == 3)
        #expect(credits.close(handle: 1) == 0)
        #expect(credits.consume(handle: 1) == .unknownHandle)
        #expect(credits.inFlight == credits.inFlightPerHandleSum)
    }

    @Test func handleTableIsBounded() {
        var credits = ACLCredits<2>()
        #expect(credits.open(handle: 1) == true)
        #expect(credits.open(handle: 1) == false)  // duplicate
        #expect(credits.open(handle: 2) == true)
        #expect(credits.open(handle: 3) == false)  // full
        #expect(credits.openHandles == 2)
        credits.close(handle: 1)
        #expect(credits.open(handle: 3) == true)
        #expect(credits.isOpen(handle: 3) && !credits.isOpen(handle: 1))
    }

    @Test func wholeNumberOfCompletedPacketsEvent() throws {
        var credits = ACLCredits<4>()
        credits.configure(leDataLength: 27, leTotalPackets: 8)
        credits.open(handle: 1)
        credits.open(handle: 2)
        for _ in 0..<3 { _ = credits.consume(handle: 1) }
        for _ in 0..<2 { _ = credits.consume(handle: 2) }
        // Captured event (1 handle): parameters start after "04 13 05".
        let captured = aclHex("04 13 05 01 01 00 01 00")
        #expect(credits.apply(try HCINumberOfCompletedPacketsEvent(parsing: captured.span.extracting(3...))) == 1)
        // Three pairs: handle 1 × 2, handle 2 × 2, unknown handle 9 × 4.
        let three = aclHex("03 01 00 02 00 02 00 02 00 09 00 04 00")
        #expect(credits.apply(try HCINumberOfCompletedPacketsEvent(parsing: three.span)) == 4)
        #expect(credits.inFlight == 0 && credits.bogusReturns == 4 && credits.available == 8)
        // Num_Handles disagreeing with the bytes: the event does not parse, so nothing can be applied
        // (`HCIHost` counts it malformed: `LinkEventTests`).
        let short = aclHex("02 01 00 01 00")
        #expect(throws: DecodeError.badLength(field: "Num_Handles", declared: 2, limit: 1)) {
            _ = try HCINumberOfCompletedPacketsEvent(parsing: short.span)
        }
    }
}
