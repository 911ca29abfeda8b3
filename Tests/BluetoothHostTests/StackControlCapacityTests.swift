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
        #expect(control.commandCount == 10)
        #expect(control.droppedCommands == 0)
        // The last one queued is Scan Enable (Core 5.4 Vol 4 Part E 7.8.11), the one that used to go.
        #expect(control.commands[9]?.opcode == HCILESetScanEnable.opcode)
    }

    @Test func beyondCapacityIsCountedAsDropped() {
        var control = StackControl()
        for _ in 0..<(StackControl.commandCapacity + 3) { control.stopScanning() }
        #expect(control.commandCount == StackControl.commandCapacity)
        #expect(control.droppedCommands == 3)
    }
}
