// Herald venue beacon: advertises the Herald service and serves a venue beacon payload (protocol
// 0x30, country, state, location code; Herald beacon payload specification) on the payload
// characteristic, to any phone that connects and reads it.
import BluetoothHost
import Herald

/// The venue this image describes. A real deployment writes these at provisioning time.
enum Venue {
    static let header = PayloadHeader(protocolAndVersion: 0x30, countryCode: 826, stateCode: 4)
    static let locationCode: UInt32 = 0x0001_E240
    static let name: StaticString = "Herald Cafe"
}

let payloadValueID: UInt16 = 1

struct VenueBeacon: LEApplication {
    var payload = FixedBytes<64>()
    var advertisement: HeraldAdvertisement
    var reads = 0

    mutating func read<S: ByteSink>(id: UInt16, connection: Int, offset: Int, into sink: inout S) -> ATTErrorCode? {
        guard id == payloadValueID else { return .readNotPermitted }
        guard offset <= payload.count else { return .invalidOffset }
        sink.append(contentsOf: payload.span.extracting(offset..<payload.count))
        if offset == 0 {
            reads += 1
            Log.put("payload read connection="); Log.put(connection); Log.put(" count="); Log.put(reads); Log.end()
        }
        return nil
    }

    mutating func stackDidBecomeReady(_ info: ControllerInfo, now: UInt64, control: inout StackControl) {
        Log.put("ready t="); Log.put(now); Log.put("ms address="); Log.put(address: info.address); Log.end()
        // 100 ms connectable undirected advertising (Core 5.4 Vol 4 Part E 7.8.5; units of 0.625 ms):
        // phones in the background scan slowly, a short interval is found sooner.
        control.startAdvertising(AdvertisingIntent(
            parameters: HCILESetAdvertisingParameters(intervalMin: 0x00A0, intervalMax: 0x00A0),
            data: advertisement.advertisingData, scanResponse: advertisement.scanResponseData))
    }

    mutating func stackControllerDidFail(_ failure: ControllerFailure, now: UInt64, control: inout StackControl) {
        Log.line("controller failed")
    }

    mutating func stackDidConnect(_ link: ConnectionSummary, now: UInt64, control: inout StackControl) {
        Log.put("connected handle="); Log.put(link.handle); Log.put(" peer="); Log.put(address: link.peer.address); Log.end()
    }

    mutating func stackDidDisconnect(handle: UInt16, reason: HCIStatus, now: UInt64, control: inout StackControl) {
        Log.put("disconnected handle="); Log.put(handle); Log.put(" reason="); Log.putHex(reason.rawValue); Log.end()
    }
}

@_cdecl("firmware_main")
public func firmwareMain() -> Never {
    Board.start()
    Log.line("herald-beacon: boot")
    var app: VenueBeacon
    var database: GATTDatabase<16, 160, 2>
    do throws(GATTDatabaseError) {
        let deviceName: StaticString = "Herald Beacon"
        database = try GATTDatabase(deviceName: Span(_unsafeStart: deviceName.utf8Start, count: deviceName.utf8CodeUnitCount))
        try database.addPrimaryService(HeraldIdentifiers.serviceUUID)
        try database.addCharacteristic(HeraldIdentifiers.payloadCharacteristicUUID, properties: .read,
                                       permissions: .read, value: .dynamic(id: payloadValueID))
    } catch {
        Log.line("fatal: GATT database does not fit")
        while true {}
    }
    do throws(AdvertisingDataError) {
        app = VenueBeacon(advertisement: try HeraldAdvertisement(
            name: Span(_unsafeStart: Venue.name.utf8Start, count: Venue.name.utf8CodeUnitCount)))
    } catch {
        Log.line("fatal: advertisement does not fit")
        while true {}
    }
    var premises = FixedBytes<32>()
    do throws(DecodeError) {
        try ExtendedDataWriter.append(code: ExtendedDataCode.premisesName, text: Venue.name, to: &premises)
        try VenueBeaconPayload.write(header: Venue.header, locationCode: Venue.locationCode,
                                     extendedData: premises.span, to: &app.payload)
    } catch {
        Log.line("fatal: venue payload invalid")
        while true {}
    }
    Log.put("payload "); Log.put(hex: app.payload.span); Log.end()
    // A fixed seed for the static random address; a product derives it from the chip's unique ID
    // (nRF52: FICR DEVICEADDR).
    var stack = BluetoothStack(configuration: HostConfiguration(randomAddressSeed: [0x42, 0x45, 0x41, 0x43, 0x4F, 0x4E]),
                               database: database, app: app)
    runStack(&stack)
}
