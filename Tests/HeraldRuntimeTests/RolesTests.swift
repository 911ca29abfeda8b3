import BluetoothHost
import Foundation
import Testing
@testable import HeraldRuntime

func bytes(_ span: Span<UInt8>) -> [UInt8] {
    var out: [UInt8] = []
    for i in span.indices { out.append(span[i]) }
    return out
}

/// Collects what a delegate read writes.
struct ReadSink: ByteSink {
    var bytes: [UInt8] = []
    mutating func append(_ byte: UInt8) { bytes.append(byte) }
}

@Suite struct TestServerTests {
    // The whole 8-link stack is too big for a test thread's stack in debug builds, so these tests
    // build the database and the application separately (`makeStack` only joins the two).
    func makeApp() throws -> TestServer {
        let (_, h) = try TestServer.makeDatabase(name: "herald-test")
        return TestServer(name: "herald-test", count: 3, handles: h, links: TestServerDatabase.linkCount, now: 100)
    }

    /// No two links the server may hold share an interval or one a multiple of another's: their
    /// events' offset must move (`TestServer.streamingInterval`, the Zephyr < 3.2 abort it avoids).
    @Test func eachLinkStreamsAtAnIntervalCoprimeToTheOthers() {
        func gcd(_ a: UInt16, _ b: UInt16) -> UInt16 { b == 0 ? a : gcd(b, a % b) }
        let intervals = (0..<TestServerDatabase.linkCount).map { TestServer.streamingInterval(entry: $0) }
        #expect(intervals.first == 6)  // 7.5 ms for a lone client: the benchmarks' figure
        #expect(intervals.allSatisfy { (6...0x0C80).contains($0) })
        for i in intervals.indices {
            for j in intervals.indices where j > i {
                #expect(gcd(intervals[i], intervals[j]) == 1, "slots \(i), \(j): \(intervals[i]), \(intervals[j])")
            }
        }
    }

    @Test func databaseLayoutMatchesTheProfile() throws {
        let (db, h) = try TestServer.makeDatabase(name: "herald-test")
        // GAP 1-5 and GATT 6-13 come first; ours starts at 14, Battery after it.
        #expect(h.service == 14 && h.longValue == 16 && h.writable == 19 && h.notifying == 21)
        #expect(h.indicating == 24 && h.battery == 28)
        #expect(bytes(db.value(h.longValue)) == (0..<200).map { UInt8($0) })
        #expect(db.attribute(h.notifying)?.cccdHandle == 22 && db.attribute(h.indicating)?.cccdHandle == 25)
        #expect(db.attribute(h.writable)?.properties.contains(.writeWithoutResponse) == true)
        #expect(bytes(db.value(h.battery)) == [TestProfile.batteryPercent])
    }

    @Test func executeWritePartsBecomeOneWriteEventPerLink() throws {
        var app = try makeApp()
        let id = TestProfile.writableID
        // Two links, named by handle (the entries are the server's own).
        app.links[0].handle = 0x0040
        app.links[1].handle = 0x0041
        // Two parts of one long write on link 0x40, a separate short write on link 0x41.
        #expect(app.write(id: id, link: 0x0040, offset: 0, value: [1, 2, 3].span) == nil)
        #expect(app.write(id: id, link: 0x0040, offset: 3, value: [4, 5].span) == nil)
        #expect(app.write(id: id, link: 0x0041, offset: 0, value: [9].span) == nil)
        // A part that leaves a gap is refused, and the value so far is kept.
        #expect(app.write(id: id, link: 0x0040, offset: 9, value: [7].span) == .invalidOffset)
        let events = app.takeEvents().filter { $0.event == "write" }
        #expect(events.map(\.value) == ["0102030405", "09"])
        #expect(events.map(\.handle) == [0x0040, 0x0041] && events.map(\.parts) == [2, 1] && events.map(\.length) == [5, 1])
        #expect(app.takeEvents().isEmpty)
        // Each link reads back its own last value, from any offset.
        var sink = ReadSink()
        #expect(app.read(id: id, link: 0x0040, offset: 2, into: &sink) == nil)
        #expect(sink.bytes == [3, 4, 5])
        sink = ReadSink()
        #expect(app.read(id: id, link: 0x0041, offset: 0, into: &sink) == nil && sink.bytes == [9])
        #expect(app.read(id: id, link: 0x0041, offset: 2, into: &sink) == .invalidOffset)
        #expect(app.write(id: id, link: 0x0040, offset: 0, value: [UInt8](repeating: 0, count: 513).span)
                == .invalidAttributeValueLength)
        #expect(app.write(id: 99, link: 0x0040, offset: 0, value: [1].span) == .writeNotPermitted)
    }

    @Test func subscriptionsAreReportedAndRestartTheCounter() throws {
        var app = try makeApp()
        let h = app.handles
        app.links[2].handle = 0x0042
        app.clientConfigurationChanged(valueHandle: h.notifying, link: 0x0042, configuration: .notification)
        app.links[2].notified = 3
        app.clientConfigurationChanged(valueHandle: h.notifying, link: 0x0042, configuration: GATTClientConfiguration(rawValue: 0))
        app.clientConfigurationChanged(valueHandle: h.notifying, link: 0x0042, configuration: .notification)
        #expect(app.links[2].notifying && app.links[2].notified == 0)
        app.clientConfigurationChanged(valueHandle: h.indicating, link: 0x0042, configuration: .indication)
        let events = app.takeEvents()
        #expect(events.map(\.event) == ["subscribed", "subscribed", "subscribed", "subscribed"])
        #expect(events.map(\.notify) == [true, false, true, false] && events.map(\.indicate) == [false, false, false, true])
        #expect(events.last?.attribute == h.indicating && events.last?.handle == 0x0042)
        #expect(TestServer.counterBytes(0x01020304) == [4, 3, 2, 1])
    }

    @Test func advertisingCarriesFlagsBatteryNameAndOurServiceInTheScanResponse() throws {
        let app = try makeApp()
        let intent = app.advertisingIntent()
        let adv = bytes(intent.data.span)
        #expect(adv.starts(with: [0x02, 0x01, 0x06, 0x03, 0x03, 0x0F, 0x18]))
        #expect(adv.dropFirst(7).starts(with: [12, 0x09] + Array("herald-test".utf8)))
        let scan = bytes(intent.scanResponse.span)
        #expect(scan.count == 18 && scan[0] == 17 && scan[1] == 0x07)
        #expect(intent.restartAfterConnection)
    }
}

