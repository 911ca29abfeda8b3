// Herald venue beacon: advertises the Herald service and serves a venue beacon payload (protocol
// 0x30, country, state, location code; Herald beacon payload specification) on the payload
// characteristic, to any phone that connects and reads it. The Herald side is the core's
// `HeraldPeripheralApplication`; this file only configures it and logs what it reports.
import BluetoothHost
import Herald

/// The venue payload, from flash (venue_payload.c): protocol 0x30, country 826, state 4, location
/// code 0x0001E240, premises name "Herald Cafe" (Herald beacon payload specification). A deployment
/// provisions these bytes; Tests/HeraldTests/FirmwareVenuePayloadTests.swift makes them with the
/// core's builder (which validates the extended data) and fails when the checked-in file differs.
/// Built and validated here at each boot they cost 1.2 KB of flash (`ExtendedDataWriter`, the UTF-8
/// and section checks, `venueBeacon`, their appends) for a value that never changes.
@_silgen_name("firmware_venue_payload") func firmwareVenuePayload() -> UnsafePointer<UInt8>
@_silgen_name("firmware_venue_payload_size") func firmwareVenuePayloadSize() -> UInt32
@_silgen_name("firmware_venue_payload_apps") func firmwareVenuePayloadApps() -> UnsafePointer<UInt8>
@_silgen_name("firmware_venue_payload_apps_size") func firmwareVenuePayloadAppsSize() -> UInt32

/// The payload characteristic's value, read from flash on a link's first read (the peripheral keeps
/// its copy for the rest of the link). Code byte order (the CLI's `--byte-order`): the
/// specification's big-endian unless built with `FIRMWARE_SWIFTFLAGS=-DHERALD_APPS_BYTE_ORDER`, the
/// reference apps' little-endian; both are in venue_payload.c and the linker keeps the one used.
struct ProvisionedPayload: HeraldPayloadSource {
    static var changesWithTime: Bool { false }

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

/// Log lines for what the peripheral reports (SensorDelegate style).
struct BeaconLog: HeraldPeripheralDelegate {
    var reads = 0

    /// The identity address, never a rotating one: the address machinery stays out of the image.
    static var rotatesAddress: Bool { false }
    /// Phones' signal writes are accepted and dropped unread: a venue keeps no visitor list.
    static var receivesSignals: Bool { false }

    mutating func heraldPeripheral(didConnect link: HeraldLink) {
        Log.put("connected handle="); Log.put(link.handle); Log.put(" peer="); Log.put(address: link.peer.address); Log.end()
    }

    mutating func heraldPeripheral(didDisconnect link: HeraldLink, reason: HCIStatus) {
        Log.put("disconnected handle="); Log.put(link.handle); Log.put(" reason="); Log.putHex(reason.rawValue); Log.end()
    }

    mutating func heraldPeripheral(didServePayload payload: Span<UInt8>, to link: HeraldLink) {
        reads += 1
        Log.put("payload read connection="); Log.put(link.slot); Log.put(" count="); Log.put(reads); Log.end()
    }

    mutating func heraldPeripheral(commandFailed opcode: HCIOpcode, status: HCIStatus) {
        Log.put("command failed opcode="); Log.put(opcode.rawValue); Log.put(" status="); Log.putHex(status.rawValue); Log.end()
    }
}

typealias BeaconPeripheral = HeraldPeripheral<ProvisionedPayload, 2, 64, 32>

/// Logs bring-up, then hands every callback to the core's Herald peripheral. It is its own
/// `LEApplication` rather than `HeraldPeripheralApplication`, so that its stack's queues are sized
/// for a beacon (`ControlBuffers`) while the peripheral's code is the same.
struct VenueBeacon: LEApplication {
    var peripheral: BeaconPeripheral
    var log: BeaconLog

    /// Phones discover the Herald service, read the payload and write short signal messages: none of
    /// the optional server procedures (Read Multiple, long writes, Database Hash) is needed, so
    /// their code stays out of the image.
    static var serverFeatures: GATTServerFeatures { .mandatory }
    /// No queued writes, so no prepare queue on its links (the standard one is 0.6 KB a link).
    typealias PrepareQueue = ATTNoPrepareQueue
    /// ATT PDUs of up to 68 octets (ATT_MTU 68; the standard 247 cost each link 2 × 180 octets more):
    /// the largest PDU the beacon sends is the Read Response with its whole payload, the opcode and
    /// the 64 octets the peripheral keeps per link (`BeaconPeripheral`): 65, so a phone still reads
    /// any payload in one request (Core 5.4 Vol 3 Part F 3.4.4.4); discovery responses fill what
    /// the MTU allows.
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
    /// - ACL, 160 octets: the beacon only answers, one response per request and link (Core 5.4 Vol 3
    ///   Part F 3.3.2), each at most 8 + 68 octets in the queue; two links' 152 fit, and a response
    ///   that finds the queue full is held on its link and sent when there is room.
    typealias ControlBuffers = StackControlQueues<256, 160>
    /// A beacon only advertises and is connected to.
    static var scans: Bool { false }
    static var connectsAsCentral: Bool { false }

