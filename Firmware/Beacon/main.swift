// Herald venue beacon: advertises the Herald service and serves a venue beacon payload (protocol
// 0x30, country, state, location code; Herald beacon payload specification) on the payload
// characteristic, to any phone that connects and reads it. The Herald side is the core's
// `HeraldPeripheralApplication`; this file only configures it and logs what it reports.
import BluetoothHost
import Herald

/// The venue this image describes. A real deployment writes these at provisioning time.
enum Venue {
    static let header = PayloadHeader(protocolAndVersion: 0x30, countryCode: 826, stateCode: 4)
    static let locationCode: UInt32 = 0x0001_E240
    static let name: StaticString = "Herald Cafe"
    /// Code byte order (the CLI's `--byte-order`): the specification's big-endian unless built with
    /// `FIRMWARE_SWIFTFLAGS=-DHERALD_APPS_BYTE_ORDER`, the reference apps' little-endian.
    #if HERALD_APPS_BYTE_ORDER
    static let order = PayloadCodeByteOrder.littleEndian
    #else
    static let order = PayloadCodeByteOrder.bigEndian
    #endif
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

typealias BeaconApp = HeraldPeripheralApplication<FixedPayloadSource<64>, BeaconLog, 2, 64, 32>

/// Logs bring-up, then hands every callback to the Herald peripheral application.
struct VenueBeacon: LEApplication {
    var herald: BeaconApp

    /// Phones discover the Herald service, read the payload and write short signal messages: none of
    /// the optional server procedures (Read Multiple, long writes, Database Hash) is needed, so
    /// their code stays out of the image.
    static var serverFeatures: GATTServerFeatures { .mandatory }
    /// No queued writes, so no prepare queue on its links (the standard one is 0.6 KB a link).
    typealias PrepareQueue = ATTNoPrepareQueue
    /// A beacon only advertises and is connected to.
    static var scans: Bool { false }
    static var connectsAsCentral: Bool { false }

    mutating func read<S: ByteSink>(id: UInt16, connection: Int, offset: Int, into sink: inout S) -> ATTErrorCode? {
        herald.read(id: id, connection: connection, offset: offset, into: &sink)
    }
    mutating func write(id: UInt16, connection: Int, offset: Int, value: Span<UInt8>) -> ATTErrorCode? {
        herald.write(id: id, connection: connection, offset: offset, value: value)
    }
    mutating func stackDidBecomeReady(_ info: ControllerInfo, now: UInt64, control: inout StackControl) {
        Log.put("ready t="); Log.put(now); Log.put("ms address="); Log.put(address: info.address); Log.end()
        herald.stackDidBecomeReady(info, now: now, control: &control)
    }
    mutating func stackControllerDidFail(_ failure: ControllerFailure, now: UInt64, control: inout StackControl) {
        Log.line("controller failed")
        herald.stackControllerDidFail(failure, now: now, control: &control)
    }
    mutating func stackDidConnect(_ link: ConnectionSummary, now: UInt64, control: inout StackControl) {
        herald.stackDidConnect(link, now: now, control: &control)
    }
    mutating func stackDidDisconnect(handle: UInt16, reason: HCIStatus, now: UInt64, control: inout StackControl) {
        herald.stackDidDisconnect(handle: handle, reason: reason, now: now, control: &control)
    }
    mutating func stackCommandDidComplete(tag: CommandTag, opcode: HCIOpcode, status: HCIStatus,
                                          returnParameters: Span<UInt8>, control: inout StackControl) {
        herald.stackCommandDidComplete(tag: tag, opcode: opcode, status: status, returnParameters: returnParameters, control: &control)
    }
    var applicationDeadline: UInt64? { herald.applicationDeadline }
    mutating func stackTimerFired(now: UInt64, control: inout StackControl) {
        herald.stackTimerFired(now: now, control: &control)
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

/// GATT capacities as used, no more: 16 attributes (GAP 5, GATT 6, Herald 5) and 104 octets of
/// values (declarations, the name without spare room, per-link CCCDs and Client Supported Features).
/// The 20 and 192 this had cost 176 B of value and 0.7 KB of stack in the copies the optimiser makes.
/// A database that outgrows them stops the image at boot ("GATT database does not fit").
typealias BeaconStack = BluetoothStack<VenueBeacon, 2, 16, 104>

/// Builds the stack into `stack`, in its own frame, so the temporaries of construction (payload
/// source, database, application, each moved into the next) are gone before the main loop runs.
@inline(never)
func makeStack(into stack: UnsafeMutablePointer<BeaconStack>) {
    Log.line("herald-beacon: boot")
    var premises = FixedBytes<32>()
    guard (try? ExtendedDataWriter.append(code: ExtendedDataCode.premisesName, text: Venue.name, to: &premises)) != nil,
          let source = try? FixedPayloadSource<64>.venueBeacon(header: Venue.header, locationCode: Venue.locationCode,
                                                                extendedData: premises.span, order: Venue.order)
    else { halt("venue payload invalid") }
    Log.put("payload "); Log.put(hex: source.payload.span); Log.end()
    // No IRK: a venue beacon has nothing to hide and advertises its identity address. 100 ms, so
    // phones scanning in the background find it sooner.
    guard var peripheral = try? HeraldPeripheral<FixedPayloadSource<64>, 2, 64, 32>(
        source: source, advertising: HeraldAdvertisingConfiguration(intervalMilliseconds: 100),
        clock: HeraldClock(unixMillisAtZero: 0))
    else { halt("advertisement does not fit") }
    // A fixed seed for the static random address; a product derives it from the chip's unique ID
    // (nRF52: FICR DEVICEADDR).
    // Built part by part in its place (`BluetoothStack.initialize(_:...)`), the GATT database too:
    // `BluetoothStack(...)` composed it in temporaries first, 16.7 KB of stack at start-up for a
    // 6.9 KB value, and the database as a local here was 1.2 KB more of this frame.
    let built = BeaconStack.initialize(stack, configuration: HostConfiguration(randomAddressSeed: [0x42, 0x45, 0x41, 0x43, 0x4F, 0x4E]),
                                       database: { makeDatabase(into: $0, peripheral: &peripheral) }) { app in
        app.initialize(to: VenueBeacon(herald: BeaconApp(peripheral: peripheral, delegate: BeaconLog())))
    }
    if !built { halt("GATT database does not fit") }
}

/// The GATT database, built in its place in the stack, in a frame of its own.
@inline(never)
func makeDatabase(into database: UnsafeMutablePointer<GATTDatabase<16, 104, 2>>,
                  peripheral: inout HeraldPeripheral<FixedPayloadSource<64>, 2, 64, 32>) -> Bool {
    let deviceName: StaticString = "Herald Beacon"
    do throws(GATTDatabaseError) {
        database.initialize(to: try GATTDatabase(deviceName: Span(_unsafeStart: deviceName.utf8Start, count: deviceName.utf8CodeUnitCount),
                                                 deviceNameMaxLength: 0, features: VenueBeacon.serverFeatures))
    } catch { return false }
    return (try? peripheral.install(into: &database.pointee)) != nil
}
