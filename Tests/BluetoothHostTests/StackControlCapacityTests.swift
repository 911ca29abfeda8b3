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
