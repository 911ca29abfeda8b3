import Testing
@testable import BluetoothHost
@testable import Herald

// Shared by the Sensor*Tests suites: a recording control and delegate, synthetic adverts, and a fake
// peer that answers the central procedure's GATT steps.

enum ControlAction: Equatable {
    case connect(DeviceAddress, timeout: UInt64)
    case disconnect(UInt16)
    case scan(ScanIntent?)
}

extension ScanIntent {
    /// The central's scans: 100 ms, window = interval.
    static let active = ScanIntent(active: true, interval: 0x00A0, window: 0x0050)
    static let passive = ScanIntent(active: false, interval: 0x00A0, window: 0x0050)
}

struct RecordingControl: HeraldCentralControl {
    var actions: [ControlAction] = []
    var acceptConnections = true
    mutating func requestConnection(to peer: DeviceAddress, now: UInt64, timeout: UInt64) -> Bool {
        actions.append(.connect(peer, timeout: timeout))
        return acceptConnections
    }
    mutating func requestDisconnection(handle: UInt16) { actions.append(.disconnect(handle)) }
    mutating func requestScanning(_ scan: ScanIntent?) { actions.append(.scan(scan)) }
    var connects: [DeviceAddress] { actions.compactMap { if case .connect(let a, _) = $0 { return a } else { return nil } } }
    var disconnects: [UInt16] { actions.compactMap { if case .disconnect(let h) = $0 { return h } else { return nil } } }
}

enum SensorEvent: Equatable {
    case detect(UInt32)
    case measure(UInt32, Int16, Int8?)
    case read(UInt32, [UInt8])
    case share(UInt32, [[UInt8]])
    case receive(UInt32, [UInt8])
    case measureWithPayload(UInt32, Int16, [UInt8])
    case state(SensorType, SensorState)
    case available(Bool, UInt32)
    /// A peripheral-half event: its name, the link's handle and what it carried.
    case peripheral(String, UInt16, [UInt8])
}

struct RecordingDelegate: SensorDelegate {
    var events: [SensorEvent] = []
    /// Also record the peripheral half's events (`.peripheral`); off, only the sensor's are kept.
    var recordsPeripheral = false
    mutating func sensor(_ sensor: SensorType, didDetect target: TargetIdentifier) { events.append(.detect(target.value)) }
    mutating func sensor(_ sensor: SensorType, didMeasure proximity: Proximity, fromTarget target: TargetIdentifier) {
        events.append(.measure(target.value, proximity.value, proximity.calibration))
    }
    mutating func sensor(_ sensor: SensorType, didRead payload: Span<UInt8>, fromTarget target: TargetIdentifier) {
        events.append(.read(target.value, array(payload)))
    }
    mutating func sensor(_ sensor: SensorType, didShare payloads: borrowing SharedPayloads, fromTarget target: TargetIdentifier) {
        var list: [[UInt8]] = []
        for i in 0..<payloads.count { list.append(array(payloads[i])) }
        events.append(.share(target.value, list))
    }
    mutating func sensor(_ sensor: SensorType, didReceive data: Span<UInt8>, fromTarget target: TargetIdentifier) {
        events.append(.receive(target.value, array(data)))
    }
    mutating func sensor(_ sensor: SensorType, didMeasure proximity: Proximity, fromTarget target: TargetIdentifier,
                         withPayload payload: Span<UInt8>) {
        events.append(.measureWithPayload(target.value, proximity.value, array(payload)))
    }
    mutating func sensor(_ sensor: SensorType, didUpdateState state: SensorState) { events.append(.state(sensor, state)) }
    mutating func sensor(_ sensor: SensorType, available: Bool, didDeleteOrDetect target: TargetIdentifier) {
        events.append(.available(available, target.value))
    }
    mutating func heraldPeripheral(didConnect link: HeraldLink) { guard recordsPeripheral else { return }; events.append(.peripheral("connect", link.handle, [])) }
    mutating func heraldPeripheral(didDisconnect link: HeraldLink, reason: HCIStatus) {
        guard recordsPeripheral else { return }
        events.append(.peripheral("disconnect", link.handle, [reason.rawValue]))
    }
    mutating func heraldPeripheral(didUpdatePHY phy: LinkPHY, on link: HeraldLink) {
        guard recordsPeripheral else { return }
        events.append(.peripheral("phy", link.handle, [phy.tx.rawValue, phy.rx.rawValue]))
    }
    mutating func heraldPeripheral(didServePayload payload: Span<UInt8>, to link: HeraldLink) {
        guard recordsPeripheral else { return }
        events.append(.peripheral("serve", link.handle, array(payload)))
    }
    mutating func heraldPeripheral(didReceivePayload payload: Span<UInt8>, from link: HeraldLink) {
        guard recordsPeripheral else { return }
        events.append(.peripheral("payload", link.handle, array(payload)))
    }
    mutating func heraldPeripheral(didMeasureRSSI rssi: Int16, from link: HeraldLink) {
        guard recordsPeripheral else { return }
        events.append(.peripheral("rssi", link.handle, [UInt8(truncatingIfNeeded: rssi)]))
    }
    mutating func heraldPeripheral(didShare payloads: SharedPayloadIterator, rssi: Int16, from link: HeraldLink) {
        guard recordsPeripheral else { return }
        events.append(.peripheral("share", link.handle, array(payloads.bytes) + [UInt8(truncatingIfNeeded: rssi)]))
    }
    mutating func heraldPeripheral(didReceiveImmediateSend data: Span<UInt8>, from link: HeraldLink) {
        guard recordsPeripheral else { return }
        events.append(.peripheral("immediate", link.handle, array(data)))
    }
    mutating func heraldPeripheral(didKeepAwake link: HeraldLink) { guard recordsPeripheral else { return }; events.append(.peripheral("awake", link.handle, [])) }
    mutating func heraldPeripheral(didRejectSignalWrite fragment: Span<UInt8>, from link: HeraldLink) {
        guard recordsPeripheral else { return }
        events.append(.peripheral("reject", link.handle, array(fragment)))
    }
    mutating func heraldPeripheral(didChangeAddress address: BDAddress, unixMillis: Int64) {
        guard recordsPeripheral else { return }
        events.append(.peripheral("address", 0, [address.bytes[0], UInt8(truncatingIfNeeded: unixMillis)]))
    }
    mutating func heraldPeripheral(commandFailed opcode: HCIOpcode, status: HCIStatus) {
        guard recordsPeripheral else { return }
        events.append(.peripheral("failed", UInt16(opcode.rawValue), [status.rawValue]))
    }
}

