import BluetoothHost
import Foundation
import Herald

/// What `herald wearable` knows about one nearby device, for the live table and the summary.
public struct WearableDeviceRow: Equatable {
    public var target: UInt32
    /// `DeviceKind.description`; "?" until the sensor's database says.
    public var kind: String = "?"
    /// The advertiser's address as last seen (a wearable's changes with its payload).
    public var address: String = "-"
    public var rssi: Int?
    public var payload: [UInt8] = []
    public var lastSeen: Date
    /// Times of RSSI readings, pruned to the table's window.
    public var readings: [Date] = []
}

/// Collects the wearable's sensor events: each becomes a `SensorEventRecord` for the log consumer,
/// optionally a JSON line (`json`), and an update of the device table. A class so the delegate, a
/// value inside the stack, shares it with the command that draws the table and prints the summary.
/// Used only on the run-loop thread.
public final class WearableEventHub {
    public let json: Bool
    public let consumer: SensorEventConsumer?
    public let write: (String) -> Void
    public let clock: () -> Date
    /// Readings in the table count over this many seconds.
    public var window: TimeInterval = 30
    /// Byte order of payload codes in the table and the `didRead` events' `decoded` (`--byte-order`).
    public var order: PayloadCodeByteOrder = .bigEndian
    public private(set) var devices: [UInt32: WearableDeviceRow] = [:]
    public private(set) var payloadsRead = 0
    public private(set) var readings = 0
    public private(set) var devicesSeen = 0

    public init(json: Bool, consumer: SensorEventConsumer?, clock: @escaping () -> Date = Date.init,
                write: @escaping (String) -> Void = WearableEventHub.standardOutput) {
        self.json = json
        self.consumer = consumer
        self.clock = clock
        self.write = write
    }

    /// Writes a line straight to file descriptor 1. Not `print` + `fflush(nil)`: flushing every stream
    /// takes the lock of `stdin`, which the console thread holds while it waits for input (deadlock).
    public static func standardOutput(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    public static func targetName(_ t: TargetIdentifier) -> String { "T\(t.value)" }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        var s = ""
        s.reserveCapacity(bytes.count * 2)
        for b in bytes { s.append(digits[Int(b >> 4)]); s.append(digits[Int(b & 0xF)]) }
        return s
    }

    public static func hexString(_ bytes: [UInt8]) -> String { hex(bytes) }

    public static func bytes(_ s: Span<UInt8>) -> [UInt8] {
        var a: [UInt8] = []
        a.reserveCapacity(s.count)
        for i in s.indices { a.append(s[i]) }
        return a
    }

    func emit(_ event: String, target: TargetIdentifier?, at time: Date, _ fields: [String: Any] = [:]) {
        guard json else { return }
        var object = fields
        object["event"] = event
        object["time"] = iso8601Timestamp(time, fractionalSeconds: true)
        if let target { object["target"] = Self.targetName(target) }
        if let line = JSONLine.encode(object) { write(line) }
    }

    func row(_ t: TargetIdentifier, _ now: Date) -> WearableDeviceRow {
        if let r = devices[t.value] { return r }
        devicesSeen += 1
        return WearableDeviceRow(target: t.value, lastSeen: now)
    }

    // MARK: Events (called by `WearableSensorDelegate`)

    public func detect(_ t: TargetIdentifier) {
        let now = clock()
        devices[t.value] = row(t, now)
        emit("didDetect", target: t, at: now)
        consumer?.record(.detect(Self.targetName(t), at: now))
    }

    public func measure(_ p: Proximity, _ t: TargetIdentifier) {
        let now = clock()
        var r = row(t, now)
        r.rssi = Int(p.value)
        r.lastSeen = now
        r.readings.append(now)
        r.readings.removeAll { now.timeIntervalSince($0) > window }
        devices[t.value] = r
        readings += 1
        var f: [String: Any] = ["rssi": Int(p.value)]
        if let c = p.calibration { f["txPower"] = Int(c) }
        emit("didMeasure", target: t, at: now, f)
        consumer?.record(.measure(rssi: Double(p.value), txPower: p.calibration.map { Double($0) }, from: Self.targetName(t), at: now))
    }

