import BluetoothHost
import Testing
@testable import HeraldRuntime

/// `herald scan` left running (issue 36, item 8): an hour of rotating addresses at 50 adverts/s, on a
/// simulated clock, in bounded memory. Tracks are limited (the least recently heard go first, and
/// are counted), each track's RSSI samples are a ring, and nothing grows with the scan's length.
/// Time per report is not asserted (a benchmark's business); what makes it flat is: no array copied
/// or thinned per report, which the bounded storage below shows.
@Suite struct ScanSummaryBoundsTests {
    static let advInd = AdvertisingReportKind(rawValue: 0b001_0011)
    /// Flags and the Herald service UUID 0xFCF6.
    static let advert: [UInt8] = [0x02, 0x01, 0x06, 0x03, 0x03, 0xF6, 0xFC]

    static func address(device: Int, epoch: Int) -> DeviceAddress {
        // Static random-looking addresses: device in the low octet, the rotation epoch above it.
        DeviceAddress(type: .randomDevice, address: BDAddress(displayOrder: 0x40, 0x00, UInt8(epoch >> 8), UInt8(epoch & 0xFF), 0x00, UInt8(device)))
    }

    static func feed(_ s: inout ScanSummary, _ a: DeviceAddress, rssi: Int8, at now: UInt64) {
        advert.withUnsafeBufferPointer { b in
            let r = AdvertisingReport(kind: advInd, address: a, rssi: rssi, txPower: nil, advertisingSID: nil, data: Span(_unsafeElements: b))
            s.add(r, now: now)
        }
    }

    @Test func anHourOfRotatingAddressesAtFiftyAdvertsASecondStaysBounded() throws {
        let maxTracks = 256, maxSamples = 512
        var s = ScanSummary(start: 0, maxTracks: maxTracks, maxSamples: maxSamples)
        // Ten devices take turns, one report every 20 ms (50/s in all, 5/s each). Device 0 keeps its
        // address; the other nine rotate theirs every 15 s, each at its own phase.
        let reports = 3600 * 50
        var lastHeard: [DeviceAddress: Int] = [:]
        for k in 0..<reports {
            let now = UInt64(k) * 20
            let device = k % 10
            let epoch = device == 0 ? 0 : Int((now + UInt64(device) * 1_500) / 15_000)
            let a = Self.address(device: device, epoch: epoch)
            Self.feed(&s, a, rssi: Int8(-40 - k % 50), at: now)
            lastHeard[a] = k
        }
        #expect(s.reports == reports)
        #expect(lastHeard.count > 2000)  // addresses heard in the hour
        // Tracks: at the limit, never above, and every track dropped counted.
        #expect(s.trackCount == maxTracks)
        #expect(s.evictedTracks == lastHeard.count - maxTracks)
        #expect(s.devices.count == maxTracks)
        // The least recently heard went first: what is kept is the most recently heard.
        let kept = Set(lastHeard.sorted { $0.value > $1.value }.prefix(maxTracks).map { "\($0.key.address.description)" })
        #expect(Set(s.devices.map(\.address)) == kept)
        // Samples: a ring per track, so at most maxSamples each, whatever the scan's length.
        #expect(s.sampleCount <= maxTracks * maxSamples)
        let steady = try #require(s.device(Self.address(device: 0, epoch: 0)))
        #expect(steady.adverts == reports / 10 && steady.rssi?.count == reports / 10)
        let series = try #require(s.rssiSeries.first { $0.device.address == steady.address })
        #expect(series.points.count == maxSamples)
        // The latest samples, oldest first: device 0's last report came at report (reports - 10).
        #expect(series.points.last?.0 == Double((reports - 10) * 20) / 1000)
        #expect(series.points.first?.0 == Double((reports - 10 * maxSamples) * 20) / 1000)
        #expect(zip(series.points, series.points.dropFirst()).allSatisfy { $0.0 < $1.0 })
        // Said where people read it.
        #expect(s.table(durationSeconds: 3600).contains("\(s.evictedTracks) least recently heard device(s) dropped"))
    }
}
