// Host-side benchmarks: H4 decoding, an ATT read round trip through the whole stack, and advert
// processing. Each reports wall time and mallocs.
import Benchmark
import BluetoothHost
import Herald

// No `.instructions`: on Linux that metric makes the harness read /proc/self/io and /proc/self/stat
// at the start and end of every sample, and those reads' 16 allocations were counted as the code's
// (the "16 mallocs per iteration" of H4 decode and contact identifiers). This VM has no hardware
// counters to report anyway.
let hostMetrics: [BenchmarkMetric] = [.wallClock, .throughput, .mallocCountTotal]

/// Decodes every packet the H4 framer hands over, as the host would: event header or ACL header.
struct DecodingHandler: H4PacketHandler {
    var events = 0, acl = 0, malformed = 0, octets = 0
    mutating func h4Packet(type: H4PacketType, packet: Span<UInt8>) {
        let body = packet.extracting(1..<packet.count)
        switch type {
        case .event:
            if let e = try? HCIEventPacket(parsing: body) { events += 1; octets += e.parameters.count } else { malformed += 1 }
        case .acl:
            if let a = try? HCIACLDataPacket(parsing: body) { acl += 1; octets += a.data.count } else { malformed += 1 }
        default:
            malformed += 1
        }
    }
}

/// The GATT server the round trip reads from: GAP/GATT services plus a 200-octet value.
struct ServerApp: LEApplication {}
typealias ServerStack = BluetoothStack<ServerApp, 1, 16, 512>

func makeServer() -> (stack: ServerStack, valueHandle: UInt16, now: UInt64) {
    let name: [UInt8] = Array("herald".utf8)
    var db = try! GATTDatabase<16, 512, 1>(deviceName: name.span)
    try! db.addPrimaryService(BluetoothUUID(uuid16: 0xFFF0))
    let value = [UInt8](repeating: 0xA5, count: 200)
    let handles = try! db.addCharacteristic(BluetoothUUID(uuid16: 0xFFF1), properties: .read, permissions: .read,
                                            value: .stored(value.span, maxLength: 200))
    var stack = ServerStack(configuration: HostConfiguration(randomAddressSeed: [1, 2, 3, 4, 5, 6]), database: db, app: ServerApp())
    let controller = ScriptedController()
    let now = controller.bringUp(&stack)
    var wire = RecordingOutput()
    stack.receive(ScriptedController.connectionComplete(handle: 0x40, peer: [1, 2, 3, 4, 5, 0xC6]).span, now: now, output: &wire)
    controller.settle(&stack, now: now, wire: &wire)
    // MTU 247 so the whole value fits one Read Response (Core 5.4 Vol 3 Part F 3.4.2).
    var exchange = ScriptedController.attPacket(handle: 0x40, pdu: [0x02, 0xF7, 0x00])
    exchange += ScriptedController.completed(handle: 0x40)
    stack.receive(exchange.span, now: now, output: &wire)
    precondition(stack.le.mtu(handle: 0x40) == 247, "MTU exchange failed")
    return (stack, handles.value, now)
}

/// An advertising application: classify, file under one of 64 tracked devices, emit an RSSI event.
struct AdvertApp: LEApplication {
    var addresses = InlineArray<64, BDAddress>(repeating: .zero)
    var rssi = InlineArray<64, Int8>(repeating: 0)
    var lastSeen = InlineArray<64, UInt64>(repeating: 0)
    var tracked = 0
    var rssiEvents = 0
    var heraldReports = 0

    mutating func stackDidReceive(advertisingReport r: borrowing AdvertisingReport, now: UInt64, control: inout StackControl) {
        guard let c = try? HeraldAdvertClassification(advertisingData: r.data), c.kind == .herald else { return }
        heraldReports += 1
        let address = r.address.address
        var slot = -1
        for i in 0..<tracked where addresses[i] == address { slot = i; break }
        if slot < 0 {
            slot = tracked < 64 ? tracked : 0
            if tracked < 64 { tracked += 1 }
            addresses[slot] = address
        }
        lastSeen[slot] = now
        if let value = r.rssi { rssi[slot] = value; rssiEvents += 1 }
    }
}

/// Counts the RSSI events the sensor reports.
struct CountingSensorDelegate: SensorDelegate {
    var measurements = 0
    var detected = 0
    mutating func sensor(_ sensor: SensorType, didDetect target: TargetIdentifier) { detected += 1 }
    mutating func sensor(_ sensor: SensorType, didMeasure proximity: Proximity, fromTarget target: TargetIdentifier) {
        measurements += 1
    }
}

