import Testing
@testable import BluetoothHost

/// One callback may queue a connection attempt and a whole advertising-address change (10 commands);
/// none of them may be dropped, or scanning silently stays off.
@Suite("StackControl command capacity")
struct StackControlCapacityTests {
    @Test func tenCommandsInOneCallbackAreAllKept() {
        var control = StackControl()
        control.send(HCILESetAdvertisingEnable(false))
        for _ in 0..<7 { control.send(HCILESetAdvertisingEnable(true)) }
        control.startScanning(active: true)
        #expect(control.commands.count == 10)
        #expect(control.droppedCommands == 0)
        // The last one queued is Scan Enable (Core 5.4 Vol 4 Part E 7.8.11), the one that used to go.
        #expect(control.commands.opcode(at: 9) == HCILESetScanEnable.opcode)
    }

    @Test func beyondCapacityIsCountedAsDropped() {
        var control = StackControl()
        // LE Set Scan Enable is a 6-octet packet; the queue adds a 5-octet record header to each.
        let fits = StackControl.commandCapacity / 11
        for _ in 0..<(fits + 3) { control.send(HCILESetScanEnable(enable: false, filterDuplicates: false), tag: .gap) }
        #expect(control.commands.count == fits)
        #expect(control.droppedCommands == 3)
        // What was kept is intact: every record is a whole Scan Enable (disable) packet.
        #expect(array(control.commands.packet(at: fits - 1)!) == [0x01, 0x0C, 0x20, 0x02, 0x00, 0x00])
    }
}

private func array<let N: Int>(_ b: FixedBytes<N>) -> [UInt8] { (0..<b.count).map { b[$0] } }

@Suite("HCICommandQueue")
struct HCICommandQueueTests {
    static func bytes<let N: Int>(_ b: FixedBytes<N>?) -> [UInt8]? { b.map { array($0) } }

