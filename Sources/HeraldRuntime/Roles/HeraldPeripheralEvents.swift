import BluetoothHost
import Foundation
import Herald

/// Where event lines go (standard output by default); a class so the delegate, a value inside the
/// stack, can share it with the command that reads the counters afterwards.
public final class PeripheralEventSink {
    public private(set) var lines = 0
    public private(set) var payloadReads = 0
    public private(set) var signalMessages = 0
    public var write: (String) -> Void
    /// Each payload served, as bytes (the wearable logs them in `served-payloads.csv`).
    public var served: (([UInt8]) -> Void)?

    public init(write: @escaping (String) -> Void = { line in
        print(line)
        fflush(nil)
    }) {
        self.write = write
    }

    func emit(_ line: String) {
        lines += 1
        write(line)
    }

    func countPayloadRead(_ payload: Span<UInt8>) {
        payloadReads += 1
        if let served { served((0..<payload.count).map { payload[$0] }) }
    }
    func countSignal() { signalMessages += 1 }
}

/// Prints each Herald peripheral event: one JSON object per line (`json`), or a readable line.
///
/// JSON events: `connected`, `disconnected`, `payload-read`, `signal` (with `type` payload | rssi |
/// payload-sharing | immediate-send and its decoded fields), `keep-awake`, `signal-rejected`,
/// `address`, `command-failed`. Every object has `event` and `time` (ISO 8601, UTC).
public struct PeripheralEventPrinter: HeraldPeripheralDelegate {
    public let json: Bool
    public let sink: PeripheralEventSink
    /// Byte order of the country/state codes when decoding written Simple payloads.
    public var order: PayloadCodeByteOrder = .bigEndian

    public init(json: Bool, sink: PeripheralEventSink = PeripheralEventSink()) {
        self.json = json
        self.sink = sink
    }

    static func hex(_ s: Span<UInt8>) -> String {
        var out = ""
        out.reserveCapacity(s.count * 2)
        for i in s.indices { out += String(format: "%02x", s[i]) }
        return out
    }

    public static func address(_ a: BDAddress) -> String {
        (0..<6).reversed().map { String(format: "%02X", a.bytes[$0]) }.joined(separator: ":")
    }

    static func linkFields(_ link: HeraldLink) -> [String: Any] {
        ["handle": Int(link.handle), "peer": address(link.peer.address),
         "role": link.role == .peripheral ? "peripheral" : "central"]
    }

    /// A Simple payload's fields, or nil when the bytes are something else.
    static func simplePayloadFields(_ bytes: Span<UInt8>, order: PayloadCodeByteOrder) -> [String: Any]? {
        guard let p = try? SimplePayload(parsing: bytes, order: order) else { return nil }
        var id = ""
        for i in 0..<16 { id += String(format: "%02x", p.contactIdentifier[i]) }
        return ["protocol": Int(p.header.protocolAndVersion), "country": Int(p.header.countryCode),
                "state": Int(p.header.stateCode), "contactIdentifier": id, "extendedDataLength": p.extendedData.count]
    }

    func emit(_ event: String, _ fields: [String: Any], text: @autoclosure () -> String) {
        if json {
            var object = fields
            object["event"] = event
            object["time"] = iso8601Timestamp(Date(), fractionalSeconds: true)
            guard let line = JSONLine.encode(object, escapingSlashes: false) else { return }
            sink.emit(line)
        } else {
            sink.emit("\(event) \(text())")
        }
    }

    public mutating func heraldPeripheral(didConnect link: HeraldLink) {
        emit("connected", Self.linkFields(link), text: "handle 0x\(String(link.handle, radix: 16)) peer \(Self.address(link.peer.address))")
    }

    public mutating func heraldPeripheral(didUpdatePHY phy: LinkPHY, on link: HeraldLink) {
        var f = Self.linkFields(link)
        f["txPHY"] = "\(phy.tx.name)"
        f["rxPHY"] = "\(phy.rx.name)"
        emit("phy", f, text: "handle 0x\(String(link.handle, radix: 16)) tx \(phy.tx.name) rx \(phy.rx.name)")
    }

    public mutating func heraldPeripheral(didDisconnect link: HeraldLink, reason: HCIStatus) {
        var f = Self.linkFields(link)
        f["reason"] = Int(reason.rawValue)
        emit("disconnected", f, text: "handle 0x\(String(link.handle, radix: 16)) reason 0x\(String(reason.rawValue, radix: 16))")
    }

    public mutating func heraldPeripheral(didServePayload payload: Span<UInt8>, to link: HeraldLink) {
        sink.countPayloadRead(payload)
        var f = Self.linkFields(link)
        let h = Self.hex(payload)
        f["payload"] = h
        if let simple = Self.simplePayloadFields(payload, order: order) { f["simplePayload"] = simple }
        let decoded = PayloadDescription.text(WearableEventHub.bytes(payload), order: order)
        f["decoded"] = decoded
        emit("payload-read", f, text: "handle 0x\(String(link.handle, radix: 16)) payload \(h) (\(decoded))")
    }

    public mutating func heraldPeripheral(didReceivePayload payload: Span<UInt8>, from link: HeraldLink) {
        sink.countSignal()
        var f = Self.linkFields(link)
        let h = Self.hex(payload)
        f["type"] = "payload"
        f["payload"] = h
        if let simple = Self.simplePayloadFields(payload, order: order) { f["simplePayload"] = simple }
        emit("signal", f, text: "handle 0x\(String(link.handle, radix: 16)) payload \(h)")
    }

    public mutating func heraldPeripheral(didMeasureRSSI rssi: Int16, from link: HeraldLink) {
        sink.countSignal()
        var f = Self.linkFields(link)
        f["type"] = "rssi"
        f["rssi"] = Int(rssi)
        emit("signal", f, text: "handle 0x\(String(link.handle, radix: 16)) rssi \(rssi) dBm")
    }

