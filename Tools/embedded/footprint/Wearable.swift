// Footprint image "wearable": everything a Herald wearable runs, on four links — the core's
// HeraldSensor: scanning with the central scheduler and a 16-device database (the peers a wearer
// meets within the database's eviction horizon; the least recently updated is evicted beyond that), a GATT client per central
// link, and the peripheral half (HeraldPeripheral: advertising with RPA rotation, the Herald GATT
// service, Simple payload from the secret key, signal reassembly).
// Linked with --gc-sections by `Tools/embedded-check --report`; never run.
import BluetoothHost
import Herald

/// Firmware's view of the sensor's events: counters only.
struct WearableEvents: SensorDelegate {
    var detected = 0
    var measurements = 0
    var payloads = 0
    mutating func sensor(_ sensor: SensorType, didDetect target: TargetIdentifier) { detected += 1 }
    mutating func sensor(_ sensor: SensorType, didMeasure proximity: Proximity, fromTarget target: TargetIdentifier) {
        measurements += 1
    }
    mutating func sensor(_ sensor: SensorType, didRead payload: Span<UInt8>, fromTarget target: TargetIdentifier) {
        payloads += 1
    }
}

/// What the wearable's server offers.
enum WearableServer: HeraldServerOffer {
    /// Herald centrals never use Read Multiple; iPhones write long signal messages, so queued writes
    /// stay. No Database Hash: it lets an unbonded client trust its cached copy of our database on a
    /// later connection (Core 5.4 Vol 3 Part G 2.5.2.1), but the wearable's resolvable private
    /// address changes every payload period and no Herald peer bonds, so a phone cannot tell it is
    /// us again for longer than a period anyway. Leaving it out saves the AES-CMAC (1.4 KB).
    static var serverFeatures: GATTServerFeatures { GATTServerFeatures(readMultiple: false, databaseHash: false) }
}

// The secret key stays in flash (StaticSecretKey): the supplier reads it in place, for both halves.
typealias WearablePeripheral = HeraldPeripheral<NoPayloadSource, WearableServer, 4, 32, 128>
typealias WearableApp = HeraldSensor<SimplePayloadDataSupplier<StaticSecretKey>, WearableEvents, 16, 4, WearablePeripheral>
nonisolated(unsafe) var wearable: BluetoothStack<WearableApp, 4, 24, 192>? = nil

@_cdecl("main")
public func wearableMain() -> Int32 {
    let name: InlineArray<6, UInt8> = [0x68, 0x65, 0x72, 0x61, 0x6C, 0x64]  // "herald"
    let header = PayloadHeader(protocolAndVersion: 0x10, countryCode: 826, stateCode: 0)
    let key = StaticSecretKey(unsafeStart: boardSecretKey())
    var irk = InlineArray<16, UInt8>(repeating: 0)
    let irkInFlash = boardIRK()
    for i in 0..<16 { irk[i] = irkInFlash[i] }
    let supplier = SimplePayloadDataSupplier(key: key, header: header)
    guard var peripheral = try? WearablePeripheral(
              source: NoPayloadSource(), advertising: HeraldAdvertisingConfiguration(irk: irk),
              clock: HeraldClock(unixMillisAtZero: Int64(bitPattern: boardMillis()))),
          var db = try? GATTDatabase<24, 192, 4>(deviceName: name.span, features: WearableServer.serverFeatures),
          (try? peripheral.install(into: &db)) != nil
    else { return 1 }
    var seed = InlineArray<6, UInt8>(repeating: 0)
    for i in 0..<6 { seed[i] = irk[i] }
    wearable = BluetoothStack(configuration: HostConfiguration(randomAddressSeed: seed), database: db,
                              app: WearableApp(supplier: supplier, delegate: WearableEvents(), peripheral: peripheral))
    wearable!.perform(now: boardMillis(), output: &boardOutput) { le in le.app.start(now: boardMillis(), control: &le.control) }
    runForever(&wearable!)
}
