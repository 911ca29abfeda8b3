// Herald wearable: the core's `HeraldPeripheral` advertises the Herald service from a resolvable
// private address rotating with the payload period and serves the Simple payload (fixed test
// secret); next to it, the central side scans, reports Herald devices (sensor didDetect) and reads
// each one's payload with the core's GATT client (sensor didRead, PhoneReader.swift). Log lines on
// UART1 follow the reference apps' SensorDelegate callbacks.
import BluetoothHost
import Herald

enum Wearable {
    static let header = PayloadHeader(protocolAndVersion: 0x10, countryCode: 826, stateCode: 4)
    /// No real-time clock on this board: time starts at a fixed Unix time at reset (ten days into the
    /// standard key epoch). A product sets it from the phone app or an RTC at provisioning.
    static let unixTimeAtReset: Int64 = KeyEpoch.standard.unixSeconds + 10 * KeyEpoch.secondsPerDay + 3_600
    static let name: StaticString = "Herald Wearable"
    /// Test identity resolving key; a product generates one per device and keeps it in flash.
    static let irk: InlineArray<16, UInt8> = [0x57, 0x45, 0x41, 0x52, 0x41, 0x42, 0x4C, 0x45,
                                              0x2D, 0x49, 0x52, 0x4B, 0x2D, 0x30, 0x30, 0x31]
}

typealias WearablePeripheral = HeraldPeripheral<SimplePayloadSource<InlineSecretKey>, 2, 32, 64>

/// What the peripheral reports, as log lines.
struct WearableLog: HeraldPeripheralDelegate {
    var shares = 0

    mutating func heraldPeripheral(didServePayload payload: Span<UInt8>, to link: HeraldLink) {
        shares += 1
        Log.put("sensor didShare payload="); Log.put(hex: payload); Log.put(" to="); Log.put(address: link.peer.address)
        Log.put(" count="); Log.put(shares); Log.end()
    }

    mutating func heraldPeripheral(didReceivePayload payload: Span<UInt8>, from link: HeraldLink) {
        Log.put("sensor didRead payload="); Log.put(hex: payload); Log.put(" from="); Log.put(address: link.peer.address)
        Log.put(" via=signal"); Log.end()
    }

    mutating func heraldPeripheral(didMeasureRSSI rssi: Int16, from link: HeraldLink) {
        Log.put("sensor didMeasure rssi=-"); Log.put(UInt32(truncatingIfNeeded: -Int(rssi))); Log.put(" from=")
        Log.put(address: link.peer.address); Log.end()
    }

    mutating func heraldPeripheral(didChangeAddress address: BDAddress, unixMillis: Int64) {
        Log.put("sensor didChangeAddress address="); Log.put(address: address); Log.end()
    }

    mutating func heraldPeripheral(commandFailed opcode: HCIOpcode, status: HCIStatus) {
        Log.put("command failed opcode="); Log.put(opcode.rawValue); Log.put(" status="); Log.putHex(status.rawValue); Log.end()
    }
}

struct HeraldWearable: LEApplication {
    var peripheral: WearablePeripheral
    var log = WearableLog()
    var reader = PhoneReader()
    var links = 0
    /// Addresses already reported (a ring: scanning repeats every advertisement).
    var seen = InlineArray<8, BDAddress>(repeating: .zero)
    var seenNext = 0

    mutating func read<S: ByteSink>(id: UInt16, connection: Int, offset: Int, into sink: inout S) -> ATTErrorCode? {
        peripheral.read(id: id, connection: connection, offset: offset, into: &sink, delegate: &log)
    }

    mutating func write(id: UInt16, connection: Int, offset: Int, value: Span<UInt8>) -> ATTErrorCode? {
        peripheral.write(id: id, connection: connection, offset: offset, value: value, delegate: &log)
    }

    var applicationDeadline: UInt64? {
        switch (peripheral.deadline, reader.deadline) {
        case let (a?, b?): return min(a, b)
        case let (a?, nil): return a
        case let (nil, b?): return b
        case (nil, nil): return nil
        }
    }

    mutating func stackTimerFired(now: UInt64, control: inout StackControl) {
        if let d = peripheral.deadline, now >= d { peripheral.stackTimerFired(now: now, control: &control, delegate: &log) }
        reader.timerFired(now: now, connectedLinks: links, control: &control)
    }

    mutating func stackDidBecomeReady(_ info: ControllerInfo, now: UInt64, control: inout StackControl) {
        Log.put("sensor didUpdateState ready t="); Log.put(now); Log.put("ms identity="); Log.put(address: info.address); Log.end()
        links = 0
        peripheral.stackDidBecomeReady(info, now: now, control: &control, delegate: &log)
        control.startScanning(active: false)
    }

    mutating func stackControllerDidFail(_ failure: ControllerFailure, now: UInt64, control: inout StackControl) {
        Log.line("sensor didUpdateState off (controller failed)")
        peripheral.stackControllerDidFail()
    }

