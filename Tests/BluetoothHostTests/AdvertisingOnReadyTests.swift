import Testing
@testable import BluetoothHost

/// A peripheral that starts advertising as soon as the stack is ready, as firmware images do.
struct AdvertiseOnReadyApp: LEApplication {
    mutating func stackDidBecomeReady(_ info: ControllerInfo, now: UInt64, control: inout StackControl) {
        var data = FixedBytes<31>()
        data.append(2); data.append(0x01); data.append(0x06)
        var scan = FixedBytes<31>()
        scan.append(2); scan.append(0x09); scan.append(0x41)
        control.startAdvertising(AdvertisingIntent(parameters: HCILESetAdvertisingParameters(), data: data, scanResponse: scan))
    }
}

/// Brings a stack up against the scripted controller, recording every command opcode and parameters.
private func bringUp(restarts: Int) throws -> (commands: [[UInt8]], dropped: Int) {
    let db = try GATTDatabase<16, 128, 1>(deviceName: [0x61].span)
    var stack = BluetoothStack(configuration: HostConfiguration(randomAddressSeed: [1, 2, 3, 4, 5, 6]),
                               database: db, app: AdvertiseOnReadyApp())
    var controller = FakeController()
    var wire = WireLog()
    var sent: [[UInt8]] = []
    for _ in 0...restarts {
        stack.start(now: 0, output: &wire)
        var guardCount = 0
        while !wire.packets.isEmpty, guardCount < 200 {
            guardCount += 1
            let packet = wire.packets.removeFirst()
            sent.append(packet)
            let reply = controller.answer(packet)
            if !reply.isEmpty { stack.receive(reply.span, now: 0, output: &wire) }
        }
    }
    return (sent, stack.le.control.droppedCommands)
}

@Suite struct AdvertisingOnReadyTests {
    /// LE Set Advertising Enable with `enable` (Core 5.4 Vol 4 Part E 7.8.9).
    static func isEnable(_ p: [UInt8], _ enable: UInt8) -> Bool { p == [0x01, 0x0A, 0x20, 0x01, enable] }

    @Test func advertisingStartedOnReadyIsSentOnceAndCompletely() throws {
        let (sent, dropped) = try bringUp(restarts: 0)
        #expect(dropped == 0)
        #expect(sent.filter { Self.isEnable($0, 1) }.count == 1)
        // The scan response (opcode 0x2009) went out and the enable is the last advertising command.
        #expect(sent.contains { $0.count > 3 && $0[1] == 0x09 && $0[2] == 0x20 })
        #expect(sent.last.map { Self.isEnable($0, 1) } == true)
    }

    @Test func advertisingIsResumedOnceAfterARestart() throws {
        let (sent, dropped) = try bringUp(restarts: 1)
        #expect(dropped == 0)
        // One enable per bring-up, none doubled.
        #expect(sent.filter { Self.isEnable($0, 1) }.count == 2)
    }
}