    @Test func commandsArePackedAndLeaveInOrder() {
        var queue = HCICommandQueue<64>()
        do { let ok = queue.append(HCIReset(), tag: .bringUp); #expect(ok) }                       // 4 + 5 octets
        do { let ok = queue.append(HCILESetScanEnable(enable: true, filterDuplicates: false), tag: .gap, timeout: 700); #expect(ok) }  // 6 + 5
        #expect(queue.count == 2 && queue.usedOctets == 20)
        // HCI Reset is opcode 0x0C03 with no parameters (Core 5.4 Vol 4 Part E 7.3.2).
        #expect(Self.bytes(queue.packet(at: 0)) == [0x01, 0x03, 0x0C, 0x00])
        #expect(queue.first?.opcode == HCIReset.opcode && queue.first?.tag == .bringUp && queue.first?.timeout == 0)
        queue.removeFirst()
        #expect(queue.count == 1 && queue.usedOctets == 11)
        #expect(queue.first?.opcode == HCILESetScanEnable.opcode && queue.first?.timeout == 700)
        let first: [UInt8]? = queue.withFirstPacket { span in (0..<span.count).map { span[$0] } }
        #expect(first == [0x01, 0x0C, 0x20, 0x02, 0x01, 0x00])
        queue.removeFirst()
        #expect(queue.isEmpty && queue.first == nil && queue.usedOctets == 0)
    }

    @Test func aCommandThatDoesNotFitIsRefusedWhole() {
        var queue = HCICommandQueue<20>()
        do { let ok = queue.append(HCIReset(), tag: .bringUp); #expect(ok) }                        // 9 octets
        do { let ok = queue.append(HCIReset(), tag: .bringUp); #expect(ok) }                        // 18
        do { let ok = queue.append(HCIReset(), tag: .bringUp); #expect(!ok) }                       // 27 > 20
        #expect(queue.count == 2 && queue.usedOctets == 18)
    }

    /// A parameterless command queued by opcode is the same record as the typed command's.
    @Test func aParameterlessCommandByOpcodeEqualsTheTypedOne() {
        var byType = HCICommandQueue<20>()
        var byOpcode = HCICommandQueue<20>()
        let typed = byType.append(ZephyrReadStaticAddresses(), tag: .bringUp, timeout: 300)
        let raw = byOpcode.append(parameterless: ZephyrReadStaticAddresses.opcode, tag: .bringUp, timeout: 300)
        #expect(typed && raw)
        #expect(Self.bytes(byOpcode.packet(at: 0)) == Self.bytes(byType.packet(at: 0)))
        #expect(Self.bytes(byOpcode.packet(at: 0)) == [0x01, 0x09, 0xFC, 0x00])
        #expect(byOpcode.first?.opcode == byType.first?.opcode && byOpcode.first?.timeout == 300)
        let second = byOpcode.append(parameterless: HCIReadBDADDR.opcode, tag: .bringUp)  // 18 octets
        let third = byOpcode.append(parameterless: HCIReadBDADDR.opcode, tag: .bringUp)   // 27 > 20
        #expect(second && !third)
        #expect(byOpcode.count == 2)
    }

    @Test func movingGivesTheDefaultTimeoutOnlyToCommandsWithoutOne() {
        var deferred = HCICommandQueue<64>()
        var flow = HCICommandQueue<16>()
        deferred.append(HCIReset(), tag: .application)
        deferred.append(HCIReset(), tag: .gap, timeout: 300)
        do { let ok = deferred.moveFirst(to: &flow, defaultTimeout: 2_000); #expect(ok) }
        do { let ok = deferred.moveFirst(to: &flow, defaultTimeout: 2_000); #expect(!ok) }         // no room: stays behind
        #expect(deferred.count == 1 && flow.count == 1)
        #expect(flow.first?.timeout == 2_000 && flow.first?.tag == .application)
        flow.removeAll()
        do { let ok = deferred.moveFirst(to: &flow, defaultTimeout: 2_000); #expect(ok) }
        #expect(flow.first?.timeout == 300 && deferred.isEmpty)
    }
}

/// A vendor command with more parameters than any queue takes (`HCICommandQueue.maximumParameters`).
private struct OversizedCommand: HCICommand {
    static var opcode: HCIOpcode { HCIOpcode(rawValue: 0xFC3F) }
    var parameters = 65
    func writeParameters<S: ByteSink>(to sink: inout S) { for i in 0..<parameters { sink.append(UInt8(truncatingIfNeeded: i)) } }
}

/// Commands are encoded once into an `HCICommandPacket` (the length octet filled in afterwards) and
/// queued by one non-generic path: the packet must be the command's own `writePacket`.
@Suite("HCICommandPacket")
struct HCICommandPacketTests {
    static func written<C: HCICommand>(_ command: C) -> [UInt8] {
        var sink = FixedBytes<80>()
        command.writePacket(to: &sink)
        return array(sink)
    }

    @Test func aPacketIsTheCommandsOwnEncoding() {
        var data = FixedBytes<31>()
        for i in 0..<31 { data.append(UInt8(i)) }
        let long = HCICommandPacket(HCILESetAdvertisingData(data: data))
        #expect(long.fits && long.opcode == HCILESetAdvertisingData.opcode)
        #expect(array(long.bytes) == Self.written(HCILESetAdvertisingData(data: data)))
        #expect(array(long.bytes)[3] == 32)  // Advertising_Data_Length and 31 octets (Core 5.4 Vol 4 Part E 7.8.7)
        let short = HCICommandPacket(HCIDisconnect(handle: 0x0040, reason: .remoteUserTerminated))
        #expect(array(short.bytes) == [0x01, 0x06, 0x04, 0x03, 0x40, 0x00, 0x13])
        #expect(array(HCICommandPacket(HCIReset()).bytes) == [0x01, 0x03, 0x0C, 0x00])
        // 64 parameters is the most a queue takes: it fits exactly.
        #expect(array(HCICommandPacket(OversizedCommand(parameters: 64)).bytes) == Self.written(OversizedCommand(parameters: 64)))
    }

    @Test func tooManyParametersAreRefusedNamingTheirLength() {
        #expect(!HCICommandPacket(OversizedCommand()).fits)
        var control = StackControl()
        control.send(OversizedCommand())
        #expect(control.droppedCommands == 1 && control.commands.isEmpty)
        var flow = HCICommandFlow<256>()
        #expect(throws: CommandQueueError.parametersTooLong(65)) { try flow.enqueue(OversizedCommand(), tag: .application) }
        #expect(flow.queuedCount == 0)
        var queue = HCICommandQueue<256>()
        #expect(!queue.append(OversizedCommand(), tag: .application) && queue.isEmpty)
    }
}

/// Two owners closing one link (a role's stop, then the runtime's releaseLinks) sent Disconnect twice,
/// and Zephyr's controller refused the second (0x0C): `herald sense` stopped with a link open.
@Suite("StackControl disconnect")
struct StackControlDisconnectTests {
    @Test func aLinkIsDisconnectedOnceUntilItClosesAndOpensAgain() {
        var control = StackControl()
        do { let opened = control.credits.open(handle: 0x0040); #expect(opened) }
        control.disconnect(handle: 0x0040)
        control.disconnect(handle: 0x0040, reason: HCIStatus(rawValue: 0x14))
        #expect(control.commands.count == 1)
        #expect(control.commands.opcode(at: 0) == HCIDisconnect.opcode)
        #expect(control.credits.isDisconnecting(handle: 0x0040))
        // Disconnection Complete, then a new link on the same handle: it can be closed again.
        control.credits.close(handle: 0x0040)
        do { let opened = control.credits.open(handle: 0x0040); #expect(opened) }
        #expect(!control.credits.isDisconnecting(handle: 0x0040))
        control.disconnect(handle: 0x0040)
        #expect(control.commands.count == 2)
    }

    @Test func aHandleNotOpenIsStillDisconnectedEveryTime() {
        // A link refused before it is tracked (LEStack: no room in the connection table).
        var control = StackControl()
        control.disconnect(handle: 0x0041)
        control.disconnect(handle: 0x0041)
        #expect(control.commands.count == 2)
    }

    @Test func aDisconnectWithNoRoomInTheQueueIsSentOnTheNextCall() {
        var control = StackControl()
        do { let opened = control.credits.open(handle: 0x0042); #expect(opened) }
        while control.droppedCommands == 0 { control.send(HCILESetScanEnable(enable: false, filterDuplicates: false), tag: .gap) }
        let queued = control.commands.count
        control.disconnect(handle: 0x0042)
        #expect(control.commands.count == queued && !control.credits.isDisconnecting(handle: 0x0042))
        control.commands.removeFirst()
        control.disconnect(handle: 0x0042)
        #expect(control.commands.opcode(at: queued - 1) == HCIDisconnect.opcode)
        #expect(control.credits.isDisconnecting(handle: 0x0042))
    }
}
