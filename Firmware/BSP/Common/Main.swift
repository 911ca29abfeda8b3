// The QEMU boards' entry: builds the role's stack (Beacon/ or Wearable/: `RoleStack`, `makeStack`,
// `startRole`) in memory taken from the stack region, then runs the main loop. The Zephyr port has
// its own entry (Firmware/Zephyr/swift/Main.swift) around the same role files.
import BluetoothHost
import Herald

func halt(_ reason: StaticString) -> Never {
    Log.put("fatal: "); Log.line(reason)
    while true { Board.sleep() }
}

@_cdecl("firmware_main")
public func firmwareMain() -> Never {
    Board.start()
    // The stack is built in place in memory of its own: as a local here it was built in a
    // temporary and copied (two copies of the value in this frame).
    guard let stack = Board.reserve(RoleStack.self) else { halt("no room for the stack") }
    Board.logReservation(RoleStack.self)
    makeStack(into: stack)
    // Construction's peak (temporaries moved from value to value) is reported apart from the main
    // loop's: the loop's is what a product must budget for beyond start-up.
    Log.put("memory start-up stack_peak="); Log.put(Board.stackPeak); Log.end()
    Board.restartStackMeasurement()
    var output = UARTH4Output()
    startRole(&stack.pointee, output: &output)
    runStack(&stack.pointee)
}
