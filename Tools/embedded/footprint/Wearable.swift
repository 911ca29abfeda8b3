// Footprint image "wearable": everything a Herald wearable runs on four links — advertising, a GATT
// server with the payload and signal characteristics, scanning with advert classification,
// connecting to Herald devices and reading their payloads, signal reassembly, payload rotation with
// a resolvable private address. Linked with --gc-sections by `Tools/embedded-check --report`.
import BluetoothHost
import Herald

struct WearableApp: LEApplication {
    static let payloadID: UInt16 = 1
    var supplier = SimplePayloadSupplier(header: PayloadHeader(protocolAndVersion: 0x10, countryCode: 826, stateCode: 0))
    var advertisement: HeraldAdvertisement?
    var signal = InlineArray<4, SignalReassembler<512>>(repeating: SignalReassembler())
    /// Recently seen Herald devices: address and last RSSI (a fixed table, oldest replaced).
    var seen = InlineArray<16, (address: BDAddress, rssi: Int8, seenAt: UInt64)>(repeating: (BDAddress.zero, 0, 0))
    var next = 0
    var payloads = 0
    var prand: UInt32 = 0

    mutating func stackDidBecomeReady(_ info: ControllerInfo, now: UInt64, control: inout StackControl) {
        if let ad = advertisement {
            control.startAdvertising(AdvertisingIntent(parameters: HCILESetAdvertisingParameters(intervalMin: 0x00A0, intervalMax: 0x00A0),
                                                       data: ad.advertisingData, scanResponse: ad.scanResponseData))
        }
        control.startScanning(active: true)
        rotate(now: now, control: &control)
    }

    /// New period: new payload and a new resolvable private address (Core 5.4 Vol 6 Part B 1.3.2.2).
    mutating func rotate(now: UInt64, control: inout StackControl) {
        prand = ResolvablePrivateAddress.normalized(prand: prand &+ UInt32(truncatingIfNeeded: now) | 1)
        var irk = InlineArray<16, UInt8>(repeating: 0)
        for i in 0..<16 { irk[i] = boardSecretKey()[2048 + i] }
        control.send(ResolvablePrivateAddress.encryptCommand(irk: irk, prand: prand))
    }

    mutating func stackCommandDidComplete(tag: CommandTag, opcode: HCIOpcode, status: HCIStatus,
                                          returnParameters: Span<UInt8>, control: inout StackControl) {
        guard opcode == HCILEEncrypt.opcode, status == .success,
              let result = try? HCILEEncrypt.ReturnParameters(parsing: returnParameters) else { return }
        control.send(HCILESetRandomAddress(address: ResolvablePrivateAddress.address(prand: prand, result: result)))
    }

    mutating func stackDidReceive(advertisingReport r: borrowing AdvertisingReport, now: UInt64, control: inout StackControl) {
        guard let c = try? HeraldAdvertClassification(advertisingData: r.data), c.kind != .notHerald else { return }
        var slot = next
        for i in 0..<16 where seen[i].address == r.address.address { slot = i }
        if slot == next { next = (next + 1) % 16 }
        seen[slot] = (r.address.address, r.rssi ?? -127, now)
        if r.kind.isConnectable, control.connecting == nil, now &- seen[slot].seenAt < 1 {
            _ = control.connect(to: r.address, now: now)
        }
    }

    mutating func stackDidConnect(_ link: ConnectionSummary, now: UInt64, control: inout StackControl) {
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

    mutating func read<S: ByteSink>(id: UInt16, connection: Int, offset: Int, into sink: inout S) -> ATTErrorCode? {
        guard id == Self.payloadID else { return .readNotPermitted }
        let key = Span(_unsafeStart: boardSecretKey(), count: SimpleKeySchedule.secretKeySize)
        var payload = FixedBytes<64>()
        let written = (try? supplier.writePayload(at: Int64(bitPattern: boardMillis()), secretKey: key, to: &payload)) ?? false
        guard written else { return .unlikelyError }
        guard offset <= payload.count else { return .invalidOffset }
        sink.append(contentsOf: payload.span.extracting(offset..<payload.count))
        return nil
    }

    mutating func write(id: UInt16, connection: Int, offset: Int, value: Span<UInt8>) -> ATTErrorCode? {
        guard id == Self.payloadID + 1, connection < 4 else { return .writeNotPermitted }
        switch signal[connection].receive(value) {
        case .complete: signal[connection].reset(); return nil
        default: return nil
        }
    }
}

nonisolated(unsafe) var wearable: BluetoothStack<WearableApp, 4, 24, 160>? = nil

@_cdecl("main")
public func wearableMain() -> Int32 {
    let name: InlineArray<6, UInt8> = [0x68, 0x65, 0x72, 0x61, 0x6C, 0x64]  // "herald"
    guard var db = try? GATTDatabase<24, 160, 4>(deviceName: name.span) else { return 1 }
    guard (try? db.addPrimaryService(HeraldIdentifiers.serviceUUID)) != nil,
          (try? db.addCharacteristic(HeraldIdentifiers.payloadCharacteristicUUID, properties: .read, permissions: .read,
                                     value: .dynamic(id: WearableApp.payloadID))) != nil,
          (try? db.addCharacteristic(HeraldIdentifiers.androidSignalCharacteristicUUID,
                                     properties: GATTCharacteristicProperties.write | .notify, permissions: .write,
                                     value: .dynamic(id: WearableApp.payloadID + 1))) != nil else { return 2 }
    var app = WearableApp()
    app.advertisement = try? HeraldAdvertisement()
    var seed = InlineArray<6, UInt8>(repeating: 0)
    for i in 0..<6 { seed[i] = boardSecretKey()[2048 + i] }
    wearable = BluetoothStack(configuration: HostConfiguration(randomAddressSeed: seed), database: db, app: app)
    runForever(&wearable!)
}
