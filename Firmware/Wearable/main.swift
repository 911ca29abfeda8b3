// Herald wearable: the core's full sensor (`HeraldSensor`) on a microcontroller. Its central half
// scans, keeps the device database, connects to each Herald device and reads its payload with one
// GATT client per link (reported as `sensor didDetect` / `sensor didRead`); its peripheral half
// (`HeraldPeripheral`) advertises the Herald service from a resolvable private address rotating with
// the payload period and serves the Simple payload (fixed test secret). Its events are JSON lines
// (Common/EventLog.swift), as `herald wearable --json` prints them.
// This file is the role: the port (BSP/Common/Main.swift for the QEMU boards, Zephyr/swift/ for
// Zephyr) builds `RoleStack` with `makeStack`, calls `startRole` and runs it.
import BluetoothHost
import Herald

@_silgen_name("firmware_epoch") func firmwareEpoch() -> Int64
@_silgen_name("firmware_payload_period") func firmwarePayloadPeriod() -> Int32

enum Wearable {
    static let header = PayloadHeader(protocolAndVersion: 0x10, countryCode: 826, stateCode: 4)
    /// No real-time clock on the board: time starts at a fixed Unix time at reset, a build option
    /// (Common/options.c: `FIRMWARE_EPOCH`, by default ten days and an hour into the standard key
    /// epoch). A product sets it from the phone app or an RTC at provisioning.
    static var unixTimeAtReset: Int64 { firmwareUnixTimeAtReset() }
    /// The key schedule: `FIRMWARE_EPOCH` and `FIRMWARE_PAYLOAD_PERIOD` (default the standard epoch,
    /// 360 s); Tools/firmware refuses a period outside 10...360.
    static var epoch: KeyEpoch {
        KeyEpoch(unixSeconds: firmwareEpoch(), secondsPerPeriod: Int64(widening: firmwarePayloadPeriod())) ?? .standard
    }
    /// Test identity resolving key, in flash beside the secret key (secret.c); a product generates
    /// one per device and keeps it in flash.
    static var irk: InlineArray<16, UInt8> {
        let p = wearable_irk()
        var k = InlineArray<16, UInt8>(repeating: 0)
        for i in 0..<16 { k[i] = p[i] }
        return k
    }
}

/// SensorDelegate events as JSON lines, as `herald wearable --json` prints them (the sensor's), and
/// the peripheral half's as `herald beacon --json` does (`SensorDelegate` is a
/// `HeraldPeripheralDelegate`).
struct SensorLog: SensorDelegate {
    /// The wearable asks for no LE 2M PHY (`HeraldSensor`) and logs no PHY change: LE PHY Update
    /// Complete is dropped unread.
    static var tracksPHYUpdates: Bool { false }
    /// Nothing here reads `HCIHost.drops`: input that does not parse is dropped uncounted, and the
    /// stack's value holds no record of it (124 B).
    typealias InputDrops = NoInputDrops
    /// Nor does anything read the stack's counters (`--stats` on the host): it keeps none (52 B).
    typealias StackCounters = NoLEStackCounters
    /// Nothing here reads a link's data length: LE Data Length Change is dropped unread.
    static var tracksDataLengthChanges: Bool { false }
    /// No liveness interval is set (`HostConfiguration`'s default, as the beacon): the probe's
    /// timer and command stay out (`LEApplication.probesControllerLiveness`).
    static var probesControllerLiveness: Bool { false }
    /// The rotating address is hashed in software (`AES128`), which the image links anyway for
    /// controllers that do not answer LE Encrypt (Bumble's): one AES-128 block a payload period, and
    /// the same address (Core 5.4 Vol 3 Part H 2.2.2). The LE Encrypt round trip is left out (544 B).
    static var usesLEEncrypt: Bool { false }

