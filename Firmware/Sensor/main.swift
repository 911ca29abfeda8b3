// Herald sensor: the wearable built on the core's full sensor (`HeraldSensor`: scanning, the
// central scheduler, one GATT client per central link, the peripheral half), instead of the
// wearable image's own small central. SensorDelegate callbacks become log lines on UART1.
import BluetoothHost
import Herald

enum Wearable {
    static let header = PayloadHeader(protocolAndVersion: 0x10, countryCode: 826, stateCode: 4)
    /// No real-time clock on this board: time starts at a fixed Unix time at reset.
    static let unixTimeAtReset: Int64 = KeyEpoch.standard.unixSeconds + 10 * KeyEpoch.secondsPerDay + 3_600
    static let irk: InlineArray<16, UInt8> = [0x57, 0x45, 0x41, 0x52, 0x41, 0x42, 0x4C, 0x45,
                                              0x2D, 0x49, 0x52, 0x4B, 0x2D, 0x30, 0x30, 0x31]
}

/// SensorDelegate events as log lines. (The peripheral half reports into the sensor's core, not
/// here, so serving the payload is not logged.)
struct SensorLog: SensorDelegate {
    mutating func sensor(_ sensor: SensorType, didDetect target: TargetIdentifier) {
        Log.put("sensor didDetect target="); Log.put(target.value); Log.end()
    }
    mutating func sensor(_ sensor: SensorType, didRead payload: Span<UInt8>, fromTarget target: TargetIdentifier) {
        Log.put("sensor didRead payload="); Log.put(hex: payload); Log.put(" target="); Log.put(target.value); Log.end()
    }
    mutating func sensor(_ sensor: SensorType, didUpdateState state: SensorState) {
        switch state {
        case .on: Log.line("sensor didUpdateState on")
        case .off: Log.line("sensor didUpdateState off")
        case .unavailable: Log.line("sensor didUpdateState unavailable")
        }
    }
}

typealias SensorPeripheral = HeraldPeripheral<SimplePayloadSource<InlineSecretKey>, 2, 32, 64>
typealias SensorApp = HeraldSensor<SimplePayloadDataSupplier<InlineSecretKey>, SensorLog, 16, 1, SensorPeripheral>

func halt(_ reason: StaticString) -> Never {
    Log.put("fatal: "); Log.line(reason)
    while true { Board.sleep() }
}

@_cdecl("firmware_main")
public func firmwareMain() -> Never {
    Board.start()
    Log.line("herald-sensor: boot")
    var stack = makeStack()
    Log.put("memory start-up stack_peak="); Log.put(Board.stackPeak); Log.end()
    Board.restartStackMeasurement()
    var output = UARTH4Output()
    stack.perform(now: 0, output: &output) { le in le.app.start(now: 0, control: &le.control) }
    runStack(&stack)
}

@inline(never)
func makeStack() -> BluetoothStack<SensorApp, 2, 20, 192> {
    var secret = InlineArray<2048, UInt8>(repeating: 0)
    for i in 0..<2048 { secret[i] = UInt8(truncatingIfNeeded: i &* 7 &+ 3) }
    guard let source = try? SimplePayloadSource(secretKey: secret.span, header: Wearable.header),
          let supplier = SimplePayloadDataSupplier(header: Wearable.header, secretKey: secret.span,
                                                   unixSecondsAtZero: Wearable.unixTimeAtReset)
    else { halt("secret key invalid") }
    guard var peripheral = try? SensorPeripheral(
        source: source, advertising: HeraldAdvertisingConfiguration(intervalMilliseconds: 100, irk: Wearable.irk),
        clock: HeraldClock(unixMillisAtZero: Wearable.unixTimeAtReset * 1000))
    else { halt("advertisement does not fit") }
    let deviceName: StaticString = "Herald Sensor"
    guard var database = try? GATTDatabase<20, 192, 2>(deviceName: Span(_unsafeStart: deviceName.utf8Start,
                                                                         count: deviceName.utf8CodeUnitCount)),
          (try? peripheral.install(into: &database)) != nil
    else { halt("GATT database does not fit") }
    return BluetoothStack(configuration: HostConfiguration(randomAddressSeed: [0x53, 0x45, 0x4E, 0x53, 0x4F, 0x52]),
                          database: database,
                          app: SensorApp(supplier: supplier, delegate: SensorLog(), peripheral: peripheral))
}
