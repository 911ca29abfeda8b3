// Footprint image "wearable": everything a Herald wearable runs on four links — the core's
// HeraldPeripheral (advertising with RPA rotation, the Herald GATT service, Simple payload from the
// secret key, signal reassembly) plus the central side: scanning, advert classification, a table of
// recently seen devices, connecting to Herald devices and reading their payloads.
// Linked with --gc-sections by `Tools/embedded-check --report`; never run.
import BluetoothHost
import Herald

struct WearableEvents: HeraldPeripheralDelegate {
    var messages = 0
    var lastRSSI: Int16 = 0
    mutating func heraldPeripheral(didReceivePayload payload: Span<UInt8>, from link: HeraldLink) { messages += 1 }
    mutating func heraldPeripheral(didMeasureRSSI rssi: Int16, from link: HeraldLink) { lastRSSI = rssi }
    mutating func heraldPeripheral(didShare payloads: SharedPayloadIterator, rssi: Int16, from link: HeraldLink) {
        var it = payloads
        while let p = try? it.next() { messages += p.count > 0 ? 1 : 0 }
    }
}

struct WearableApp: LEApplication {
    var peripheral: HeraldPeripheral<SimplePayloadSource, 4, 32, 128>
    var events = WearableEvents()
    /// Recently seen Herald devices: address, last RSSI, when (a fixed table, oldest replaced).
    var seen = InlineArray<16, (address: BDAddress, rssi: Int8, seenAt: UInt64)>(repeating: (BDAddress.zero, 0, 0))
    var next = 0
    var payloads = 0

    init(peripheral: HeraldPeripheral<SimplePayloadSource, 4, 32, 128>) { self.peripheral = peripheral }

    mutating func read<S: ByteSink>(id: UInt16, connection: Int, offset: Int, into sink: inout S) -> ATTErrorCode? {
        peripheral.read(id: id, connection: connection, offset: offset, into: &sink, delegate: &events)
    }
    mutating func write(id: UInt16, connection: Int, offset: Int, value: Span<UInt8>) -> ATTErrorCode? {
        peripheral.write(id: id, connection: connection, offset: offset, value: value, delegate: &events)
    }
    mutating func stackDidBecomeReady(_ info: ControllerInfo, now: UInt64, control: inout StackControl) {
        peripheral.stackDidBecomeReady(info, now: now, control: &control, delegate: &events)
        control.startScanning(active: true)
    }
    mutating func stackControllerDidFail(_ failure: ControllerFailure, now: UInt64, control: inout StackControl) {
        peripheral.stackControllerDidFail()
    }
    mutating func stackDidDisconnect(handle: UInt16, reason: HCIStatus, now: UInt64, control: inout StackControl) {
        peripheral.stackDidDisconnect(handle: handle, reason: reason, now: now, control: &control, delegate: &events)
    }
    mutating func stackCommandDidComplete(tag: CommandTag, opcode: HCIOpcode, status: HCIStatus,
                                          returnParameters: Span<UInt8>, control: inout StackControl) {
        _ = peripheral.stackCommandDidComplete(tag: tag, opcode: opcode, status: status, returnParameters: returnParameters,
                                               control: &control, delegate: &events)
    }
    var applicationDeadline: UInt64? { peripheral.deadline }
    mutating func stackTimerFired(now: UInt64, control: inout StackControl) {
        peripheral.stackTimerFired(now: now, control: &control, delegate: &events)
    }

    mutating func stackDidReceive(advertisingReport r: borrowing AdvertisingReport, now: UInt64, control: inout StackControl) {
        guard let c = try? HeraldAdvertClassification(advertisingData: r.data), c.kind != .notHerald else { return }
        var slot = next
        var known = false
        for i in 0..<16 where seen[i].address == r.address.address { slot = i; known = true }
        if !known { next = (next + 1) % 16 }
        let last = seen[slot].seenAt
        seen[slot] = (r.address.address, r.rssi ?? -127, now)
        // Connect to a device not read for a minute (Herald's payload update interval is longer).
        if r.kind.isConnectable, control.connecting == nil, !known || now &- last > 60_000 {
            _ = control.connect(to: r.address, now: now)
        }
    }

    mutating func stackDidConnect(_ link: ConnectionSummary, now: UInt64, control: inout StackControl) {
        peripheral.stackDidConnect(link, now: now, control: &control, delegate: &events)
        guard link.role == .central else { return }
        // Read the peer's payload characteristic (client role); discovery is elided here.
        var pdu = FixedBytes<8>()
        ATTReadRequest(handle: 0x000E).write(to: &pdu)
        _ = control.sendATT(handle: link.handle, pdu: pdu.span)
    }

    mutating func stackDidReceiveATT(handle: UInt16, pdu: Span<UInt8>, now: UInt64, control: inout StackControl) {
        guard pdu.count > 1, pdu[0] == 0x0B else { return }  // Read Response
        if (try? SimplePayload(parsing: pdu.extracting(1..<pdu.count))) != nil { payloads += 1 }
        control.disconnect(handle: handle)
    }
}

nonisolated(unsafe) var wearable: BluetoothStack<WearableApp, 4, 24, 192>? = nil

@_cdecl("main")
public func wearableMain() -> Int32 {
    let name: InlineArray<6, UInt8> = [0x68, 0x65, 0x72, 0x61, 0x6C, 0x64]  // "herald"
    let header = PayloadHeader(protocolAndVersion: 0x10, countryCode: 826, stateCode: 0)
    var irk = InlineArray<16, UInt8>(repeating: 0)
    for i in 0..<16 { irk[i] = boardIRK()[i] }
    guard let source = try? SimplePayloadSource(secretKey: Span(_unsafeStart: boardSecretKey(), count: 2048), header: header),
          var peripheral = try? HeraldPeripheral<SimplePayloadSource, 4, 32, 128>(
              source: source, advertising: HeraldAdvertisingConfiguration(irk: irk),
              clock: HeraldClock(unixMillisAtZero: Int64(bitPattern: boardMillis()))),
          var db = try? GATTDatabase<24, 192, 4>(deviceName: name.span),
          (try? peripheral.install(into: &db)) != nil
    else { return 1 }
    var seed = InlineArray<6, UInt8>(repeating: 0)
    for i in 0..<6 { seed[i] = irk[i] }
    wearable = BluetoothStack(configuration: HostConfiguration(randomAddressSeed: seed), database: db,
                              app: WearableApp(peripheral: peripheral))
    runForever(&wearable!)
}
