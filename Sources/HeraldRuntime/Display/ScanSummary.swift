import BluetoothHost
import Foundation
import Herald

/// Count, mean, standard deviation, min and max of a series, for summaries.
public struct SeriesStatistics: Encodable, Equatable {
    public var count: Int
    public var mean: Double
    /// Sample (n−1) standard deviation; nil below two values.
    public var sd: Double?
    public var min: Double
    public var max: Double

    init?(_ s: RunningSample) {
        guard s.count > 0 else { return nil }
        count = s.count; mean = s.mean; sd = s.standardDeviation; min = s.min; max = s.max
    }
}

/// What a bench scan learned about one advertiser.
public struct ScanDeviceSummary: Encodable {
    /// `DeviceKind`: from `HeraldAdvertClassification` and, once read, the payload.
    public var kind: DeviceKind
    public var address: String
    public var addressType: String
    public var name: String?
    /// Herald pseudo device address (manufacturer data 0xFFFA/0x05F1), hex.
    public var pseudoAddress: String?
    /// Advertising reports (scan responses are counted apart and not used for intervals).
    public var adverts: Int
    public var scanResponses: Int
    /// Milliseconds between successive adverts.
    public var interval: SeriesStatistics?
    /// dBm, over every report that carried one.
    public var rssi: SeriesStatistics?
    /// dBm of the latest report that carried one.
    public var rssiNow: Int?
    /// Tx Power Level AD field, dBm.
    public var txPower: Int?
    /// Tx power field of extended advertising reports, dBm.
    public var reportTxPower: Int?
    /// Seconds since the scan started.
    public var firstSeen: Double
    public var lastSeen: Double
    /// AD data that did not parse (the report still counted).
    public var malformedReports: Int
    /// Payload read over GATT (`--read-payloads`), hex, and its Herald short name.
    public var payload: String?
    public var payloadShortName: String?
    /// The payload decoded with the scan's `--byte-order` (`PayloadDescription`): `Simple 826/0 AbCdEf`,
    /// `venue 826/0 location 12345`, `test 826/0 client 1234567890`.
    public var payloadText: String?
    /// Why reading the payload failed.
    public var payloadError: String?
    /// Service UUIDs the device advertised (`fcf6`, or the 128-bit text form), in the order first seen.
    public var services: [String] = []
    /// The payload's codes, decoded with the scan's `--byte-order`.
    public var payloadFields: DecodedPayloadFields?
}

/// Per-device statistics of a scan, fed report by report from `stackDidReceive(advertisingReport:)`.
///
/// Bounded whatever the scan's length or the crowd's churn (issue 36, item 8): at most `maxTracks`
/// advertisers are kept, the least recently heard given up first (counted in `evictedTracks`, said in
/// the table and the report), and each keeps its latest `maxSampleCount` RSSI samples in a ring.
/// Each report costs O(1): its track is updated in place (a copy of the track out of the table would
/// copy its sample array on the next append).
public struct ScanSummary {
    struct Track {
        /// `AA:BB:…/random`: the table's key.
        var key: String
        var address: String
        var addressType: String
        /// Order of first sighting, for ties in `devices`.
        var sighting: Int
        var classification = HeraldAdvertClassification()
        var name: String?
        var adverts = 0
        var scanResponses = 0
        var lastAdvert: UInt64?
        var interval = RunningSample()
        var rssi = RunningSample()
        var lastRSSI: Int?
        var reportTxPower: Int?
        var first: UInt64
        var last: UInt64
        var malformed = 0
        /// The latest RSSI samples.
        var samples: Ring<Sample>
        var services: [String] = []
        /// The latest RSSI values (dBm), for the live table's sparkline.
        var recent = Ring<Int8>(capacity: ScanSummary.recentCount)
    }

    /// One RSSI sample: milliseconds since the scan started, dBm.
    struct Sample {
        var milliseconds: UInt32
        var dBm: Int8
    }

    /// How many of the latest RSSI values `recentRSSI` keeps per device.
    public static let recentCount = 20
    /// RSSI samples kept per device by default (the latest; 8 bytes each).
    public static let maxSamples = 5000
    /// Advertisers kept by default: with `maxSamples`, at most 40 MB of samples.
    public static let defaultMaxTracks = 1000
    /// Service UUIDs kept per device (an advertiser could rotate them without end).
    static let maxServices = 16

    /// Monotonic milliseconds the scan started at.
    public let start: UInt64
    public let maxTracks: Int
    public let maxSampleCount: Int
    private var slots: [Track] = []
    private var index: [String: Int] = [:]
    private var recency = RecencyList()
    private var sightings = 0
    private var payloads: [String: BenchPayloadReader.Outcome] = [:]
    public private(set) var reports = 0
    /// Advertisers given up, least recently heard first, to stay within `maxTracks`.
    public private(set) var evictedTracks = 0
    /// Byte order of the country/state/location codes when decoding payloads read (`--byte-order`).
    public var byteOrder: PayloadCodeByteOrder = .bigEndian

