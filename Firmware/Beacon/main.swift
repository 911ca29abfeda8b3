// Herald venue beacon: advertises the Herald service and serves a venue beacon payload (protocol
// 0x30, country, state, location code; Herald beacon payload specification) on the payload
// characteristic, to any phone that connects and reads it. The Herald side is the core's
// `HeraldPeripheralApplication`; this file only configures it and logs what it reports, as JSON
// lines (Common/EventLog.swift) like `herald beacon --json`. This file is the role: the port
// (BSP/Common/Main.swift for the QEMU boards, Zephyr/swift/ for Zephyr) builds `RoleStack` with
// `makeStack`, calls `startRole` and runs it.
import BluetoothHost
import Herald

/// The venue payload, from flash (venue_payload.c): protocol 0x30, country 826, state 4, location
/// code 0x0001E240, premises name "Herald Cafe" (Herald beacon payload specification). A deployment
/// provisions these bytes; Tests/HeraldTests/FirmwareBeaconConstantsTests.swift makes them with the
/// core's builder (which validates the extended data) and fails when the checked-in file differs.
/// Built and validated here at each boot they cost 1,056 B of flash (`ExtendedDataWriter`, the UTF-8
/// and section checks, `venueBeacon`, their appends) for a value that never changes.
@_silgen_name("firmware_venue_payload") func firmwareVenuePayload() -> UnsafePointer<UInt8>
@_silgen_name("firmware_venue_payload_size") func firmwareVenuePayloadSize() -> UInt32
@_silgen_name("firmware_venue_payload_apps") func firmwareVenuePayloadApps() -> UnsafePointer<UInt8>
@_silgen_name("firmware_venue_payload_apps_size") func firmwareVenuePayloadAppsSize() -> UInt32

/// The payload characteristic's value, served from flash as it lies (`constantBytes`: the peripheral
/// keeps no copy per link, `payloadCapacity` 0; a copy of 64 octets a link was 128 B of stack value
/// and 160 B of flash). Code byte order (the CLI's `--byte-order`): the
/// specification's big-endian unless built with `FIRMWARE_SWIFTFLAGS=-DHERALD_APPS_BYTE_ORDER`, the
/// reference apps' little-endian; both are in venue_payload.c and the linker keeps the one used.
struct ProvisionedPayload: HeraldPayloadSource {
    static var changesWithTime: Bool { false }
    static var constantBytes: UnsafeBufferPointer<UInt8>? { bytes }

    static var bytes: UnsafeBufferPointer<UInt8> {
        #if HERALD_APPS_BYTE_ORDER
        UnsafeBufferPointer(start: firmwareVenuePayloadApps(), count: Int(firmwareVenuePayloadAppsSize()))
        #else
        UnsafeBufferPointer(start: firmwareVenuePayload(), count: Int(firmwareVenuePayloadSize()))
        #endif
    }

    mutating func writePayload<S: ByteSink>(at time: Int64, to sink: inout S) -> Bool {
        sink.append(contentsOf: Self.bytes.span)
        return true
    }
}

/// JSON lines for what the peripheral reports, as `herald beacon --json` prints them.
struct BeaconLog: HeraldPeripheralDelegate {
    var reads = 0

    /// The identity address, never a rotating one: the address machinery stays out of the image.
    static var rotatesAddress: Bool { false }
    /// Phones' signal writes are accepted and dropped unread: a venue keeps no visitor list.
    static var receivesSignals: Bool { false }
    /// A phone reads the payload and goes: which PHY its link uses is of no interest, so LE PHY
    /// Update Complete is dropped unread.
    static var tracksPHYUpdates: Bool { false }
    /// Nothing here reads `HCIHost.drops`: input that does not parse is dropped uncounted, and the
    /// stack's value holds no record of it (124 B).
    typealias InputDrops = NoInputDrops
    /// Nor does anything read the stack's counters (`--stats` on the host): it keeps none (52 B).
    typealias StackCounters = NoLEStackCounters
    /// Nothing here reads a link's data length: LE Data Length Change is dropped unread.
    static var tracksDataLengthChanges: Bool { false }
    /// No liveness interval is set (`HostConfiguration`'s default: the probe is for a host whose
    /// controller sits behind a USB UART that can outlive it): its timer and command stay out.
    static var probesControllerLiveness: Bool { false }