func array(_ s: Span<UInt8>) -> [UInt8] { (0..<s.count).map { s[$0] } }
func array<let N: Int>(_ b: FixedBytes<N>) -> [UInt8] { (0..<b.count).map { b[$0] } }

func address(_ last: UInt8, _ first: UInt8 = 0xC0) -> DeviceAddress {
    DeviceAddress(type: .randomDevice, address: BDAddress(displayOrder: first, 0x11, 0x22, 0x33, 0x44, last))
}

enum AdvertData {
    /// Flags, the registered 16-bit Herald UUID 0xFCF6.
    static let heraldUUID16: [UInt8] = [0x02, 0x01, 0x06, 0x03, 0x03, 0xF6, 0xFC]
    /// Flags, the specification's 128-bit Herald UUID, Tx power -8 dBm.
    static let heraldUUID128WithTx: [UInt8] = [0x02, 0x01, 0x06, 0x11, 0x07,
        0x9b, 0xfd, 0x5b, 0xd6, 0x72, 0x45, 0x1e, 0x80, 0xd3, 0x42, 0x46, 0x47, 0xaf, 0x32, 0x81, 0x42,
        0x02, 0x0A, 0xF8]
    /// Manufacturer data 0xFFFA with a 6-byte pseudo device address.
    static func pseudo(_ b: [UInt8]) -> [UInt8] { [0x02, 0x01, 0x06, 0x09, 0xFF, 0xFA, 0xFF] + b }
    /// Apple manufacturer data, "nearby" type 0x10 (a backgrounded iPhone).
    static let apple: [UInt8] = [0x02, 0x01, 0x1A, 0x07, 0xFF, 0x4C, 0x00, 0x10, 0x05, 0x01, 0x1C]
    /// Someone else's device.
    static let other: [UInt8] = [0x02, 0x01, 0x06, 0x03, 0x03, 0x0F, 0x18]
}