    public init(start: UInt64, maxTracks: Int = ScanSummary.defaultMaxTracks, maxSamples: Int = ScanSummary.maxSamples) {
        self.start = start
        self.maxTracks = max(1, maxTracks)
        self.maxSampleCount = max(1, maxSamples)
    }

    /// Advertisers kept now.
    public var trackCount: Int { slots.count }
    /// RSSI samples held, all devices together (at most `maxTracks * maxSampleCount`).
    var sampleCount: Int { slots.reduce(0) { $0 + $1.samples.count } }

    /// Whether any payload read (or failed read) is attached: tables then show a payload column.
    public var hasPayloads: Bool { !payloads.isEmpty }

    /// Attaches a payload read (or its failure) to the advertiser with this address (`AA:BB:…`).
    public mutating func attach(_ outcome: BenchPayloadReader.Outcome, to address: String) { payloads[address] = outcome }

    /// Apple devices the reference apps' filter rules out from their adverts (`AppleDeviceFilter`):
    /// a Herald sensor would not connect to them.
    public var ignoredAppleDevices: Int { slots.filter { $0.classification.kind == .appleIgnored }.count }

    static func key(_ address: DeviceAddress) -> String { "\(address.address.description)/\(address.type.name)" }

    /// Whether the advertiser has shown a Herald service UUID or pseudo device address so far.
    public func isHerald(_ address: DeviceAddress) -> Bool {
        index[Self.key(address)].map { slots[$0].classification.kind == .herald } ?? false
    }

    /// Folds one report in; true when this is the first report from its advertiser (or the first
    /// since it was given up).
    @discardableResult
    public mutating func add(_ r: borrowing AdvertisingReport, now: UInt64) -> Bool {
        reports += 1
        let key = Self.key(r.address)
        if let slot = index[key] {
            recency.touch(slot)
            Self.fold(r, now: now, start: start, into: &slots[slot])
            return false
        }
        let track = Track(key: key, address: r.address.address.description, addressType: r.address.type.name,
                          sighting: sightings, first: now, last: now, samples: Ring(capacity: maxSampleCount))
        sightings += 1
        let slot: Int
        if slots.count < maxTracks {
            slot = slots.count
            slots.append(track)
            recency.appendNewest(slot)
        } else {
            // Full: the least recently heard advertiser's slot is reused.
            slot = recency.oldest
            let gone = slots[slot]
            index[gone.key] = nil
            payloads[gone.address] = nil
            evictedTracks += 1
            slots[slot] = track
            recency.touch(slot)
        }
        index[key] = slot
        Self.fold(r, now: now, start: start, into: &slots[slot])
        return true
    }

    /// Updates one track with one report, in place.
    static func fold(_ r: borrowing AdvertisingReport, now: UInt64, start: UInt64, into t: inout Track) {
        t.last = now
        do { try t.classification.add(r.data) } catch { t.malformed += 1 }
        if t.name == nil, let n = Self.name(in: r.data) { t.name = n }
        if r.kind.isScanResponse {
            t.scanResponses += 1
        } else {
            t.adverts += 1
            if let previous = t.lastAdvert, now >= previous { t.interval.add(Double(now - previous)) }
            t.lastAdvert = now
        }
        if let v = r.rssi {
            t.rssi.add(Double(v))
            t.lastRSSI = Int(v)
            t.samples.append(Sample(milliseconds: UInt32(clamping: now &- start), dBm: v))
            t.recent.append(v)
        }
        if let p = r.txPower { t.reportTxPower = Int(p) }
        for u in AdvertisementRecord(r).serviceUUIDs where t.services.count < maxServices && !t.services.contains(u) {
            t.services.append(u)
        }
    }

    static func name(in data: Span<UInt8>) -> String? {
        var parser = AdvertisingDataParser(data)
        while let s = try? parser.next() {
            if s.type == ADType.completeLocalName || s.type == ADType.shortenedLocalName {
                let d = s.data
                var bytes: [UInt8] = []
                for i in d.indices { bytes.append(d[i]) }
                return String(decoding: bytes, as: UTF8.self)
            }
        }
        return nil
    }

    /// Which devices `devices` (the summary table, JSON, report) shows: `herald scan`'s filters.
    public var filter = ScanFilter()

    /// The device as known so far (every report counted, whatever the filter).
    public func device(_ address: DeviceAddress) -> ScanDeviceSummary? {
        index[Self.key(address)].map { summary(slots[$0]) }
    }

    /// Devices that pass `filter`, most adverts first (ties in order of first sighting).
    public var devices: [ScanDeviceSummary] {
        let summaries = slots.map { ($0.sighting, summary($0)) }.filter { filter.matches($0.1) }
        return summaries.sorted { ($0.1.adverts + $0.1.scanResponses, -$0.0) > ($1.1.adverts + $1.1.scanResponses, -$1.0) }.map(\.1)
    }