    /// The line a tester waits for: bring-up done, and the address the beacon advertises with.
    mutating func heraldPeripheral(didBecomeReady address: BDAddress, now: UInt64) {
        Log.put("ready t="); Log.put(now); Log.put("ms address="); Log.put(address: address); Log.end()
    }

    mutating func heraldPeripheral(didConnect link: HeraldLink) {
        EventLog.open("connected"); EventLog.link(link); EventLog.close()
    }

    mutating func heraldPeripheral(didDisconnect link: HeraldLink, reason: HCIStatus) {
        EventLog.open("disconnected"); EventLog.handle(link); EventLog.peer(link)
        Log.put(",\"reason\":"); Log.put(UInt32(truncatingIfNeeded: reason.rawValue)); EventLog.role(link); EventLog.close()
    }

    mutating func heraldPeripheral(didServePayload payload: Span<UInt8>, to link: HeraldLink) {
        reads += 1
        EventLog.open("payload-read"); EventLog.handle(link); EventLog.hex(",\"payload\":\"", payload)
        EventLog.peer(link); Log.put(",\"reads\":"); Log.put(reads); EventLog.role(link); EventLog.close()
    }

    mutating func heraldPeripheral(commandFailed opcode: HCIOpcode, status: HCIStatus) {
        EventLog.open("command-failed"); Log.put(",\"opcode\":"); Log.put(opcode.rawValue)
        Log.put(",\"status\":"); Log.put(UInt32(truncatingIfNeeded: status.rawValue)); EventLog.close()
    }
}

/// What the beacon's GATT server offers. Phones discover the Herald service, read the payload and
/// write short signal messages: none of the optional server procedures (Read Multiple, long writes,
/// Database Hash, Write Commands: no Herald characteristic offers Write Without Response) is needed,
/// so their code stays out of the image; and with no queued writes, no prepare queue on its links
/// (the standard one is 0.6 KB a link).
enum BeaconServer: HeraldServerOffer {
    static var serverFeatures: GATTServerFeatures { .mandatory }
    typealias PrepareQueue = ATTNoPrepareQueue
    /// The table is the builder's (gatt_table.c): handles 0x0001...count, no sparse lookups linked.
    typealias GATTHandles = ConsecutiveGATTHandles
    /// ATT PDUs of up to 68 octets (ATT_MTU 68; the standard 247 cost each link 2 × 180 octets more):
    /// the largest PDU the beacon sends is the Read Response with its whole payload, the opcode and
    /// at most 64 octets (the provisioned payload is 22; FirmwareBeaconConstantsTests holds it to 64):
    /// 65, so a phone reads it in one request (Core 5.4 Vol 3 Part F 3.4.4.4); discovery responses
    /// fill what the MTU allows.
    /// What comes in is requests, at most one ATT_MTU, and signalling of 23 octets at most. 68, not
    /// 65: the buffers' octet count is 4-aligned, so 65 takes 68 octets anyway, and 68 is the size
    /// of an HCI command packet's buffer, so both share one copy of `FixedBytes`' appends (112 B of
    /// flash).
    typealias LinkBuffers = LinkPDUBuffers<68>
    /// Queues sized by what the beacon sends (the sensor's are 384 and 1,024 octets):
    /// - commands, 256 octets: the busiest callback is bring-up's end, where the advertiser queues
    ///   LE Set Advertising Parameters, Data, Scan Response Data and Enable (records of 5 + 4 + 15,
    ///   32, 32 and 1 octets: 116); a connection adds LE Set Data Length and the advertising enable
    ///   (25), a peer's parameter request its reply (23). A UART read can carry several events, whose
    ///   callbacks all queue before the stack flushes, and what does not fit is dropped
    ///   (`droppedCommands`), not delayed: 192 would hold the first with two connections and a
    ///   reply. 256 because that is the HCI host's own command queue, so one copy of the queue's
    ///   code serves both: 176 B less flash for 64 B more RAM, and flash is the tighter budget.
    /// - ACL, 152 octets: the beacon only answers, one response per request and link (Core 5.4 Vol 3
    ///   Part F 3.3.2), each at most 8 + 68 octets in the queue: two links' 152, and a response
    ///   that finds the queue full is held on its link and sent when there is room.
    /// - ACL credits for its 2 links, not the 16 a host for any controller tracks (112 B of stack
    ///   value): a third link is refused by the stack before it could need a credit.
    enum ControlBuffers: StackControlBuffers {
        typealias Commands = HCICommandQueue<256>
        typealias ACL = ACLOutboundQueue<152>
        typealias Credits = ACLCredits<2>
    }
}

