import BluetoothHost
import Foundation
import Testing
@testable import HeraldRuntime

private let advInd = AdvertisingReportKind(rawValue: 0b001_0011)
private let scanRsp = AdvertisingReportKind(rawValue: 0b001_1010)

private func address(_ last: UInt8) -> DeviceAddress {
    DeviceAddress(type: .randomDevice, address: BDAddress(displayOrder: 0xC0, 0x11, 0x22, 0x33, 0x44, last))
}

@discardableResult
private func feed(_ s: inout ScanSummary, _ kind: AdvertisingReportKind, _ a: DeviceAddress, rssi: Int8?, _ data: [UInt8],
                  at now: UInt64, txPower: Int8? = nil) -> Bool {
    data.withUnsafeBufferPointer { b in
        let r = AdvertisingReport(kind: kind, address: a, rssi: rssi, txPower: txPower, advertisingSID: nil, data: Span(_unsafeElements: b))
        return s.add(r, now: now)
    }
}

/// Flags, the registered Herald UUID 0xFCF6, Tx Power Level −8 dBm.
private let heraldAdvert: [UInt8] = [0x02, 0x01, 0x06, 0x03, 0x03, 0xF6, 0xFC, 0x02, 0x0A, 0xF8]

@Suite struct ScanSummaryTests {
    @Test func intervalsAndRSSIPerDevice() throws {
        var s = ScanSummary(start: 500)
        let a = address(0x01)
        #expect(feed(&s, advInd, a, rssi: -50, heraldAdvert, at: 1000))
        #expect(!feed(&s, advInd, a, rssi: -60, heraldAdvert, at: 2100))
        // A scan response counts for RSSI but is not an advert (no interval from it).
        feed(&s, scanRsp, a, rssi: -45, [0x05, 0x09, 0x6E, 0x61, 0x6D, 0x65], at: 2105)
        feed(&s, advInd, a, rssi: -55, heraldAdvert, at: 3000)
        let d = try #require(s.devices.first)
        #expect(d.kind == .herald)  // Herald service, payload not read: wearable or beacon unknown
        #expect(d.address == "C0:11:22:33:44:01" && d.addressType == "random")
        #expect(d.rssiNow == -55)
        #expect(d.adverts == 3 && d.scanResponses == 1)
        #expect(d.name == "name")
        #expect(d.txPower == -8)
        // Intervals 1100 and 900 ms.
        let i = try #require(d.interval)
        #expect(i.count == 2 && i.mean == 1000 && i.min == 900 && i.max == 1100)
        #expect(abs(i.sd! - 141.4213562373095) < 1e-9)
        // RSSI −50, −60, −45, −55: mean −52.5, sample sd √(125/3).
        let r = try #require(d.rssi)
        #expect(r.count == 4 && r.mean == -52.5 && r.min == -60 && r.max == -45)
        #expect(abs(r.sd! - (125.0 / 3).squareRoot()) < 1e-9)
        #expect(d.firstSeen == 0.5 && d.lastSeen == 2.5)
        #expect(s.reports == 4)
    }