    public func measureWithPayload(_ p: Proximity, _ t: TargetIdentifier, _ payload: [UInt8]) {
        emit("didMeasureWithPayload", target: t, at: clock(), ["rssi": Int(p.value), "payload": Self.hex(payload)])
    }

    public func read(_ payload: [UInt8], _ t: TargetIdentifier) {
        let now = clock()
        var r = row(t, now)
        r.payload = payload
        r.lastSeen = now
        devices[t.value] = r
        payloadsRead += 1
        var fields: [String: Any] = ["payload": Self.hex(payload), "shortName": payloadShortName(payload),
                                     "decoded": PayloadDescription.text(payload, order: order)]
        if let kind = DeviceKind(payload: payload) { fields["kind"] = kind.rawValue }
        emit("didRead", target: t, at: now, fields)
        consumer?.record(.read(payload, from: Self.targetName(t), at: now))
    }

    public func share(_ payloads: [[UInt8]], _ t: TargetIdentifier) {
        let now = clock()
        emit("didShare", target: t, at: now, ["payloads": payloads.map(Self.hex)])
        consumer?.record(.share(payloads, from: Self.targetName(t), at: now))
    }

    public func receive(_ data: [UInt8], _ t: TargetIdentifier) {
        let now = clock()
        emit("didReceive", target: t, at: now, ["data": Self.hex(data)])
        consumer?.record(SensorEventRecord(kind: .receive, time: now, target: Self.targetName(t), payload: data))
    }

    public func state(_ sensor: SensorType, _ state: SensorState) {
        let s: String
        switch state {
        case .on: s = "on"
        case .off: s = "off"
        case .unavailable: s = "unavailable"
        }
        emit("didUpdateState", target: nil, at: clock(), ["sensor": sensor == .ble ? "ble" : sensor == .array ? "array" : "other", "state": s])
    }

    public func delete(_ t: TargetIdentifier) {
        let now = clock()
        devices[t.value] = nil
        emit("didDelete", target: t, at: now)
        consumer?.record(SensorEventRecord(kind: .delete, time: now, target: Self.targetName(t)))
    }

    /// Sets the kind shown in the table (the command looks it up in the sensor's database).
    public func setKind(_ kind: String, for target: UInt32) {
        devices[target]?.kind = kind
    }

    /// Sets the kind and address shown in the table.
    public func setDevice(kind: DeviceKind, address: String, for target: UInt32) {
        devices[target]?.kind = kind.description
        devices[target]?.address = address
    }

    // MARK: Display

    /// The live table: one row per device, most recently seen first.
    public func table(now: Date? = nil) -> String {
        let now = now ?? clock()
        var rows = [["TARGET", "ADDRESS", "KIND", "RSSI", "PAYLOAD", "LAST SEEN", "READINGS/30s"]]
        for r in devices.values.sorted(by: { $0.lastSeen > $1.lastSeen }) {
            let recent = r.readings.filter { now.timeIntervalSince($0) <= window }.count
            let age = max(0, now.timeIntervalSince(r.lastSeen))
            rows.append(["T\(r.target)", r.address, r.kind, r.rssi.map(String.init) ?? "-",
                         r.payload.isEmpty ? "-" : PayloadDescription.text(r.payload, order: order), String(format: "%.0fs ago", age), "\(recent)"])
        }
        var widths = [Int](repeating: 0, count: rows[0].count)
        for r in rows { for (i, c) in r.enumerated() { widths[i] = max(widths[i], c.count) } }
        return rows.map { r in
            r.enumerated().map { i, c in i == r.count - 1 ? c : c + String(repeating: " ", count: widths[i] - c.count + 2) }.joined()
        }.joined(separator: "\n")
    }

    public var summary: String {
        "\(devicesSeen) devices seen, \(payloadsRead) payloads read, \(readings) readings"
    }
}

/// The `SensorDelegate` the wearable installs: copies each event out of the borrowed bytes into the hub.
public struct WearableSensorDelegate: SensorDelegate {
    public let hub: WearableEventHub
    public init(hub: WearableEventHub) { self.hub = hub }