    mutating func read<S: ByteSink>(id: UInt16, connection: Int, offset: Int, into sink: inout S) -> ATTErrorCode? {
        peripheral.read(id: id, connection: connection, offset: offset, into: &sink, delegate: &log)
    }
    mutating func write(id: UInt16, connection: Int, offset: Int, value: Span<UInt8>) -> ATTErrorCode? {
        peripheral.write(id: id, connection: connection, offset: offset, value: value, delegate: &log)
    }
    mutating func stackDidBecomeReady(_ info: ControllerInfo, now: UInt64, control: inout Control) {
        Log.put("ready t="); Log.put(now); Log.put("ms address="); Log.put(address: info.address); Log.end()
        peripheral.stackDidBecomeReady(info, now: now, control: &control, delegate: &log)
    }
    mutating func stackControllerDidFail(_ failure: ControllerFailure, now: UInt64, control: inout Control) {
        Log.line("controller failed")
        peripheral.stackControllerDidFail()
    }
    mutating func stackDidConnect(_ link: ConnectionSummary, now: UInt64, control: inout Control) {
        peripheral.stackDidConnect(link, now: now, control: &control, delegate: &log)
    }
    mutating func stackDidDisconnect(handle: UInt16, reason: HCIStatus, now: UInt64, control: inout Control) {
        peripheral.stackDidDisconnect(handle: handle, reason: reason, now: now, control: &control, delegate: &log)
    }
    mutating func stackCommandDidComplete(tag: CommandTag, opcode: HCIOpcode, status: HCIStatus,
                                          returnParameters: Span<UInt8>, control: inout Control) {
        _ = peripheral.stackCommandDidComplete(tag: tag, opcode: opcode, status: status, returnParameters: returnParameters,
                                               control: &control, delegate: &log)
    }
    /// Asked of the type first, as `HeraldPeripheralApplication` does: a beacon that never follows
    /// the period grid has no timer code at all.
    var applicationDeadline: UInt64? {
        BeaconPeripheral.tracksPeriods(BeaconLog.self) ? peripheral.deadline : nil
    }
    mutating func stackTimerFired(now: UInt64, control: inout Control) {
        guard BeaconPeripheral.tracksPeriods(BeaconLog.self) else { return }
        peripheral.stackTimerFired(now: now, control: &control, delegate: &log)
    }
}

func halt(_ reason: StaticString) -> Never {
    Log.put("fatal: "); Log.line(reason)
    while true { Board.sleep() }
}

@_cdecl("firmware_main")
public func firmwareMain() -> Never {
    Board.start()
    // The stack is built in place in memory of its own: as a local here it was built in a
    // temporary and copied (two copies of the value in this frame).
    guard let stack = Board.reserve(BeaconStack.self) else { halt("no room for the stack") }
    Board.logReservation(BeaconStack.self)
    makeStack(into: stack)
    // Construction's peak (temporaries moved from value to value) is reported apart from the main
    // loop's: the loop's is what a product must budget for beyond start-up.
    Log.put("memory start-up stack_peak="); Log.put(Board.stackPeak); Log.end()
    Board.restartStackMeasurement()
    runStack(&stack.pointee)
}

/// The GATT database is the constant table in gatt_table.c (flash): 16 attributes (GAP 5, GATT 6,
/// Herald 5); RAM holds only the per-link values, 6 octets for 2 links (Service Changed CCCD and
/// Client Supported Features). Built at start-up it was 788 B of stack value, 1.8 KB of start-up
/// stack and 1.5 KB of builder code.
typealias BeaconStack = BluetoothStack<VenueBeacon, 2, 0, 6>

/// Builds the stack into `stack`, in its own frame, so the temporaries of construction (payload
/// source, database, application, each moved into the next) are gone before the main loop runs.
@inline(never)
func makeStack(into stack: UnsafeMutablePointer<BeaconStack>) {
    Log.line("herald-beacon: boot")
    Log.put("payload "); Log.put(hex: ProvisionedPayload.bytes.span); Log.end()
    // No IRK: a venue beacon has nothing to hide and advertises its identity address. 100 ms, so
    // phones scanning in the background find it sooner.
    guard let peripheral = try? BeaconPeripheral(
        source: ProvisionedPayload(), advertising: HeraldAdvertisingConfiguration(intervalMilliseconds: 100),
        clock: HeraldClock(unixMillisAtZero: 0))
    else { halt("advertisement does not fit") }
    // A fixed seed for the static random address; a product derives it from the chip's unique ID
    // (nRF52: FICR DEVICEADDR).
    // Built part by part in its place (`BluetoothStack.initialize(_:...)`), the GATT database too:
    // `BluetoothStack(...)` composed it in temporaries first, 16.7 KB of stack at start-up for a
    // 6.9 KB value, and the database as a local here was 1.2 KB more of this frame.
    // The table is not checked here (`makeDatabase`): its test checks it where it is made.
    _ = BeaconStack.initialize(stack, configuration: HostConfiguration(randomAddressSeed: [0x42, 0x45, 0x41, 0x43, 0x4F, 0x4E]),
                                       database: { makeDatabase(into: $0) }) { app in
        app.initialize(to: VenueBeacon(peripheral: peripheral, log: BeaconLog()))
    }
}