/// The core's Herald central (classification, `HeraldDeviceDatabase`, scheduling) as the application.
struct SensorAdvertApp: LEApplication {
    var central = HeraldCentral<64, 1>()
    var delegate = CountingSensorDelegate()
    mutating func stackDidReceive(advertisingReport r: borrowing AdvertisingReport, now: UInt64, control: inout StackControl) {
        central.didReceive(advertisingReport: r, now: now, control: &control, delegate: &delegate)
    }
}

/// HCI LE Advertising Report events (Core 5.4 Vol 4 Part E 7.7.65.2) from 64 Herald devices, half of
/// them with a pseudo device address as well.
func advertisingReports(eventType: UInt8 = 0x00) -> [[UInt8]] {
    let herald = try! HeraldAdvertisement()
    var data: [UInt8] = []
    for i in 0..<herald.advertisingData.count { data.append(herald.advertisingData[i]) }
    return (0..<64).map { d -> [UInt8] in
        var ad = data
        if d % 2 == 0 { ad += [0x09, 0xFF, 0xFA, 0xFF, UInt8(d), 1, 2, 3, 4, 5] }
        let address: [UInt8] = [UInt8(d), 0x22, 0x33, 0x44, 0x55, 0x40 | UInt8(d & 0x3F)]
        let params: [UInt8] = [0x02, 0x01, eventType, 0x01] + address + [UInt8(ad.count)] + ad + [UInt8(bitPattern: -50 - Int8(d % 20))]
        return [0x04, 0x3E, UInt8(params.count)] + params
    }
}

