import BluetoothHost
import Foundation
import Herald

/// Prints each sensor event: one JSON object per line (`json`), or a readable line.
///
/// JSON events: `detect`, `available` (`available` true/false), `measure` (`rssi`, `txPower`),
/// `read` (`payload` hex), `share` (`payloads` hex list), `receive` (`data` hex), `state`. Every
/// object has `event`, `sensor`, `time` (ISO 8601, UTC) and, when it concerns one, `target`.
public struct SensorEventPrinter: SensorDelegate {
    public let json: Bool
    /// Print `measure` events (one per advert; noisy).
    public var measurements: Bool
    public let write: (String) -> Void
    /// Byte order of payload codes in `read` events' `decoded` (`--byte-order`).
    public var order: PayloadCodeByteOrder = .bigEndian

    public init(json: Bool, measurements: Bool = true, write: @escaping (String) -> Void = { line in
        print(line)
        fflush(nil)
    }) {
        self.json = json
        self.measurements = measurements
        self.write = write
    }

    static func hex(_ s: Span<UInt8>) -> String {
        var out = ""
        out.reserveCapacity(s.count * 2)
        for i in s.indices { out += String(format: "%02x", s[i]) }
        return out
    }

    static func name(_ s: SensorType) -> String {
        switch s {
        case .ble: return "ble"
        case .array: return "array"
        case .other: return "other"
        }
    }

    func emit(_ event: String, _ sensor: SensorType, target: TargetIdentifier?, _ fields: [String: Any]) {
        var object = fields
        object["event"] = event
        object["sensor"] = Self.name(sensor)
        object["time"] = iso8601Timestamp(Date(), fractionalSeconds: false)
        // "T3", as `herald wearable` names targets.
        if let target { object["target"] = WearableEventHub.targetName(target) }
        if json {
            if let line = JSONLine.encode(object) { write(line) }
        } else {
            let rest = fields.keys.sorted().map { "\($0)=\(fields[$0]!)" }.joined(separator: " ")
            write("\(event) \(Self.name(sensor))\(target.map { " \(WearableEventHub.targetName($0))" } ?? "") \(rest)")
        }
    }

    public mutating func sensor(_ sensor: SensorType, didDetect target: TargetIdentifier) {
        emit("detect", sensor, target: target, [:])
    }
    public mutating func sensor(_ sensor: SensorType, didMeasure proximity: Proximity, fromTarget target: TargetIdentifier) {
        guard measurements else { return }
        var f: [String: Any] = ["rssi": Int(proximity.value)]
        if let c = proximity.calibration { f["txPower"] = Int(c) }
        emit("measure", sensor, target: target, f)
    }
    public mutating func sensor(_ sensor: SensorType, didRead payload: Span<UInt8>, fromTarget target: TargetIdentifier) {
        let bytes = WearableEventHub.bytes(payload)
        var f: [String: Any] = ["payload": Self.hex(payload), "decoded": PayloadDescription.text(bytes, order: order)]
        if let kind = DeviceKind(payload: bytes) { f["kind"] = kind.rawValue }
        emit("read", sensor, target: target, f)
    }
    public mutating func sensor(_ sensor: SensorType, didShare payloads: borrowing SharedPayloads, fromTarget target: TargetIdentifier) {
        var list: [String] = []
        for i in 0..<payloads.count { list.append(Self.hex(payloads[i])) }
        emit("share", sensor, target: target, ["payloads": list])
    }
    public mutating func sensor(_ sensor: SensorType, didReceive data: Span<UInt8>, fromTarget target: TargetIdentifier) {
        emit("receive", sensor, target: target, ["data": Self.hex(data)])
    }
    public mutating func sensor(_ sensor: SensorType, didUpdateState state: SensorState) {
        let s: String
        switch state {
        case .on: s = "on"
        case .off: s = "off"
        case .unavailable: s = "unavailable"
        }
        emit("state", sensor, target: nil, ["state": s])
    }
    public mutating func sensor(_ sensor: SensorType, available: Bool, didDeleteOrDetect target: TargetIdentifier) {
        emit("available", sensor, target: target, ["available": available])
    }
}