/// A Simple payload (protocol 0x10, country 826, state 0) with a 16-byte identifier made of `seed`.
func simplePayload(_ seed: UInt8) -> [UInt8] {
    [0x10, 0x03, 0x3A, 0x00, 0x00] + (0..<16).map { seed &+ UInt8($0) }
}

/// A GATT server as the central procedure sees it.
struct FakePeer {
    var services: [(BluetoothUUID, UInt16, UInt16)]
    var characteristics: [(BluetoothUUID, UInt16)]
    var payload: [UInt8]
    var mtu = 23
    /// Writes received, one entry per Write Request.
    var writes: [[UInt8]] = []
    /// Its server answers Read By Type of a characteristic UUID (every ATT server must, Core 5.4 Vol 3
    /// Part F 4.2; false plays one that refuses it).
    var readsByType = true

    /// The payload characteristic's value handle, if it has one.
    var payloadHandle: UInt16? { characteristics.first { $0.0 == HeraldIdentifiers.payloadCharacteristicUUID }?.1 }

    static func herald(payload: [UInt8], ios: Bool = false, mtu: Int = 23) -> FakePeer {
        FakePeer(services: [(BluetoothUUID(uuid16: 0x1800), 1, 5), (HeraldIdentifiers.serviceUUID, 6, 12)],
                 characteristics: [(HeraldIdentifiers.payloadCharacteristicUUID, 8),
                                   (ios ? HeraldIdentifiers.iosSignalCharacteristicUUID : HeraldIdentifiers.androidSignalCharacteristicUUID, 10)],
                 payload: payload, mtu: mtu)
    }

    static let noHerald = FakePeer(services: [(BluetoothUUID(uuid16: 0x1800), 1, 5), (BluetoothUUID(uuid16: 0x180A), 6, 9)],
                                   characteristics: [], payload: [])

    /// The messages written, with fragments joined back together.
    var joinedWrites: [UInt8] { writes.flatMap { $0 } }
}

struct CentralHarness<let devices: Int, let links: Int> {
    var central: HeraldCentral<devices, links>
    var control = RecordingControl()
    var delegate = RecordingDelegate()
    var now: UInt64 = 1_000

    init(configuration: HeraldSensorConfiguration = HeraldSensorConfiguration.unspread) {
        central = HeraldCentral(configuration: configuration)
        central.start(now: now, control: &control)
    }

    /// The advert's report; what the central asks to do on an inbound link it filed (see
    /// `HeraldCentral.didReceive`).
    @discardableResult
    mutating func advert(_ addr: DeviceAddress, _ data: [UInt8], rssi: Int8 = -60, kind: UInt16 = 0x13)
        -> (handle: UInt16, step: HeraldGATTStep)? {
        let span = data.span
        let report = AdvertisingReport(kind: AdvertisingReportKind(rawValue: kind), address: addr, rssi: rssi,
                                       txPower: nil, advertisingSID: nil, data: span)
        return central.didReceive(advertisingReport: report, now: now, control: &control, delegate: &delegate)
    }

    /// Heard `wait - 1` ms on, `peer` is not connected to yet; heard at `wait`, it is (and nothing else
    /// was): an attempt held back exactly `wait` ms from now.
    mutating func expectFirstAttempt(on peer: DeviceAddress, after wait: UInt64,
                                     sourceLocation: SourceLocation = #_sourceLocation) {
        now += wait - 1
        _ = advert(peer, AdvertData.heraldUUID16)
        #expect(control.connects.isEmpty, sourceLocation: sourceLocation)
        now += 1
        _ = advert(peer, AdvertData.heraldUUID16)
        #expect(control.connects == [peer], sourceLocation: sourceLocation)
    }

    mutating func connect(_ addr: DeviceAddress, handle: UInt16) -> HeraldGATTStep? {
        central.didConnect(handle: handle, peer: addr, isCentral: true, now: now, control: &control)
    }

    mutating func complete(_ handle: UInt16, _ ok: Bool = true) -> HeraldGATTStep? {
        central.gattDidComplete(handle: handle, succeeded: ok, now: now, control: &control, delegate: &delegate)
    }

