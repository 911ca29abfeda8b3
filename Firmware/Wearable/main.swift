// Herald wearable: the core's full sensor (`HeraldSensor`) on a microcontroller. Its central half
// scans, keeps the device database, connects to each Herald device and reads its payload with one
// GATT client per link (reported as `sensor didDetect` / `sensor didRead`); its peripheral half
// (`HeraldPeripheral`) advertises the Herald service from a resolvable private address rotating with
// the payload period and serves the Simple payload (fixed test secret). Log lines on UART1 follow
// the reference apps' SensorDelegate callbacks.
import BluetoothHost
import Herald

enum Wearable {
    static let header = PayloadHeader(protocolAndVersion: 0x10, countryCode: 826, stateCode: 4)
    /// No real-time clock on this board: time starts at a fixed Unix time at reset (ten days into the
    /// standard key epoch). A product sets it from the phone app or an RTC at provisioning.
    static let unixTimeAtReset: Int64 = KeyEpoch.standard.unixSeconds + 10 * KeyEpoch.standard.secondsPerDay + 3_600
    /// Test identity resolving key; a product generates one per device and keeps it in flash.
    static let irk: InlineArray<16, UInt8> = [0x57, 0x45, 0x41, 0x52, 0x41, 0x42, 0x4C, 0x45,
                                              0x2D, 0x49, 0x52, 0x4B, 0x2D, 0x30, 0x30, 0x31]
}

/// SensorDelegate events as log lines: the sensor's, and the peripheral half's a tester looks for
/// (`SensorDelegate` is a `HeraldPeripheralDelegate`).
struct SensorLog: SensorDelegate {
    /// Payloads served so far, for the `sensor didShare` lines.
    var shares = 0

    mutating func sensor(_ sensor: SensorType, didDetect target: TargetIdentifier) {
        Log.put("sensor didDetect target="); Log.put(target.value); Log.end()
    }
    mutating func sensor(_ sensor: SensorType, didRead payload: Span<UInt8>, fromTarget target: TargetIdentifier) {
        Log.put("sensor didRead payload="); Log.put(hex: payload); Log.put(" target="); Log.put(target.value); Log.end()
    }
    mutating func sensor(_ sensor: SensorType, didUpdateState state: SensorState) {
        guard sensor == .ble else { return }
        switch state {
        case .on: Log.line("sensor didUpdateState on")
        case .off: Log.line("sensor didUpdateState off")
        case .unavailable: Log.line("sensor didUpdateState unavailable")
        }
    }

    mutating func heraldPeripheral(didConnect link: HeraldLink) {
        Log.put("connected handle="); Log.put(link.handle); Log.put(link.role == .central ? " role=central" : " role=peripheral")
        Log.put(" peer="); Log.put(address: link.peer.address); Log.end()
    }
    mutating func heraldPeripheral(didDisconnect link: HeraldLink, reason: HCIStatus) {
        Log.put("disconnected handle="); Log.put(link.handle); Log.put(" reason="); Log.putHex(reason.rawValue); Log.end()
    }
    mutating func heraldPeripheral(didServePayload payload: Span<UInt8>, to link: HeraldLink) {
        shares += 1
        Log.put("sensor didShare payload="); Log.put(hex: payload); Log.put(" to="); Log.put(address: link.peer.address)
        Log.put(" count="); Log.put(shares); Log.end()
    }
    mutating func heraldPeripheral(didReceivePayload payload: Span<UInt8>, from link: HeraldLink) {
        Log.put("sensor didReceive payload="); Log.put(hex: payload); Log.put(" from="); Log.put(address: link.peer.address)
        Log.put(" via=signal"); Log.end()
    }
    mutating func heraldPeripheral(didChangeAddress address: BDAddress, unixMillis: Int64) {
        Log.put("sensor didChangeAddress address="); Log.put(address: address); Log.end()
    }
    mutating func heraldPeripheral(commandFailed opcode: HCIOpcode, status: HCIStatus) {
        Log.put("command failed opcode="); Log.put(opcode.rawValue); Log.put(" status="); Log.putHex(status.rawValue); Log.end()
    }
}

/// The budget's capacities (issue 18): 16 devices, 4 links in all, each of which may be a central
/// link of the sensor's or a peripheral link a phone made.
typealias WearableApp = HeraldSensor<SimplePayloadDataSupplier<StaticSecretKey>, SensorLog, 16, 4, WearablePeripheral>
/// No payload source of its own: the sensor's supplier is the one provider of our payload.
typealias WearablePeripheral = HeraldPeripheral<NoPayloadSource, WearableServer, 4, 32, 64>

