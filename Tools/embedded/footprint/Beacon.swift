// Footprint image "beacon": a Herald beacon that advertises, serves its payload over GATT on one
// link and rotates the payload's contact identifier. Linked with --gc-sections by
// `Tools/embedded-check --report`; never run.
import BluetoothHost
import Herald

struct BeaconApp: LEApplication {
    static let payloadID: UInt16 = 1
    var supplier = SimplePayloadSupplier(header: PayloadHeader(protocolAndVersion: 0x10, countryCode: 826, stateCode: 0))
    var advertisement: HeraldAdvertisement?

    mutating func stackDidBecomeReady(_ info: ControllerInfo, now: UInt64, control: inout StackControl) {
        guard let ad = advertisement else { return }
        control.startAdvertising(AdvertisingIntent(parameters: HCILESetAdvertisingParameters(intervalMin: 0x00A0, intervalMax: 0x00A0),
                                                   data: ad.advertisingData, scanResponse: ad.scanResponseData))
    }

    /// Serves the Herald payload (the payload characteristic is dynamic).
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
}

nonisolated(unsafe) var beacon: BluetoothStack<BeaconApp, 1, 16, 96>? = nil

@_cdecl("main")
public func beaconMain() -> Int32 {
    let name: InlineArray<6, UInt8> = [0x68, 0x65, 0x72, 0x61, 0x6C, 0x64]  // "herald"
    guard var db = try? GATTDatabase<16, 96, 1>(deviceName: name.span) else { return 1 }
    guard (try? db.addPrimaryService(HeraldIdentifiers.serviceUUID)) != nil,
          (try? db.addCharacteristic(HeraldIdentifiers.payloadCharacteristicUUID, properties: .read, permissions: .read,
                                     value: .dynamic(id: BeaconApp.payloadID))) != nil else { return 2 }
    var app = BeaconApp()
    app.advertisement = try? HeraldAdvertisement()
    var seed = InlineArray<6, UInt8>(repeating: 0)
    for i in 0..<6 { seed[i] = boardSecretKey()[2048 + i] }
    beacon = BluetoothStack(configuration: HostConfiguration(randomAddressSeed: seed), database: db, app: app)
    runForever(&beacon!)
}