    /// Answers every step like `peer` would until the procedure is done; returns the steps taken.
    mutating func drive(_ handle: UInt16, peer: inout FakePeer, from first: HeraldGATTStep?) -> [HeraldGATTStep] {
        var steps: [HeraldGATTStep] = []
        var step = first
        while let s = step {
            steps.append(s)
            switch s {
            case .exchangeMTU:
                central.gattDidExchangeMTU(handle: handle, mtu: peer.mtu)
            case .discoverServices:
                for (uuid, start, end) in peer.services { central.gattDidDiscover(handle: handle, service: uuid, start: start, end: end) }
            case .discoverCharacteristics:
                for (uuid, h) in peer.characteristics { central.gattDidDiscover(handle: handle, characteristic: uuid, valueHandle: h) }
            case .readPayload:
                // Read, then Read Blob while a response fills ATT_MTU-1 (Core 5.4 Vol 3 Part G 4.8.3).
                var offset = 0
                repeat {
                    let chunk = Array(peer.payload[offset..<min(peer.payload.count, offset + peer.mtu - 1)])
                    central.gattDidRead(handle: handle, offset: offset, value: chunk.span)
                    offset += chunk.count
                    if chunk.count < peer.mtu - 1 { break }
                } while offset <= peer.payload.count
            case .readPayloadByUUID:
                // Read By Type: ATT_MTU-4 octets, then Read Blob from there while full (Part G 4.8.2).
                guard peer.readsByType, let attribute = peer.payloadHandle else {
                    step = complete(handle, false)
                    continue
                }
                var offset = 0, room = peer.mtu - 4
                repeat {
                    let chunk = Array(peer.payload[offset..<min(peer.payload.count, offset + room)])
                    central.gattDidRead(handle: handle, offset: offset, value: chunk.span, attribute: attribute)
                    offset += chunk.count
                    if chunk.count < room { break }
                    room = peer.mtu - 1
                } while offset <= peer.payload.count
            case .writeSignal(_, let offset, let length):
                precondition(central.outgoingLink == central.linkIndex(handle: handle), "the writing link holds the shared message")
                let message = array(central.outgoing)
                peer.writes.append(Array(message[offset..<(offset + length)]))
            case .needMessage, .done:
                return steps
            }
            step = complete(handle)
        }
        return steps
    }
}

extension CentralHarness {
    /// A peripheral with one link and room for a 1,024-octet signal message (the host wearable's),
    /// so every message a central can write reaches the sensor, oversized payloads included.
    typealias SignalPeripheral = HeraldPeripheral<FixedPayloadSource<32>, StandardServerOffer, 1, 32, 1024>

    /// `message` as a peer writes it to our signal characteristic, on the path that ships: one ATT
    /// write on a fresh link from `peer` to the Herald peripheral, which reassembles and decodes it
    /// (`HeraldPeripheral.write`, `deliver`), then the sensor's `SensorCore` into this central, as
    /// `HeraldSensor.write` does. Returns the ATT error the writer gets (nil: accepted).
    @discardableResult
    mutating func peerWrites(_ message: [UInt8], from peer: DeviceAddress, now: UInt64? = nil) throws -> ATTErrorCode? {
        let source = try FixedPayloadSource<32>(bytes: simplePayload(0x90).span)
        var peripheral = try SignalPeripheral(source: source, advertising: HeraldAdvertisingConfiguration(),
                                              clock: HeraldClock(unixMillisAtZero: 0))
        var core = SensorCore(supplier: SimplePayloadLayout(), delegate: delegate, central: central)
        core.now = now ?? self.now
        var stack = StackControl()
        let link = ConnectionSummary(handle: 0x40, role: .peripheral, peer: peer,
                                     timing: ConnectionTiming(interval: 24, latency: 0, supervisionTimeout: 72))
        peripheral.stackDidConnect(link, now: core.now, control: &stack, delegate: &core)
        let answer = peripheral.write(id: peripheral.signalID, link: 0x40, offset: 0, value: message.span, delegate: &core)
        central = core.central
        delegate = core.delegate
        return answer
    }
}

extension HeraldSensorConfiguration {
    /// The defaults without the random delays of `HeraldCentral+Crowd` or the pause after a link's
    /// end, for tests that follow one device's decisions step by step (`SensorCrowdTests` tests both).
    static var unspread: HeraldSensorConfiguration {
        var c = HeraldSensorConfiguration()
        c.firstAttemptSpread = 0
        c.retrySpread = 0
        c.attemptDelayAfterDisconnection = 0
        return c
    }
}