    mutating func sensor(_ sensor: SensorType, didDetect target: TargetIdentifier) {
        EventLog.open("didDetect"); EventLog.target(target); EventLog.close()
    }
    mutating func sensor(_ sensor: SensorType, didMeasure proximity: Proximity, fromTarget target: TargetIdentifier) {
        EventLog.open("didMeasure"); Log.put(",\"rssi\":"); EventLog.put(signed: proximity.value); EventLog.target(target)
        Log.put(",\"time\":\""); EventLog.putTime(); Log.put("\"")
        if let tx = proximity.calibration { Log.put(",\"txPower\":"); EventLog.put(signed: Int16(truncatingIfNeeded: tx)) }
        Log.put("}"); Log.end()
    }
    mutating func sensor(_ sensor: SensorType, didRead payload: Span<UInt8>, fromTarget target: TargetIdentifier) {
        EventLog.open("didRead"); EventLog.hex(",\"payload\":\"", payload)
        Log.put(",\"shortName\":\""); EventLog.putShortName(payload); Log.put("\"")
        EventLog.target(target); EventLog.close()
    }
    mutating func sensor(_ sensor: SensorType, didShare payloads: borrowing SharedPayloads, fromTarget target: TargetIdentifier) {
        EventLog.open("didShare"); Log.put(",\"payloads\":[")
        for i in 0..<payloads.count {
            EventLog.hex(i == 0 ? "\"" : ",\"", payloads[i])
        }
        Log.put("]"); EventLog.target(target); EventLog.close()
    }
    mutating func sensor(_ sensor: SensorType, didReceive data: Span<UInt8>, fromTarget target: TargetIdentifier) {
        EventLog.hex("{\"data\":\"", data); Log.put(",\"event\":\"didReceive\""); EventLog.target(target); EventLog.close()
    }
    mutating func sensor(_ sensor: SensorType, didUpdateState state: SensorState) {
        guard sensor == .ble else { return }
        EventLog.open("didUpdateState"); Log.put(",\"sensor\":\"ble\",\"state\":\"")
        switch state {
        case .on: Log.put("on")
        case .off: Log.put("off")
        case .unavailable: Log.put("unavailable")
        }
        Log.put("\""); EventLog.close()
    }
    mutating func sensor(_ sensor: SensorType, available: Bool, didDeleteOrDetect target: TargetIdentifier) {
        guard !available else { return }
        EventLog.open("didDelete"); EventLog.target(target); EventLog.close()
    }

