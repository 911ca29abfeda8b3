import Foundation
import Testing
import Herald
@testable import HeraldRuntime

/// `herald analyse` past one payload period: two wearables whose payloads rotate read each other
/// throughout; their logs are written by `LogDirectory` exactly as the wearable writes them.
@Suite("Analyse: rotating payloads and shared names")
struct AnalyseRotationTests {
    /// A Simple payload for `device` in `period` (its identifier changes every period, as with rotation).
    static func payload(device: UInt8, period: Int) -> [UInt8] {
        [0x10, 0x00, 0x00, 0x00, 0x00, device, UInt8(truncatingIfNeeded: period)] + [UInt8](repeating: 0xA5, count: 14)
    }

    /// Each wearable reads the other after every rotation (a new address, so a new target, as a
    /// resolvable private address without a pseudo device address gives) and measures it every 2 s.
    /// `servedLog` false deletes `served-payloads.csv` afterwards: what the reference apps' logs give.
    static func twoWearables(periods: Int, periodSeconds: Int, servedLog: Bool = true) throws -> [DeviceLog] {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("herald-rotation-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let t0 = Date(timeIntervalSince1970: 1_795_000_000)
        var logs: [LogDirectory] = []
        for device in 0..<2 {
            let config = LogDirectory.Configuration(deviceName: "w\(device)", ownPayload: payload(device: UInt8(device), period: 0))
            logs.append(try LogDirectory(path: root + "/w\(device)", configuration: config))
        }
        for period in 0..<periods {
            for observer in 0..<2 {
                let observed = 1 - observer
                let start = t0.addingTimeInterval(Double(period * periodSeconds))
                let target = "T\(period + 1)"
                let served = payload(device: UInt8(observed), period: period)
                logs[observed].recordServed(served, at: start.addingTimeInterval(1))
                logs[observer].record(.detect(target, at: start))
                logs[observer].record(.read(served, from: target, at: start.addingTimeInterval(1)))
                for s in stride(from: 0, to: periodSeconds, by: 2) {
                    logs[observer].record(.measure(rssi: -60, from: target, at: start.addingTimeInterval(Double(s))))
                }
            }
        }
        for l in logs { try l.close() }
        var devices: [DeviceLog] = []
        for device in 0..<2 {
            let dir = root + "/w\(device)"
            if !servedLog { try FileManager.default.removeItem(atPath: dir + "/" + ServedPayloadLog.fileName) }
            let (log, bad) = try DeviceLogReader.load(dir)
            #expect(bad.isEmpty, "\(bad)")
            devices.append(log)
        }
        return devices
    }

    @Test func continuityHoldsAcrossPayloadPeriods() throws {
        // Five 60 s periods (a shortened payload period): ten minutes of test, 20 windows per pair.
        let devices = try Self.twoWearables(periods: 5, periodSeconds: 60)
        #expect(devices[0].servedNames.count == 5)
        // The first payload each served, as bytes, for analyse's decoded "served" lines.
        let first = try #require(devices[0].firstServedPayload)
        #expect(first == Self.payload(device: 0, period: 0))
        #expect(PayloadDescription.text(first, order: .bigEndian).hasPrefix("Simple 0/0 "))
        let report = try EfficacyAnalysis.analyse(devices)
        #expect(report.detectedPairs == 2)
        #expect(report.continuity >= 0.99, "\(report.table)")
        #expect(report.unknownPeerReadings == 0)
        #expect(report.sharedNames.isEmpty)
    }

    /// The same run with only `detection.csv` (its first payload) names each device: every period
    /// after the first is lost. This is what the analysis scored before, and shows the test can fail.
    @Test func withoutTheServedPayloadsOnlyTheFirstPeriodCounts() throws {
        let devices = try Self.twoWearables(periods: 5, periodSeconds: 60, servedLog: false)
        let report = try EfficacyAnalysis.analyse(devices)
        #expect(report.continuity < 0.25)
        #expect(report.unknownPeerReadings > 0)
    }

    @Test func twoDevicesClaimingOneNameAreReported() throws {
        var a = DeviceLog(directory: "a", deviceName: "A", operatingSystem: "Linux", operatingSystemVersion: "1")
        var b = DeviceLog(directory: "b", deviceName: "B", operatingSystem: "Linux", operatingSystemVersion: "1")
        a.shortName = "AAECAw"
        b.shortName = "AAECAw"
        a.readings = [.init(time: 1_000, peer: "AAECAw"), .init(time: 31_000, peer: "AAECAw")]
        b.readings = [.init(time: 1_000, peer: "AAECAw")]
        a.firstTime = 0; a.lastTime = 60_000; b.firstTime = 0; b.lastTime = 60_000
        let report = try EfficacyAnalysis.analyse([a, b])
        #expect(report.sharedNames == [SharedShortName(name: "AAECAw", devices: [0, 1])])
        #expect(report.sharedNameReadings == 3)
        #expect(report.detectedPairs == 0)
        #expect(report.table.contains("warning: short name AAECAw is claimed by A [AAECAw] and B [AAECAw]"))
    }

    @Test func eachWearableHasItsOwnTestIdentifier() {
        let a = TestPayloadIdentity.derived(deviceName: "host", logDirectory: "/tmp/logs-a")
        let b = TestPayloadIdentity.derived(deviceName: "host", logDirectory: "/tmp/logs-b")
        let a2 = TestPayloadIdentity.derived(deviceName: "host", logDirectory: "/tmp/x/../logs-a")
        let bytes = { (id: ContactIdentifier) in (0..<16).map { id[$0] } }
        #expect(bytes(a) != bytes(b))
        #expect(bytes(a) == bytes(a2))
        #expect(bytes(TestPayloadIdentity.parse("000102030405060708090a0b0c0d0e0f")!) == bytes(TestPayloadIdentity.legacy))
        #expect(TestPayloadIdentity.parse("0001") == nil)
        #expect(TestPayloadIdentity.parse(String(repeating: "zz", count: 16)) == nil)
        #expect(TestPayloadIdentity.parse("+f" + String(repeating: "00", count: 15)) == nil)
    }
}