    @Test func kindsFromTheHeraldClassification() {
        var s = ScanSummary(start: 0)
        // Pseudo device address: manufacturer 0xFFFA with six bytes.
        feed(&s, advInd, address(1), rssi: -40, [0x09, 0xFF, 0xFA, 0xFF, 1, 2, 3, 4, 5, 6], at: 1)
        // Apple "nearby" manufacturer data only: connect to check.
        feed(&s, advInd, address(2), rssi: -41, [0x04, 0xFF, 0x4C, 0x00, 0x10], at: 2)
        // iBeacon: Apple, but a beacon.
        feed(&s, advInd, address(3), rssi: -42, [0x04, 0xFF, 0x4C, 0x00, 0x02], at: 3)
        // Structure running past the end: counted as malformed, still listed.
        feed(&s, advInd, address(4), rssi: -43, [0x05, 0x09, 0x41], at: 4)
        feed(&s, advInd, address(4), rssi: nil, [], at: 5, txPower: 4)
        let byAddress = Dictionary(uniqueKeysWithValues: s.devices.map { ($0.address, $0) })
        #expect(byAddress["C0:11:22:33:44:01"]?.kind == .android)  // a Herald Android phone's pseudo address
        #expect(byAddress["C0:11:22:33:44:01"]?.pseudoAddress == "010203040506")
        #expect(byAddress["C0:11:22:33:44:02"]?.kind == .appleOther)
        #expect(byAddress["C0:11:22:33:44:03"]?.kind == .other)
        let four = byAddress["C0:11:22:33:44:04"]
        #expect(four?.kind == .other && four?.malformedReports == 1)
        #expect(four?.rssi?.count == 1 && four?.reportTxPower == 4)
        // Most reports first.
        #expect(s.devices.first?.address == "C0:11:22:33:44:04")
        let table = s.table(durationSeconds: 5)
        #expect(table.hasPrefix("4 device(s), 5 report(s) in 5.0 s\nKIND"))
        #expect(table.contains(/Android +C0:11:22:33:44:01 \(random\)  010203040506/))
    }

    @Test func liveTableStrongestFirstWithKindsPayloadsAndColour() {
        var s = ScanSummary(start: 0)
        feed(&s, advInd, address(1), rssi: -70, heraldAdvert, at: 1000)
        feed(&s, advInd, address(1), rssi: -72, heraldAdvert, at: 1500)
        feed(&s, advInd, address(2), rssi: -40, heraldAdvert, at: 1200)
        feed(&s, advInd, address(3), rssi: -60, [0x04, 0xFF, 0x4C, 0x00, 0x02], at: 1300)
        // Venue beacon payload read over GATT: protocol 0x30, country 826, state 0, location 12345, premises "Cafe".
        let venue: [UInt8] = [0x30, 0x03, 0x3A, 0x00, 0x00, 0x00, 0x00, 0x30, 0x39, 0x10, 0x04] + Array("Cafe".utf8)
        s.attach(.payload(venue), to: "C0:11:22:33:44:02")
        let plain = ScanLiveTable(colour: false).render(s, elapsed: 3, title: "herald scan")
        let lines = plain.split(separator: "\n").map(String.init)
        #expect(lines[0] == "herald scan — 3 device(s), 4 report(s), 3 s — sorted by RSSI (keys: r RSSI, l last seen, i interval, a address)")
        #expect(lines[1].hasPrefix("ADDRESS") && lines[1].contains("KIND") && lines[1].contains("LAST SEEN"))
        // −40 first, then −60, then the device whose latest report was −72.
        #expect(lines[2].hasPrefix("C0:11:22:33:44:02  venue beacon"))
        #expect(lines[2].contains("venue 826/0 location 12345 \"Cafe\""))
        #expect(lines[3].hasPrefix("C0:11:22:33:44:03  other"))
        #expect(lines[4].hasPrefix("C0:11:22:33:44:01  Herald (not read)"))
        #expect(lines[4].contains("-72") && lines[4].contains("-71.0") && lines[4].contains("500") && lines[4].contains("1.5 s ago"))
        #expect(!plain.contains("\u{1B}"))
        let coloured = ScanLiveTable(colour: true).frame(s, elapsed: 3, title: "t")
        #expect(coloured.hasPrefix("\u{1B}[H") && coloured.contains("\u{1B}[36mC0:11:22:33:44:02"))
        #expect(ScanLiveTable.terminalHasColour(environment: ["TERM": "xterm-256color"]))
        #expect(!ScanLiveTable.terminalHasColour(environment: ["TERM": "xterm", "NO_COLOR": "1"]))
        #expect(!ScanLiveTable.terminalHasColour(environment: ["TERM": "dumb"]))
    }

