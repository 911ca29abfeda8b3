// Herald wearable: advertises the Herald service and serves its rotating Simple payload (Herald
// Simple payload specification) to phones that connect and read it, and reports the Herald devices
// it sees around it. Log lines on UART1 follow the reference apps' SensorDelegate callbacks
// (sensor didUpdateState / didDetect / didShare).
import BluetoothHost
import Herald

enum Wearable {
    static let header = PayloadHeader(protocolAndVersion: 0x10, countryCode: 826, stateCode: 4)
    /// No real-time clock on this board: time starts at a fixed Unix time at reset (ten days into the
    /// standard key epoch). A product sets it from the phone app or a GNSS/RTC at provisioning.
    static let unixTimeAtReset: Int64 = KeyEpoch.standard.unixSeconds + 10 * KeyEpoch.secondsPerDay + 3_600
    static let name: StaticString = "Herald Wearable"
}

let payloadValueID: UInt16 = 1

struct HeraldWearable: LEApplication {
    /// The 2048-byte secret key the Simple payload's key schedule starts from. A fixed test secret
    /// here; a product generates it once from a TRNG and keeps it in flash.
    var secret = InlineArray<2048, UInt8>(repeating: 0)
    var supplier = SimplePayloadSupplier(header: Wearable.header)
    var advertisement: HeraldAdvertisement
    var payload = FixedBytes<32>()
    var shares = 0
    /// Addresses already reported (a ring: scanning repeats every advertisement).
    var seen = InlineArray<8, BDAddress>(repeating: .zero)
    var seenNext = 0
    var reader = PhoneReader()
    var links = 0

    init(advertisement: HeraldAdvertisement) {
        self.advertisement = advertisement
        for i in 0..<2048 { secret[i] = UInt8(truncatingIfNeeded: i &* 7 &+ 3) }
    }

    func unixTime(_ now: UInt64) -> Int64 { Wearable.unixTimeAtReset + Int64(bitPattern: now / 1000) }

    /// Recomputes the payload when its period has changed (the supplier walks the key chain then).
    mutating func refreshPayload(now: UInt64) {
        let time = unixTime(now)
        guard payload.count == 0 || supplier.rotationDue(at: time) else { return }
        payload.removeAll()
        let written = (try? supplier.writePayload(at: time, secretKey: secret.span, to: &payload)) ?? false
        if !written { payload.removeAll() }
        Log.put("sensor didUpdatePayload day="); Log.put(supplier.currentDay); Log.put(" period=")
        Log.put(supplier.currentPeriod); Log.put(" payload="); Log.put(hex: payload.span); Log.end()
    }

    mutating func read<S: ByteSink>(id: UInt16, connection: Int, offset: Int, into sink: inout S) -> ATTErrorCode? {
        guard id == payloadValueID else { return .readNotPermitted }
        guard payload.count > 0 else { return .unlikelyError }
        guard offset <= payload.count else { return .invalidOffset }
        sink.append(contentsOf: payload.span.extracting(offset..<payload.count))
        if offset == 0 {
            shares += 1
            Log.put("sensor didShare payload connection="); Log.put(connection); Log.put(" count="); Log.put(shares); Log.end()
        }
        return nil
    }

    var applicationDeadline: UInt64? { reader.deadline }

    mutating func stackTimerFired(now: UInt64, control: inout StackControl) {
        reader.timerFired(now: now, connectedLinks: links, control: &control)
    }

    mutating func stackDidReceiveATT(handle: UInt16, pdu: Span<UInt8>, now: UInt64, control: inout StackControl) {
        reader.received(handle: handle, pdu: pdu, now: now, control: &control)
    }

    mutating func stackDidFailToConnect(to peer: DeviceAddress, status: HCIStatus, now: UInt64, control: inout StackControl) {
        Log.put("connect failed status="); Log.putHex(status.rawValue); Log.end()
        reader.failedToConnect()
        control.startScanning(active: false)
    }

    mutating func stackDidBecomeReady(_ info: ControllerInfo, now: UInt64, control: inout StackControl) {
        Log.put("sensor didUpdateState ready t="); Log.put(now); Log.put("ms address="); Log.put(address: info.address); Log.end()
        refreshPayload(now: now)
        control.startAdvertising(AdvertisingIntent(
            parameters: HCILESetAdvertisingParameters(intervalMin: 0x00A0, intervalMax: 0x00A0),
            data: advertisement.advertisingData, scanResponse: advertisement.scanResponseData))
        control.startScanning(active: false)
    }

    mutating func stackDidReceive(advertisingReport report: borrowing AdvertisingReport, now: UInt64, control: inout StackControl) {
        guard let c = try? HeraldAdvertClassification(advertisingData: report.data), c.kind == .herald else { return }
        let address = report.address.address
        reader.detected(report.address, now: now)
        for i in 0..<8 where seen[i] == address { return }
        seen[seenNext] = address
        seenNext = (seenNext + 1) % 8
        Log.put("sensor didDetect address="); Log.put(address: address); Log.put(" rssi=-")
        Log.put(UInt32(truncatingIfNeeded: -Int(report.rssi ?? 0))); Log.end()
    }

    mutating func stackDidConnect(_ link: ConnectionSummary, now: UInt64, control: inout StackControl) {
        links += 1
        refreshPayload(now: now)
        reader.connected(link, now: now, control: &control)
        Log.put("connected handle="); Log.put(link.handle); Log.put(" peer="); Log.put(address: link.peer.address); Log.end()
    }

    mutating func stackDidDisconnect(handle: UInt16, reason: HCIStatus, now: UInt64, control: inout StackControl) {
        links = max(0, links - 1)
        if reader.disconnected(handle: handle) { control.startScanning(active: false) }
        Log.put("disconnected handle="); Log.put(handle); Log.put(" reason="); Log.putHex(reason.rawValue); Log.end()
    }

    mutating func stackControllerDidFail(_ failure: ControllerFailure, now: UInt64, control: inout StackControl) {
        Log.line("controller failed")
    }
}

@_cdecl("firmware_main")
public func firmwareMain() -> Never {
    Board.start()
    Log.line("herald-wearable: boot")
    var database: GATTDatabase<16, 160, 2>
    do throws(GATTDatabaseError) {
        let deviceName: StaticString = "Herald Wearable"
        database = try GATTDatabase(deviceName: Span(_unsafeStart: deviceName.utf8Start, count: deviceName.utf8CodeUnitCount))
        try database.addPrimaryService(HeraldIdentifiers.serviceUUID)
        try database.addCharacteristic(HeraldIdentifiers.payloadCharacteristicUUID, properties: .read,
                                       permissions: .read, value: .dynamic(id: payloadValueID))
    } catch {
        Log.line("fatal: GATT database does not fit")
        while true {}
    }
    var advertisement: HeraldAdvertisement
    do throws(AdvertisingDataError) {
        advertisement = try HeraldAdvertisement(name: Span(_unsafeStart: Wearable.name.utf8Start, count: Wearable.name.utf8CodeUnitCount))
    } catch {
        Log.line("fatal: advertisement does not fit")
        while true {}
    }
    var stack = BluetoothStack(configuration: HostConfiguration(randomAddressSeed: [0x57, 0x45, 0x41, 0x52, 0x41, 0x42]),
                               database: database, app: HeraldWearable(advertisement: advertisement))
    runStack(&stack)
}