    /// RSSI points per device (seconds since start, dBm), oldest first, in the order of `devices`:
    /// the latest `maxSampleCount` of each.
    public var rssiSeries: [(device: ScanDeviceSummary, points: [(Double, Int)])] {
        devices.map { d in
            let points = index["\(d.address)/\(d.addressType)"].map { slots[$0].samples.elements } ?? []
            return (d, points.map { (Double($0.milliseconds) / 1000, Int($0.dBm)) })
        }
    }

    /// The device's latest RSSI values, oldest first (at most `recentCount`).
    public func recentRSSI(_ d: ScanDeviceSummary) -> [Int] {
        index["\(d.address)/\(d.addressType)"].map { slots[$0].recent.elements.map(Int.init) } ?? []
    }

    /// `N least recently heard device(s) dropped …` when the limit was reached, for tables and reports.
    public var evictionNote: String? {
        evictedTracks == 0 ? nil
            : "\(evictedTracks) least recently heard device(s) dropped to keep at most \(maxTracks) (their counts are not in this summary)"
    }

    func summary(_ t: Track) -> ScanDeviceSummary {
        let c = t.classification
        var payloadBytes: [UInt8]?
        if case .payload(let bytes)? = payloads[t.address] { payloadBytes = bytes }
        // An Apple device the reference apps' filter ignores is still an Apple device.
        let kind = c.kind == .appleIgnored ? DeviceKind.appleOther
            : DeviceKind.of(herald: c.kind == .herald, apple: c.kind == .appleConnectToCheck,
                            pseudoAddress: c.pseudoDeviceAddress != nil, payload: payloadBytes)
        var pseudo: String?
        if let p = c.pseudoDeviceAddress {
            pseudo = (0..<6).map { hex(p.data[$0]).lowercased() }.joined()
        }
        var d = ScanDeviceSummary(kind: kind, address: t.address, addressType: t.addressType, name: t.name, pseudoAddress: pseudo,
                                  adverts: t.adverts, scanResponses: t.scanResponses, interval: SeriesStatistics(t.interval),
                                  rssi: SeriesStatistics(t.rssi), rssiNow: t.lastRSSI, txPower: c.txPower.map(Int.init), reportTxPower: t.reportTxPower,
                                  firstSeen: Double(t.first &- start) / 1000, lastSeen: Double(t.last &- start) / 1000,
                                  malformedReports: t.malformed)
        d.services = t.services
        switch payloads[t.address] {
        case .payload(let bytes)?:
            d.payload = bytes.map { hex($0).lowercased() }.joined()
            d.payloadShortName = payloadShortName(bytes)
            d.payloadText = PayloadDescription.text(bytes, order: byteOrder)
            d.payloadFields = DecodedPayloadFields.decode(bytes, order: byteOrder)
        case .failed(let why)?:
            d.payloadError = why
        case nil:
            break
        }
        return d
    }

    /// A fixed-width table for people.
    public func table(durationSeconds: Double) -> String {
        func f(_ v: Double?, _ digits: Int = 0) -> String { v.map { String(format: "%.\(digits)f", $0) } ?? "-" }
        let withPayloads = !payloads.isEmpty
        var rows: [[String]] = [["KIND", "ADDRESS", "PSEUDO", "ADV", "RSP", "INTERVAL ms mean/min/max", "RSSI n", "mean", "sd", "min", "max", "TX"]
                                + (withPayloads ? ["PAYLOAD"] : []) + ["NAME"]]
        for d in devices {
            let interval: String = d.interval.map { "\(f($0.mean))/\(f($0.min))/\(f($0.max))" } ?? "-"
            let tx: String = (d.txPower ?? d.reportTxPower).map(String.init) ?? "-"
            let payload: String = d.payloadText ?? (d.payloadError == nil ? "-" : "failed")
            var row: [String] = [d.kind.description, "\(d.address) (\(d.addressType))", d.pseudoAddress ?? "-", String(d.adverts), String(d.scanResponses)]
            row += [interval, String(d.rssi?.count ?? 0), f(d.rssi?.mean, 1), f(d.rssi?.sd ?? nil, 1), f(d.rssi?.min), f(d.rssi?.max), tx]
            if withPayloads { row.append(payload) }
            row.append(d.name ?? "")
            rows.append(row)
        }
        var widths = [Int](repeating: 0, count: rows[0].count)
        for r in rows { for (i, c) in r.enumerated() { widths[i] = max(widths[i], c.count) } }
        var out = String(format: "%d device(s), %d report(s) in %.1f s\n", slots.count, reports, durationSeconds)
        if let evictionNote { out += evictionNote + "\n" }
        if ignoredAppleDevices > 0 {
            out += "\(ignoredAppleDevices) Apple device(s) ignored by the reference apps' device filter (shown as Apple other): a sensor does not connect to them\n"
        }
        if withPayloads { out += "payload codes decoded with --byte-order \(byteOrder.optionName) (\(byteOrder.explanation))\n" }
        for r in rows {
            out += r.enumerated().map { i, c in i == r.count - 1 ? c : c + String(repeating: " ", count: widths[i] - c.count) }
                .joined(separator: "  ").trimmingCharacters(in: .whitespaces) + "\n"
        }
        return out
    }
}