    mutating func stackCommandDidComplete(tag: CommandTag, opcode: HCIOpcode, status: HCIStatus,
                                          returnParameters: Span<UInt8>, control: inout StackControl) {
        _ = peripheral.stackCommandDidComplete(tag: tag, opcode: opcode, status: status, returnParameters: returnParameters,
                                               control: &control, delegate: &log)
    }

    mutating func stackDidReceive(advertisingReport report: borrowing AdvertisingReport, now: UInt64, control: inout StackControl) {
        guard let c = try? HeraldAdvertClassification(advertisingData: report.data), c.kind == .herald else { return }
        let address = report.address.address
        reader.detected(report.address, now: now)
        for i in 0..<8 where seen[i] == address { return }
        seen[seenNext] = address
        seenNext = (seenNext + 1) % 8
        Log.put("sensor didDetect address="); Log.put(address: address); Log.put(" rssi=-")
        Log.put(UInt32(truncatingIfNeeded: -Int(report.rssi ?? 0))); Log.end()
    }

    mutating func stackDidReceiveATT(handle: UInt16, pdu: Span<UInt8>, now: UInt64, control: inout StackControl) {
        reader.received(handle: handle, pdu: pdu, now: now, control: &control)
    }

    mutating func stackDidConnect(_ link: ConnectionSummary, now: UInt64, control: inout StackControl) {
        links += 1
        Log.put("connected handle="); Log.put(link.handle); Log.put(" peer="); Log.put(address: link.peer.address); Log.end()
        // Every link goes to the peripheral (it mirrors the GATT slots), ours as central to the reader too.
        peripheral.stackDidConnect(link, now: now, control: &control, delegate: &log)
        reader.connected(link, now: now, control: &control)
    }

    mutating func stackDidFailToConnect(to peer: DeviceAddress, status: HCIStatus, now: UInt64, control: inout StackControl) {
        Log.put("connect failed status="); Log.putHex(status.rawValue); Log.end()
        reader.failedToConnect()
        control.startScanning(active: false)
    }

    mutating func stackDidDisconnect(handle: UInt16, reason: HCIStatus, now: UInt64, control: inout StackControl) {
        links = max(0, links - 1)
        Log.put("disconnected handle="); Log.put(handle); Log.put(" reason="); Log.putHex(reason.rawValue); Log.end()
        peripheral.stackDidDisconnect(handle: handle, reason: reason, now: now, control: &control, delegate: &log)
        if reader.disconnected(handle: handle) { control.startScanning(active: false) }
    }
}

func halt(_ reason: StaticString) -> Never {
    Log.put("fatal: "); Log.line(reason)
    while true { Board.sleep() }
}

@_cdecl("firmware_main")
public func firmwareMain() -> Never {
    Board.start()
    var stack = makeStack()
    // Construction's peak (temporaries moved from value to value) is reported apart from the main
    // loop's: the loop's is what a product must budget for beyond start-up.
    Log.put("memory start-up stack_peak="); Log.put(Board.stackPeak); Log.end()
    Board.restartStackMeasurement()
    runStack(&stack)
}

/// Builds the stack in its own frame, so the temporaries of construction (payload source,
/// database, application, each moved into the next) are gone before the main loop runs.
@inline(never)
func makeStack() -> BluetoothStack<HeraldWearable, 2, 20, 192> {
    Log.line("herald-wearable: boot")
    // The 2048-byte secret key the Simple payload's key schedule starts from: a fixed test secret
    // here; a product generates it once from a TRNG and keeps it in flash.
    var secret = InlineArray<2048, UInt8>(repeating: 0)
    for i in 0..<2048 { secret[i] = UInt8(truncatingIfNeeded: i &* 7 &+ 3) }
    guard let source = try? SimplePayloadSource(secretKey: secret.span, header: Wearable.header) else {
        halt("secret key invalid")
    }
    guard var peripheral = try? WearablePeripheral(
        source: source, advertising: HeraldAdvertisingConfiguration(intervalMilliseconds: 100, irk: Wearable.irk),
        clock: HeraldClock(unixMillisAtZero: Wearable.unixTimeAtReset * 1000))
    else { halt("advertisement does not fit") }
    let deviceName: StaticString = "Herald Wearable"
    guard var database = try? GATTDatabase<20, 192, 2>(deviceName: Span(_unsafeStart: deviceName.utf8Start,
                                                                         count: deviceName.utf8CodeUnitCount)),
          (try? peripheral.install(into: &database)) != nil
    else { halt("GATT database does not fit") }
    return BluetoothStack(configuration: HostConfiguration(randomAddressSeed: [0x57, 0x45, 0x41, 0x52, 0x41, 0x42]),
                          database: database, app: HeraldWearable(peripheral: peripheral))
}