func hostBenchmarks() {
    // H4 decode: the captures' controller-to-host stream, repeated to 64 KiB, framed and decoded:
    // in one read, and in 64-octet reads as a UART driver delivers it (packets straddle reads, so the
    // framer buffers them, header byte by byte, body in one copy, instead of handing them over in place).
    let (stream, packetCount) = Captures.stream(atLeast: 64 * 1024)
    for (name, readSize) in [("H4 decode (\(stream.count) octets, \(packetCount) recorded events+ACL)", stream.count),
                             ("H4 decode in 64-octet reads (\(stream.count) octets)", 64)] {
        Benchmark(name, configuration: .init(metrics: hostMetrics, maxDuration: .seconds(3))) { benchmark in
            benchmark.startMeasurement()
            defer { benchmark.stopMeasurement() }
            for _ in benchmark.scaledIterations {
                var framer = H4Framer<260>()
                var handler = DecodingHandler()
                var offset = 0
                let bytes = stream.span
                while offset < bytes.count {
                    let end = min(offset + readSize, bytes.count)
                    framer.feed(bytes.extracting(offset..<end), to: &handler)
                    offset = end
                }
                precondition(handler.events + handler.acl == packetCount && handler.malformed == 0)
                blackHole(handler.octets)
            }
        }
    }

    // ATT round trip: Read Request as H4 bytes in, Read Response as H4 bytes out; the controller's
    // Number Of Completed Packets for the previous response rides along, as on a real link.
    Benchmark("ATT read round trip (200-octet value, H4 in to H4 out)",
              configuration: .init(metrics: hostMetrics, scalingFactor: .kilo, maxDuration: .seconds(3))) { benchmark in
        var (stack, valueHandle, now) = makeServer()
        var input = ScriptedController.attPacket(handle: 0x40, pdu: [0x0A, UInt8(valueHandle & 0xFF), UInt8(valueHandle >> 8)])
        input += ScriptedController.completed(handle: 0x40)
        var out = LastPacketOutput()
        stack.receive(input.span, now: now, output: &out)
        precondition(out.packets == 1 && out.last.count == 210 && out.last[9] == 0x0B, "no Read Response")
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            now &+= 1
            stack.receive(input.span, now: now, output: &out)
        }
        benchmark.stopMeasurement()
        precondition(out.packets == benchmark.scaledIterations.count + 1)
        blackHole(out.bytes)
    }

    // The same 1,000 requests as one iteration, against the empty baseline below: the harness's own
    // allocations per sample show there, so any allocation by the stack shows as a difference.
    Benchmark("ATT read round trip x1000 (allocation check)",
              configuration: .init(metrics: [.mallocCountTotal, .wallClock], maxDuration: .seconds(2))) { benchmark in
        var (stack, valueHandle, now) = makeServer()
        var input = ScriptedController.attPacket(handle: 0x40, pdu: [0x0A, UInt8(valueHandle & 0xFF), UInt8(valueHandle >> 8)])
        input += ScriptedController.completed(handle: 0x40)
        var out = LastPacketOutput()
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            for _ in 0..<1000 {
                now &+= 1
                stack.receive(input.span, now: now, output: &out)
            }
        }
        benchmark.stopMeasurement()
        precondition(out.packets == benchmark.scaledIterations.count * 1000)
    }
    Benchmark("Baseline: empty iteration (harness allocations per sample)",
              configuration: .init(metrics: [.mallocCountTotal, .wallClock], maxDuration: .seconds(1))) { benchmark in
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations { blackHole(0) }
        benchmark.stopMeasurement()
    }

    // A non-allocating busy loop as long as the slower rows: allocations it shows are the harness's
    // (its sampling thread), not the code under test.
    Benchmark("Baseline: 150 us busy loop (harness allocations per long sample)",
              configuration: .init(metrics: [.mallocCountTotal, .wallClock], maxDuration: .seconds(1))) { benchmark in
        var x: UInt64 = 1
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            for _ in 0..<150_000 { x = x &* 6364136223846793005 &+ 1442695040888963407; blackHole(x) }
        }
        benchmark.stopMeasurement()
        blackHole(x)
    }

    // Advert processing: LE Advertising Report bytes → stack → classification → 64-device table →
    // RSSI event, one report per iteration, cycling through the devices.
    let reports = advertisingReports()
    Benchmark("Advert report to RSSI event (64 devices, classification + table)",
              configuration: .init(metrics: hostMetrics, scalingFactor: .kilo, maxDuration: .seconds(3))) { benchmark in
        var stack = BluetoothStack<AdvertApp, 1, 16, 128>(
            configuration: HostConfiguration(randomAddressSeed: [1, 2, 3, 4, 5, 6]),
            database: try! GATTDatabase<16, 128, 1>(deviceName: [UInt8]("h".utf8).span), app: AdvertApp())
        var now = ScriptedController().bringUp(&stack)
        var out = LastPacketOutput()
        var i = 0
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            now &+= 1
            let report = reports[i]
            stack.receive(report.span, now: now, output: &out)
            i = (i + 1) & 63
        }
        benchmark.stopMeasurement()
        precondition(stack.app.rssiEvents == benchmark.scaledIterations.count && stack.app.tracked == 64)
    }

    // The same path through the core's sensor: HeraldCentral classifies, files the report in its
    // 64-device HeraldDeviceDatabase and reports the RSSI to its SensorDelegate. The adverts are
    // non-connectable (ADV_NONCONN_IND) so the scheduler never starts a connection mid-measurement.
    let nonConnectable = advertisingReports(eventType: 0x03)
    Benchmark("Advert report to RSSI event through HeraldCentral (64-device database)",
              configuration: .init(metrics: hostMetrics, scalingFactor: .kilo, maxDuration: .seconds(3))) { benchmark in
        var stack = BluetoothStack<SensorAdvertApp, 1, 16, 128>(
            configuration: HostConfiguration(randomAddressSeed: [1, 2, 3, 4, 5, 6]),
            database: try! GATTDatabase<16, 128, 1>(deviceName: [UInt8]("h".utf8).span), app: SensorAdvertApp())
        let controller = ScriptedController()
        var now = controller.bringUp(&stack)
        var wire = RecordingOutput()
        stack.perform(now: now, output: &wire) { le in le.app.central.start(now: now, control: &le.control) }
        controller.settle(&stack, now: now, wire: &wire)
        var out = LastPacketOutput()
        var i = 0
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            now &+= 1
            let report = nonConnectable[i]
            stack.receive(report.span, now: now, output: &out)
            i = (i + 1) & 63
        }
        benchmark.stopMeasurement()
        precondition(stack.app.delegate.measurements == benchmark.scaledIterations.count
                     && stack.app.delegate.detected == 64 && stack.app.central.database.count == 64,
                     "measurements \(stack.app.delegate.measurements) detected \(stack.app.delegate.detected)")
    }

    // Classification alone, on the advertising data of the same reports.
    let adverts: [[UInt8]] = reports.map { Array($0[14..<(14 + Int($0[13]))]) }
    Benchmark("Advert classification alone (HeraldAdvertClassification)",
              configuration: .init(metrics: hostMetrics, scalingFactor: .kilo, maxDuration: .seconds(3))) { benchmark in
        var herald = 0
        var i = 0
        for _ in benchmark.scaledIterations {
            let advert = adverts[i]
            if let c = try? HeraldAdvertClassification(advertisingData: advert.span), c.kind == .herald { herald += 1 }
            i = (i + 1) & 63
        }
        precondition(herald == benchmark.scaledIterations.count)
    }
}