/// What the wearable's GATT server offers. Herald centrals never use Read Multiple; iPhones write
/// long signal messages, so queued writes stay. No Database Hash: it lets an unbonded client trust
/// its cached copy of our database on a later connection (Core 5.4 Vol 3 Part G 2.5.2.1), but the
/// wearable's resolvable private address changes every payload period and no Herald peer bonds, so
/// a phone cannot tell it is us again for longer than a period anyway. Leaving it out saves the
/// AES-CMAC (1.4 KB). No Write Commands: no Herald characteristic offers Write Without Response.
enum WearableServer: HeraldServerOffer {
    static var serverFeatures: GATTServerFeatures {
        GATTServerFeatures(readMultiple: false, databaseHash: false, writeCommands: false)
    }
    /// Queued writes reach only the signal characteristic, whose messages the peripheral keeps up
    /// to 64 octets (`WearablePeripheral`'s signal capacity): a longer one gets Prepare Queue Full
    /// instead of being rejected after the execute. The standard queue (8 writes, 512 octets) was
    /// 0.6 KB a link.
    typealias PrepareQueue = ATTPreparedWrites<2, 64>
}
/// The GATT database is the constant table in gatt_table.c (flash, 16 attributes); RAM holds only
/// the per-link values, 12 octets for 4 links.
typealias WearableStack = BluetoothStack<WearableApp, 4, 0, 12>

@_silgen_name("wearable_secret_key") func wearable_secret_key() -> UnsafePointer<UInt8>

func halt(_ reason: StaticString) -> Never {
    Log.put("fatal: "); Log.line(reason)
    while true { Board.sleep() }
}

@_cdecl("firmware_main")
public func firmwareMain() -> Never {
    Board.start()
    // The stack is built in place in memory of its own: as a local here it was built in a
    // temporary and copied (two 21 KB values in this frame).
    guard let stack = Board.reserve(WearableStack.self) else { halt("no room for the stack") }
    Board.logReservation(WearableStack.self)
    makeStack(into: stack)
    // Construction's peak (temporaries moved from value to value) is reported apart from the main
    // loop's: the loop's is what a product must budget for beyond start-up.
    Log.put("memory start-up stack_peak="); Log.put(Board.stackPeak); Log.end()
    Board.restartStackMeasurement()
    // Sensing starts as soon as the controller is ready (bring-up begins in `runStack`).
    var output = UARTH4Output()
    stack.pointee.perform(now: 0, output: &output) { le in le.app.start(now: 0, control: &le.control) }
    runStack(&stack.pointee)
}

/// Builds the stack into `stack`, in its own frame, so the temporaries of construction (payload
/// source, database, application, each moved into the next) are gone before the main loop runs.
@inline(never)
func makeStack(into stack: UnsafeMutablePointer<WearableStack>) {
    Log.line("herald-wearable: boot")
    // The secret key stays in flash (secret.c); the supplier reads it in place, for both halves.
    let key = StaticSecretKey(unsafeStart: wearable_secret_key())
    let supplier = SimplePayloadDataSupplier(key: key, header: Wearable.header)
    let peripheral = makePeripheral()
    // A fixed seed for the static random address; a product derives it from the chip's unique ID.
    // Built part by part in its place (`BluetoothStack.initialize(_:...)`), the GATT database and
    // the application too.
    // The table is not checked here (`makeDatabase`): its test checks it where it is made.
    _ = WearableStack.initialize(stack, configuration: HostConfiguration(randomAddressSeed: [0x57, 0x45, 0x41, 0x52, 0x41, 0x42]),
                                         database: { makeDatabase(into: $0) }) { app in
        WearableApp.initialize(app, supplier: supplier, delegate: SensorLog(), peripheral: peripheral)
    }
}

/// The peripheral half, built in a frame of its own: its construction's temporaries (the advertiser,
/// the link table) are not kept in `makeStack`'s frame while the rest of the stack is built.
@inline(never)
func makePeripheral() -> WearablePeripheral {
    do {
        return try WearablePeripheral(
            source: NoPayloadSource(), advertising: HeraldAdvertisingConfiguration(intervalMilliseconds: 100, irk: Wearable.irk),
            clock: HeraldClock(unixMillisAtZero: Wearable.unixTimeAtReset * 1000))
    } catch {
        halt("advertisement does not fit")
    }
}