    public mutating func sensor(_ sensor: SensorType, didDetect target: TargetIdentifier) { hub.detect(target) }
    public mutating func sensor(_ sensor: SensorType, didMeasure proximity: Proximity, fromTarget target: TargetIdentifier) {
        hub.measure(proximity, target)
    }
    public mutating func sensor(_ sensor: SensorType, didRead payload: Span<UInt8>, fromTarget target: TargetIdentifier) {
        hub.read(WearableEventHub.bytes(payload), target)
    }
    public mutating func sensor(_ sensor: SensorType, didShare payloads: borrowing SharedPayloads, fromTarget target: TargetIdentifier) {
        var list: [[UInt8]] = []
        for i in 0..<payloads.count { list.append(WearableEventHub.bytes(payloads[i])) }
        hub.share(list, target)
    }
    public mutating func sensor(_ sensor: SensorType, didReceive data: Span<UInt8>, fromTarget target: TargetIdentifier) {
        hub.receive(WearableEventHub.bytes(data), target)
    }
    public mutating func sensor(_ sensor: SensorType, didMeasure proximity: Proximity, fromTarget target: TargetIdentifier,
                                withPayload payload: Span<UInt8>) {
        hub.measureWithPayload(proximity, target, WearableEventHub.bytes(payload))
    }
    public mutating func sensor(_ sensor: SensorType, didUpdateState state: SensorState) { hub.state(sensor, state) }
    public mutating func sensor(_ sensor: SensorType, available: Bool, didDeleteOrDetect target: TargetIdentifier) {
        if !available { hub.delete(target) }
    }
}

/// A line typed on the wearable's standard input.
public enum WearableConsoleCommand: Equatable {
    /// `send HEX [TARGET]`: immediate send to one target (`T3` or `3`) or to every recent Herald device.
    case send(data: [UInt8], target: UInt32?)

    public enum ParseError: Error, Equatable, CustomStringConvertible {
        case unknownCommand(String)
        case usage
        case badHex
        case tooLong(Int)
        case badTarget(String)
        public var description: String {
            switch self {
            case .unknownCommand(let c): return "unknown command \"\(c)\" (try: send HEX [TARGET])"
            case .usage: return "usage: send HEX [TARGET]"
            case .badHex: return "send: data must be an even number of hex digits"
            case .tooLong(let n): return "send: \(n) bytes is more than \(HeraldSensorLimits.immediateSendCapacity)"
            case .badTarget(let t): return "send: \"\(t)\" is not a target (T<number>)"
            }
        }
    }

    /// nil for a blank line.
    public static func parse(_ line: String) throws(ParseError) -> WearableConsoleCommand? {
        let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard let verb = words.first else { return nil }
        guard verb.lowercased() == "send" else { throw .unknownCommand(verb) }
        guard words.count == 2 || words.count == 3 else { throw .usage }
        guard let data = octets(hex: words[1]), !data.isEmpty else { throw .badHex }
        guard data.count <= HeraldSensorLimits.immediateSendCapacity else { throw .tooLong(data.count) }
        var target: UInt32?
        if words.count == 3 {
            var t = words[2]
            if t.first == "T" || t.first == "t" { t.removeFirst() }
            guard let v = UInt32(t), v > 0 else { throw .badTarget(words[2]) }
            target = v
        }
        return .send(data: data, target: target)
    }
}

/// Lines from standard input, read on a background thread and taken by the run loop.
public final class ConsoleInput: @unchecked Sendable {
    private let lock = NSLock()
    private var pending: [String] = []

    public init() {}

    /// Reads file descriptor 0 directly (not `readLine`, whose lock on `stdin` would block any
    /// `fflush(nil)` elsewhere while we wait), splitting on newlines; stops at end of input.
    public func start() {
        let t = Thread { [self] in
            var buffer: [UInt8] = []
            while true {
                let data = FileHandle.standardInput.availableData
                if data.isEmpty { break }
                buffer.append(contentsOf: data)
                while let nl = buffer.firstIndex(of: 0x0A) {
                    let line = String(decoding: buffer[..<nl], as: UTF8.self)
                    buffer.removeSubrange(...nl)
                    lock.lock(); pending.append(line); lock.unlock()
                }
            }
        }
        t.start()
    }

    public func take() -> [String] {
        lock.lock(); defer { lock.unlock() }
        let out = pending
        pending = []
        return out
    }
}