    public mutating func heraldPeripheral(didShare payloads: SharedPayloadIterator, rssi: Int16, from link: HeraldLink) {
        sink.countSignal()
        var it = payloads
        var list: [String] = []
        while let p = try? it.next() { list.append(Self.hex(p)) }
        var f = Self.linkFields(link)
        f["type"] = "payload-sharing"
        f["rssi"] = Int(rssi)
        f["payloads"] = list
        emit("signal", f, text: "handle 0x\(String(link.handle, radix: 16)) payload-sharing rssi \(rssi) \(list.joined(separator: ","))")
    }

    public mutating func heraldPeripheral(didReceiveImmediateSend data: Span<UInt8>, from link: HeraldLink) {
        sink.countSignal()
        var f = Self.linkFields(link)
        let h = Self.hex(data)
        f["type"] = "immediate-send"
        f["data"] = h
        emit("signal", f, text: "handle 0x\(String(link.handle, radix: 16)) immediate-send \(h)")
    }

    public mutating func heraldPeripheral(didKeepAwake link: HeraldLink) {
        emit("keep-awake", Self.linkFields(link), text: "handle 0x\(String(link.handle, radix: 16))")
    }

    public mutating func heraldPeripheral(didRejectSignalWrite fragment: Span<UInt8>, from link: HeraldLink) {
        var f = Self.linkFields(link)
        let h = Self.hex(fragment)
        f["fragment"] = h
        emit("signal-rejected", f, text: "handle 0x\(String(link.handle, radix: 16)) fragment \(h) (ATT error 0x0D)")
    }

    public mutating func heraldPeripheral(didChangeAddress address: BDAddress, unixMillis: Int64) {
        let a = Self.address(address)
        emit("address", ["address": a, "at": KeyTools.iso8601(unixMillis / 1000)], text: a)
    }

    public mutating func heraldPeripheral(commandFailed opcode: HCIOpcode, status: HCIStatus) {
        emit("command-failed", ["opcode": Int(opcode.rawValue), "status": Int(status.rawValue)],
             text: "opcode 0x\(String(opcode.rawValue, radix: 16)) status 0x\(String(status.rawValue, radix: 16))")
    }
}

extension HeraldClock {
    /// The wall clock at monotonic time 0, from the system clock now.
    public static func system(monotonicNow: UInt64 = MonotonicClock.now()) -> HeraldClock {
        let unixMillis = Int64((Date().timeIntervalSince1970 * 1000).rounded())
        return HeraldClock(unixMillisAtZero: unixMillis - Int64(monotonicNow))
    }
}

/// Where the wearable's secret comes from when no `--secret-key-file` is given.
/// Where `herald wearable` keeps its secret key when no `--secret-key-file` is given: outside the log
/// directory, which people zip up and hand over for `analyse` or `match`.
public enum WearableSecret {
    /// The file name earlier versions used inside the log directory; still used when it is there.
    public static let legacyName = "wearable-secret.key"

    /// `$HERALD_KEYS_DIR`, else `$XDG_DATA_HOME/herald/keys`, else `~/.local/share/herald/keys`.
    public static func defaultDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let dir = environment["HERALD_KEYS_DIR"], !dir.isEmpty { return dir }
        let data = environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? ((environment["HOME"] ?? NSHomeDirectory()) as NSString).appendingPathComponent(".local/share")
        return ((data as NSString).appendingPathComponent("herald") as NSString).appendingPathComponent("keys")
    }

    /// One key per log directory, as before (a wearable's identity goes with its logs): named after the
    /// directory and a hash of its absolute path, `<keys>/<name>-<8 hex>.key`.
    public static func defaultPath(logDirectory: String, keysDirectory: String) -> String {
        let absolute = URL(fileURLWithPath: logDirectory).standardizedFileURL.path
        let name = URL(fileURLWithPath: absolute).lastPathComponent.filter { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }
        let hash = DFUSHA256.hash(Array(absolute.utf8)).prefix(4).map { String(format: "%02x", $0) }.joined()
        return (keysDirectory as NSString).appendingPathComponent("\(name.isEmpty ? "wearable" : name)-\(hash).key")
    }

    public enum Source: Equatable {
        case created, existing
        /// `<logDir>/wearable-secret.key` from an earlier version: used so the wearable keeps its identity.
        case legacyInLogDirectory
    }

    /// The secret for a wearable logging to `logDirectory`: the legacy one in the log directory if it is
    /// there, else the default one in `keysDirectory` (created with mode 0600 in a 0700 directory).
    /// Throws `FileProblem` or `KeyToolError`, each naming the file and the reason.
    public static func resolve(logDirectory: String, keysDirectory: String) throws -> (path: String, source: Source) {
        let legacy = (logDirectory as NSString).appendingPathComponent(legacyName)
        if FileManager.default.fileExists(atPath: legacy) { return (legacy, .legacyInLogDirectory) }
        let path = defaultPath(logDirectory: logDirectory, keysDirectory: keysDirectory)
        if FileManager.default.fileExists(atPath: path) { return (path, .existing) }
        do {
            try FileManager.default.createDirectory(atPath: keysDirectory, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw FileProblem(path: keysDirectory, action: "create", what: "the key directory", why: CommandMessage.reason(error))
        }
        try SecretKeyFile.create(at: path)  // KeyToolError: "cannot create PATH (why)"
        return (path, .created)
    }
}

/// The wearable pairs the printer with its sensor delegate (`SensorDelegatePair`): it prints the
/// peripheral half's events and leaves the sensor's to the other.
extension PeripheralEventPrinter: SensorDelegate {}