@Suite struct GATTDumperTests {
    /// A database of two services: the first with a readable characteristic carrying two
    /// descriptors and a write-only one at the end; the second empty.
    func dumper() -> GATTDumper {
        var d = GATTDumper(peer: DeviceAddress(type: .randomDevice, address: .zero), connectTimeout: 1_000)
        var s1 = GATTDump.Service(uuid: "a", start: 10, end: 20)
        var c1 = GATTDump.Characteristic(uuid: "c1", declaration: 11, handle: 12, properties: 0x12, propertyNames: [], value: nil, error: nil)
        c1.descriptors = [GATTDump.Descriptor(uuid: "2902", handle: 13), GATTDump.Descriptor(uuid: "2901", handle: 14)]
        let c2 = GATTDump.Characteristic(uuid: "c2", declaration: 15, handle: 16, properties: 0x08, propertyNames: [], value: nil, error: nil)
        s1.characteristics = [c1, c2]
        d.collector.dump.services = [s1, GATTDump.Service(uuid: "b", start: 21, end: 21)]
        return d
    }

    @Test func walkVisitsEveryStepInOrderAndSkipsWhatNeedsNoRequest() {
        let d = dumper()
        var steps: [GATTDumper.Step] = []
        var step: GATTDumper.Step? = .mtu
        while let s = step {
            steps.append(s)
            step = d.following(s)
        }
        #expect(steps == [
            .mtu, .services, .characteristics(service: 0), .characteristics(service: 1),
            .descriptors(service: 0, characteristic: 0), .descriptors(service: 0, characteristic: 1),
            .readValue(service: 0, characteristic: 0),
            .readDescriptor(service: 0, characteristic: 0, descriptor: 0),
            .readDescriptor(service: 0, characteristic: 0, descriptor: 1),
            .readValue(service: 0, characteristic: 1),
        ])
        // Descriptors of the first characteristic lie between its value and the next declaration;
        // the last one's range runs to the service end.
        #expect(d.procedureFor(.descriptors(service: 0, characteristic: 0)) == .discoverAllDescriptors(13, 14))
        #expect(d.procedureFor(.descriptors(service: 0, characteristic: 1)) == .discoverAllDescriptors(17, 20))
        #expect(d.procedureFor(.characteristics(service: 1)) == .discoverAllCharacteristics(21, 21))
        // Only characteristics with the read property are read.
        #expect(d.procedureFor(.readValue(service: 0, characteristic: 0)) == .readLong(12))
        #expect(d.procedureFor(.readValue(service: 0, characteristic: 1)) == nil)
        #expect(d.procedureFor(.readDescriptor(service: 0, characteristic: 0, descriptor: 1)) == .readLong(14))
    }

    @Test func jsonNamesAssignedUUIDsAsTheTextDoes() throws {
        var dump = GATTDump(address: "00:00:00:00:00:00")
        var gap = GATTDump.Service(uuid: "1800", start: 1, end: 3)
        var name = GATTDump.Characteristic(uuid: "2A00", declaration: 2, handle: 3, properties: 0x02, propertyNames: [], value: nil, error: nil)
        name.descriptors = [GATTDump.Descriptor(uuid: "2901", handle: 4)]
        gap.characteristics = [name]
        dump.services = [gap, GATTDump.Service(uuid: "9d2c0001-0000-0000-0000-000000000000", start: 5, end: 5)]
        let named = dump.named()
        #expect(named.services[0].name == AssignedNumbers.name("1800") && named.services[0].name != nil)
        #expect(named.services[0].characteristics[0].name == AssignedNumbers.name("2a00") && named.services[0].characteristics[0].name != nil)
        #expect(named.services[0].characteristics[0].descriptors[0].name == AssignedNumbers.name("2901"))
        #expect(named.services[1].name == nil)
        let json = String(decoding: try JSONEncoder().encode(named), as: UTF8.self)
        #expect(json.contains("\"name\":\"\(named.services[0].name ?? "-")\""))
    }

    @Test func errorsAreRecordedWhereTheyHappen() {
        var d = dumper()
        d.step = .readValue(service: 0, characteristic: 0)
        d.record(.readLong, error: .attError(.insufficientAuthentication, handle: 12), now: 5)
        #expect(d.dump.services[0].characteristics[0].error == "ATT error 0x05 on handle 0x000c")
        #expect(d.state == .connecting)
        d.step = .readDescriptor(service: 0, characteristic: 0, descriptor: 1)
        d.collector.readValue = [0x41, 0x42]
        d.record(.readLong, error: nil, now: 6)
        #expect(d.dump.services[0].characteristics[0].descriptors[1].value == "4142")
        // A failed discovery ends the dump with the reason.
        d.step = .characteristics(service: 1)
        d.record(.discoverAllCharacteristics, error: .timeout, now: 7)
        #expect(d.state == .finished && d.dump.error == "discoverAllCharacteristics: no response within 30 s")
    }
}
