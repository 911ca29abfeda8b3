// Footprint image "beacon": a Herald venue beacon — the core's HeraldPeripheralApplication with a
// fixed beacon payload (Herald beacon payload, protocol 0x30), advertising and serving it over GATT
// on one link under the controller's identity address (a venue has nothing to hide; as
// Firmware/Beacon). Linked with --gc-sections by `Tools/embedded-check --report`; never run.
import BluetoothHost
import Herald

/// Firmware's view of the peripheral's events: counters only.
struct BeaconEvents: HeraldPeripheralDelegate {
    var reads = 0
    mutating func heraldPeripheral(didServePayload payload: Span<UInt8>, to link: HeraldLink) { reads &+= 1 }
    /// A venue has nothing to hide: the identity address, no rotation (as Firmware/Beacon).
    static var rotatesAddress: Bool { false }
    /// Nor does it collect its visitors' payloads: signal writes are accepted and dropped unread.
    static var receivesSignals: Bool { false }
}

/// A venue beacon serves discovery, its payload and short signal writes: nothing optional.
enum BeaconServer: HeraldServerOffer {
    static var serverFeatures: GATTServerFeatures { .mandatory }
}

typealias BeaconApp = HeraldPeripheralApplication<FixedPayloadSource<32>, BeaconEvents, 1, 32, 64, BeaconServer>
nonisolated(unsafe) var beacon: BluetoothStack<BeaconApp, 1, 24, 128>? = nil

@_cdecl("main")
public func beaconMain() -> Int32 {
    let name: InlineArray<6, UInt8> = [0x68, 0x65, 0x72, 0x61, 0x6C, 0x64]  // "herald"
    let header = PayloadHeader(protocolAndVersion: 0x30, countryCode: 826, stateCode: 0)
    guard let source = try? FixedPayloadSource<32>.venueBeacon(header: header, locationCode: 0x0102_0304),
          var peripheral = try? HeraldPeripheral<FixedPayloadSource<32>, BeaconServer, 1, 32, 64>(
              source: source, advertising: HeraldAdvertisingConfiguration(),
              clock: HeraldClock(unixMillisAtZero: Int64(bitPattern: boardMillis()))),
          var db = try? GATTDatabase<24, 128, 1>(deviceName: name.span, features: BeaconServer.serverFeatures),
          (try? peripheral.install(into: &db)) != nil
    else { return 1 }
    // The static random address's seed, from the chip (nRF52: FICR DEVICEADDR).
    var seed = InlineArray<6, UInt8>(repeating: 0)
    let idInFlash = boardDeviceID()
    for i in 0..<6 { seed[i] = idInFlash[i] }
    beacon = BluetoothStack(configuration: HostConfiguration(randomAddressSeed: seed), database: db,
                            app: BeaconApp(peripheral: peripheral, delegate: BeaconEvents()))
    runForever(&beacon!)
}
