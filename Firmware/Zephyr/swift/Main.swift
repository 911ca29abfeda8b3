// The Zephyr port's host: the C glue (src/main.c) waits on the controller's queue until the next
// deadline and calls these three, which drive the role's `BluetoothStack` (Wearable/ or Beacon/):
// H:4 packets in (`receive`), time in (`tick`), H:4 packets out (`ChipH4Output`), and back the next
// deadline, the only thing the glue needs to know to wait.
import BluetoothHost
import Herald

/// H:4 packets to the controller through the glue (bt_buf + bt_send).
struct ChipH4Output: H4Output {
    mutating func send(h4 packet: Span<UInt8>) {
        packet.withUnsafeBufferPointer { p in _ = chip_send(p.baseAddress!, p.count) }
    }
}

/// The stack, in `chip_reserve`'s static memory, once `host_start` built it.
nonisolated(unsafe) var hostStack: UnsafeMutablePointer<RoleStack>? = nil
/// When a failed controller is brought up again (stack time), or 0 for no restart pending.
nonisolated(unsafe) var restartAt: UInt64 = 0
/// How long to wait before bringing a failed controller up again: firmware has no one to do it by hand.
let restartDelay: UInt64 = 1_000

@_cdecl("host_start")
public func hostStart(_ now: Int64) -> Int64 {
    Log.put("memory reserved stack_value="); Log.put(MemoryLayout<RoleStack>.size)
    Log.put(" capacity="); Log.put(UInt32(truncatingIfNeeded: chip_reserve_capacity())); Log.end()
    guard MemoryLayout<RoleStack>.alignment <= 8,
          let raw = chip_reserve(MemoryLayout<RoleStack>.size) else { halt("no room for the stack (FIRMWARE_HOST_MEMORY)") }
    let stack = raw.bindMemory(to: RoleStack.self, capacity: 1)
    makeStack(into: stack)
    hostStack = stack
    let time = UInt64(bitPattern: now)
    EventTime.now = time
    var output = ChipH4Output()
    startRole(&stack.pointee, output: &output)
    startStack(stack, now: time, output: &output)
    return deadline(stack, now: time)
}

@_cdecl("host_receive")
public func hostReceive(_ h4: UnsafePointer<UInt8>, _ count: Int, _ now: Int64) -> Int64 {
    guard let stack = hostStack else { return -1 }
    let time = UInt64(bitPattern: now)
    EventTime.now = time
    var output = ChipH4Output()
    receive(UnsafeBufferPointer(start: h4, count: count).span, into: stack, now: time, output: &output)
    // A stream of packets must not starve the timers.
    if let d = stack.pointee.nextDeadline, d <= time { tick(stack, now: time, output: &output) }
    return deadline(stack, now: time)
}

@_cdecl("host_tick")
public func hostTick(_ now: Int64) -> Int64 {
    guard let stack = hostStack else { return -1 }
    let time = UInt64(bitPattern: now)
    EventTime.now = time
    var output = ChipH4Output()
    if restartAt != 0, time >= restartAt {
        restartAt = 0
        Log.line("controller: restarting bring-up")
        startStack(stack, now: time, output: &output)
    }
    tick(stack, now: time, output: &output)
    return deadline(stack, now: time)
}

/// The next deadline: the stack's, or a pending restart of a failed controller (which it schedules).
func deadline(_ stack: UnsafeMutablePointer<RoleStack>, now: UInt64) -> Int64 {
    if case .failed = stack.pointee.hci.state, restartAt == 0 { restartAt = now &+ restartDelay }
    var next = stack.pointee.nextDeadline
    if restartAt != 0, next.map({ restartAt < $0 }) ?? true { next = restartAt }
    guard let next else { return -1 }
    return Int64(bitPattern: next)
}

// Each entry into the stack out of line, in a frame of its own (as the QEMU main loop does).

@inline(never)
func receive(_ bytes: Span<UInt8>, into stack: UnsafeMutablePointer<RoleStack>, now: UInt64, output: inout ChipH4Output) {
    stack.pointee.receive(bytes, now: now, output: &output)
}

@inline(never)
func tick(_ stack: UnsafeMutablePointer<RoleStack>, now: UInt64, output: inout ChipH4Output) {
    stack.pointee.tick(now: now, output: &output)
}

@inline(never)
func startStack(_ stack: UnsafeMutablePointer<RoleStack>, now: UInt64, output: inout ChipH4Output) {
    stack.pointee.start(now: now, output: &output)
}