/// 2 links, no payload kept per link (it is served from flash), and no signal message buffer: with
/// `receivesSignals` false a write to the signal characteristic is answered and dropped before its
/// reassembler is looked at, so a 32-octet one a link was never used (64 B of stack value, 48 B of
/// flash zeroing and copying it).
typealias BeaconPeripheral = HeraldPeripheral<ProvisionedPayload, BeaconServer, 2, 0, 0>

/// The core's Herald peripheral application, with the beacon's server offer (its buffers among it). It only
/// advertises and is connected to, and asks for no LE 2M PHY (a phone reads the venue payload and goes).
typealias VenueBeacon = HeraldPeripheralApplication<ProvisionedPayload, BeaconLog, 2, 0, 0, BeaconServer>

/// The GATT database is the constant table in gatt_table.c (flash): 16 attributes (GAP 5, GATT 6,
/// Herald 5); RAM holds only the per-link values, 6 octets for 2 links (Service Changed CCCD and
/// Client Supported Features). Built at start-up it was 788 B of stack value, 1.8 KB of start-up
/// stack and 1.5 KB of builder code.
///
/// Its H4 framer keeps packets of up to 80 octets, not the 260 of any controller traffic: the beacon
/// never scans, so no advertising report comes in; the largest event it asks for is bring-up's
/// Command Complete of Read Local Supported Commands (71 octets, `H4Framer.smallestCapacity`); and a
/// phone's ACL data is at most one L2CAP frame of the beacon's ATT_MTU, 1 + 4 + 4 + 68 = 77 octets. A
/// larger packet (a vendor event, a peer that ignores the MTU) is discarded and counted. 180 B less
/// stack value.
typealias BeaconStack = BluetoothStackOf<VenueBeacon, 2, 0, 6, 80>

/// What the port builds and runs (BSP/Common/Main.swift, Zephyr/swift/Main.swift).
typealias RoleStack = BeaconStack

/// Nothing to start: the peripheral advertises once bring-up is done (`stackDidBecomeReady`).
func startRole<O: H4Output>(_ stack: inout RoleStack, output: inout O) {}

/// Builds the stack into `stack`, in its own frame, so the temporaries of construction (payload
/// source, database, application, each moved into the next) are gone before the main loop runs.
@inline(never)
func makeStack(into stack: UnsafeMutablePointer<BeaconStack>) {
    Log.line("herald-beacon: boot")
    // A fixed seed for the static random address; a product derives it from the chip's unique ID
    // (nRF52: FICR DEVICEADDR).
    // Built part by part in its place (`BluetoothStack.initialize(_:...)`), the GATT database too:
    // `BluetoothStack(...)` composed it in temporaries first, 16.7 KB of stack at start-up for a
    // 6.9 KB value, and the database as a local here was 1.2 KB more of this frame.
    // The table is not checked here (`makeDatabase`): its test checks it where it is made.
    // The peripheral is made inside the application's initialiser, not as a local of this frame:
    // the local and the application's copy of it were 1.1 KB of this frame (start-up peak 2,008 ->
    // 1,108 B on mps2-an386, for 144 B more flash on the micro:bit's Cortex-M0, 16 B less here).
    _ = BeaconStack.initialize(stack, configuration: HostConfiguration(randomAddressSeed: [0x42, 0x45, 0x41, 0x43, 0x4F, 0x4E]),
                                       database: { makeDatabase(into: $0) }) { app in
        // No IRK: a venue beacon has nothing to hide and advertises its identity address. 100 ms,
        // so phones scanning in the background find it sooner.
        app.initialize(to: VenueBeacon(peripheral: BeaconPeripheral(
            source: ProvisionedPayload(),
            advertiser: HeraldAdvertiser(configuration: HeraldAdvertisingConfiguration(intervalMilliseconds: 100),
                                         clock: HeraldClock(unixMillisAtZero: 0), advertisement: advertisementFromFlash())),
                                       delegate: BeaconLog()))
    }
}