    mutating func heraldPeripheral(didConnect link: HeraldLink) {
        EventLog.open("connected"); EventLog.link(link); EventLog.close()
    }
    mutating func heraldPeripheral(didDisconnect link: HeraldLink, reason: HCIStatus) {
        EventLog.open("disconnected"); EventLog.handle(link); EventLog.peer(link)
        Log.put(",\"reason\":"); Log.put(UInt32(truncatingIfNeeded: reason.rawValue)); EventLog.role(link); EventLog.close()
    }
    mutating func heraldPeripheral(didServePayload payload: Span<UInt8>, to link: HeraldLink) {
        EventLog.open("payload-read"); EventLog.handle(link); EventLog.hex(",\"payload\":\"", payload)
        EventLog.peer(link); EventLog.role(link); EventLog.close()
    }
    mutating func heraldPeripheral(didReceivePayload payload: Span<UInt8>, from link: HeraldLink) {
        EventLog.open("signal"); EventLog.handle(link); EventLog.hex(",\"payload\":\"", payload); EventLog.peer(link); EventLog.role(link)
        Log.put(",\"time\":\""); EventLog.putTime(); Log.put("\",\"type\":\"payload\"}"); Log.end()
    }
    mutating func heraldPeripheral(didChangeAddress address: BDAddress, unixMillis: Int64) {
        Log.put("{\"address\":\""); EventLog.putAddress(address); Log.put("\""); Log.put(",\"event\":\"address\""); EventLog.close()
    }
    mutating func heraldPeripheral(commandFailed opcode: HCIOpcode, status: HCIStatus) {
        EventLog.open("command-failed"); Log.put(",\"opcode\":"); Log.put(opcode.rawValue)
        Log.put(",\"status\":"); Log.put(UInt32(truncatingIfNeeded: status.rawValue)); EventLog.close()
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
    /// The table is the builder's (gatt_table.c): handles 0x0001...count, no sparse lookups linked.
    typealias GATTHandles = ConsecutiveGATTHandles
    /// ATT PDUs of up to 136 octets on each link, both roles (the standard 247 cost each of the 4
    /// links 2 × 111 octets more). What the wearable reads is a payload the database keeps up to 64
    /// octets (`PayloadBytes`): one Read Response. What it serves is its own Simple payload. What it
    /// writes is at most one ATT_MTU to an iOS peer (Herald signal characteristic: no queued writes
    /// there): 136 keeps the largest immediate send (3 + 128 octets) within one Write Request, and
    /// a payload-sharing list to an iPhone of up to 128 octets (six 21-octet Simple payloads), where
    /// 247 (with an iPhone's ATT_MTU of 185) allowed 177 (eight). Android peers get longer messages
    /// as queued writes.
    typealias LinkBuffers = LinkPDUBuffers<136>
    /// The sensor's command queue (384 octets: `StandardControlBuffers` says which callback needs
    /// it); ACL, 576 octets: one whole PDU (8 + 136) per link, a response or a request, where the
    /// standard 1,024 held four of 247; a response that finds it full is held on its link. ACL
    /// credits for the 4 links it holds, not 16.
    enum ControlBuffers: StackControlBuffers {
        typealias Commands = HCICommandQueue<384>
        typealias ACL = ACLOutboundQueue<576>
        typealias Credits = ACLCredits<4>
    }
}
/// The GATT database is the constant table in gatt_table.c (flash, 16 attributes); RAM holds only
/// the per-link values, 12 octets for 4 links. The H4 framer holds 148 octets: ACL data of one
/// ATT PDU (1 + 4 + 4 + 136, 4-aligned), and events up to a legacy advertising report (46) or
/// bring-up's largest answer (71); the standard 260 is for 251-octet ACL buffers.
typealias WearableStack = BluetoothStackOf<WearableApp, 4, 0, 12, 148>

@_silgen_name("wearable_secret_key") func wearable_secret_key() -> UnsafePointer<UInt8>
@_silgen_name("wearable_irk") func wearable_irk() -> UnsafePointer<UInt8>

/// What the port builds and runs (BSP/Common/Main.swift, Zephyr/swift/Main.swift).
typealias RoleStack = WearableStack

/// Sensing starts as soon as the controller is ready (bring-up begins in the port's main loop).
func startRole<O: H4Output>(_ stack: inout RoleStack, output: inout O) {
    stack.perform(now: 0, output: &output) { le in le.app.start(now: 0, control: &le.control) }
}

/// Builds the stack into `stack`, in its own frame, so the temporaries of construction (payload
/// source, database, application, each moved into the next) are gone before the main loop runs.
@inline(never)
func makeStack(into stack: UnsafeMutablePointer<WearableStack>) {
    Log.line("herald-wearable: boot")
    // The secret key stays in flash (secret.c); the supplier reads it in place, for both halves.
    let key = StaticSecretKey(unsafeStart: wearable_secret_key())
    let supplier = SimplePayloadDataSupplier(key: key, header: Wearable.header, epoch: Wearable.epoch)
    // A fixed seed for the static random address; a product derives it from the chip's unique ID.
    // Built part by part in its place (`BluetoothStack.initialize(_:...)`), the GATT database, the
    // application and its peripheral too (`HeraldPeripheral.initialize`: made here and copied in,
    // the peripheral was a 1.3 KB frame of its own, the start-up peak).
    // The table is not checked here (`makeDatabase`): its test checks it where it is made.
    _ = WearableStack.initialize(stack, configuration: HostConfiguration(randomAddressSeed: [0x57, 0x45, 0x41, 0x52, 0x41, 0x42]),
                                         database: { makeDatabase(into: $0) }) { app in
        WearableApp.initialize(app, supplier: supplier, delegate: SensorLog()) { peripheral in
            WearablePeripheral.initialize(peripheral, source: NoPayloadSource(), advertiser: makeAdvertiser())
        }
    }
}

/// The peripheral half's advertiser, built in a frame of its own.
@inline(never)
func makeAdvertiser() -> HeraldAdvertiser {
    // The advertisement from flash (Common/advertisement.c, as the beacon's): made here it linked the
    // advertising data builder for bytes that never change (the address rotates, the data does not).
    HeraldAdvertiser(configuration: HeraldAdvertisingConfiguration(intervalMilliseconds: 100, irk: Wearable.irk, epoch: Wearable.epoch),
                     clock: HeraldClock(unixMillisAtZero: Wearable.unixTimeAtReset * 1000),
                     advertisement: advertisementFromFlash())
}