    @Test func payloadsDecodedForPeople() {
        let simple: [UInt8] = [0x10, 0x03, 0x3A, 0x00, 0x02] + [UInt8](0..<16)
        #expect(PayloadDescription.text(simple, order: .bigEndian) == "Simple 826/2 \(payloadShortName(simple))")
        #expect(DeviceKind(payload: simple) == .heraldWearable)
        let venue: [UInt8] = [0x30, 0x03, 0x3A, 0x00, 0x00, 0x00, 0x00, 0x30, 0x39]
        #expect(PayloadDescription.text(venue, order: .bigEndian) == "venue 826/0 location 12345")
        #expect(DeviceKind(payload: venue) == .venueBeacon)
        #expect(DeviceKind(payload: [0x99]) == nil)
        #expect(DeviceKind.of(herald: true, apple: false, pseudoAddress: false, payload: simple) == .heraldWearable)
        #expect(DeviceKind.of(herald: false, apple: true, pseudoAddress: false, payload: nil) == .appleOther)
    }

    @Test func htmlIsSelfContainedWithOnePlotPerDevice() {
        var s = ScanSummary(start: 0)
        // A name that must be escaped.
        let name = Array("<b>&".utf8)
        feed(&s, advInd, address(1), rssi: -50, [UInt8(name.count + 1), 0x09] + name, at: 1000)
        feed(&s, advInd, address(1), rssi: -70, [], at: 2000)
        feed(&s, advInd, address(2), rssi: -80, [], at: 1500)
        let html = ScanReportHTML.render(s, title: "bench <1>", durationSeconds: 3, generated: Date(timeIntervalSince1970: 0))
        #expect(html.hasPrefix("<!DOCTYPE html>"))
        #expect(html.components(separatedBy: "<svg").count - 1 == 2)
        #expect(html.components(separatedBy: "<circle").count - 1 == 3)
        #expect(html.contains("&lt;b&gt;&amp;") && !html.contains("<b>&"))
        #expect(html.contains("<title>bench &lt;1&gt;</title>"))
        #expect(!html.contains("<script") && !html.contains("src="))
        // The −70 dBm point sits lower on the plot than the −50 dBm one.
        let ys = html.matches(of: /<circle cx="[0-9.]+" cy="([0-9.]+)"/).map { Double($0.1)! }
        #expect(ys.count == 3 && ys[1] > ys[0])
    }

    @Test func samplesAreARingOfTheLatest() {
        var s = ScanSummary(start: 0)
        for k in 0..<(ScanSummary.maxSamples * 3) {
            feed(&s, advInd, address(1), rssi: Int8(-40 - k % 30), [], at: UInt64(k))
        }
        let points = s.rssiSeries[0].points
        #expect(points.count == ScanSummary.maxSamples)
        #expect(points.first?.0 == Double(ScanSummary.maxSamples * 2) / 1000 && points.last?.0 == Double(ScanSummary.maxSamples * 3 - 1) / 1000)
        #expect(s.devices[0].rssi?.count == ScanSummary.maxSamples * 3)
        #expect(zip(points, points.dropFirst()).allSatisfy { $0.0 < $1.0 })
        #expect(s.recentRSSI(s.devices[0]).count == ScanSummary.recentCount)
    }
}

@Suite struct ScanSummaryAppleFilterTests {
    @Test func ignoredAppleDevicesAreCountedAndShown() throws {
        var s = ScanSummary(start: 0)
        // An Apple TV (Nearby Info action 0x14) and an iPhone in the background.
        let appleTV: [UInt8] = [0x02, 0x01, 0x1A, 0x0A, 0xFF, 0x4C, 0x00, 0x10, 0x05, 0x08, 0x14, 0x1B, 0xBA, 0x69]
        let iPhone: [UInt8] = [0x02, 0x01, 0x1A, 0x14, 0xFF, 0x4C, 0x00, 0x01] + [UInt8](repeating: 0, count: 10) + [0x20] + [UInt8](repeating: 0, count: 5)
        feed(&s, advInd, address(1), rssi: -50, appleTV, at: 10)
        feed(&s, advInd, address(2), rssi: -50, iPhone, at: 20)
        #expect(s.ignoredAppleDevices == 1)
        #expect(s.devices.map(\.kind) == [.appleOther, .appleOther])  // both Apple; one ignored, one to check
        #expect(s.table(durationSeconds: 1).contains("1 Apple device(s) ignored"))
    }
}
