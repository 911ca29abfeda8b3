import Foundation
import BluetoothHost
@testable import Herald

/// A growable sink for tests (the core itself only uses fixed buffers).
struct ArraySink: ATTResponseSink {
    var bytes: [UInt8] = []
    mutating func append(_ byte: UInt8) { bytes.append(byte) }
    var count: Int { bytes.count }
    mutating func withSpan<R>(_ body: (Span<UInt8>) -> R) -> R { body(bytes.span) }
    mutating func truncate(to length: Int) { if length < bytes.count { bytes.removeLast(bytes.count - max(0, length)) } }
}

/// A Herald peripheral application behind the real ATT server with one peripheral link up (handle
/// 0x40), its database built with the application's server features: for tests that speak ATT to it.
struct OneLinkHeraldServer<Source: HeraldPayloadSource, Offer: HeraldServerOffer, Delegate: HeraldPeripheralDelegate,
                           let payloadCapacity: Int, let signalCapacity: Int> {
    typealias App = HeraldPeripheralApplication<Source, Delegate, 1, payloadCapacity, signalCapacity, Offer>
    var app: App
    var db: GATTDatabase<24, 128, 1>
    var bearer = ATTBearer<App.PrepareQueue>()
    let handles: HeraldGATTHandles

    init(peripheral: HeraldPeripheral<Source, Offer, 1, payloadCapacity, signalCapacity>, delegate: Delegate) throws {
        var peripheral = peripheral
        db = try GATTDatabase<24, 128, 1>(deviceName: Array("beacon".utf8).span, features: App.serverFeatures)
        try peripheral.install(into: &db)
        handles = peripheral.handles!  // set by a successful install
        app = App(peripheral: peripheral, delegate: delegate)
        var control = App.Control()
        app.stackDidBecomeReady(ControllerInfo(), now: 0, control: &control)
        app.stackDidConnect(ConnectionSummary(handle: 0x40, role: .peripheral,
                                              peer: DeviceAddress(type: .randomDevice, address: BDAddress(bytes: [1, 2, 3, 4, 5, 6])),
                                              timing: ConnectionTiming(interval: 24, latency: 0, supervisionTimeout: 72)),
                            now: 0, control: &control)
    }

    /// One ATT PDU in; the response's bytes (empty when there is none).
    mutating func send(_ pdu: [UInt8]) -> [UInt8] {
        var out = ArraySink()
        _ = ATTServer().handle(pdu: pdu.span, bearer: &bearer, link: ServerLinks()[0x0040], now: 0, database: &db,
                               delegate: &app, response: &out)
        return out.bytes
    }
}

/// Links up in a connection table, for tests that drive the ATT server and the GATT database
/// without a stack: the table numbers them as it fills (the first handle in its first entry), and
/// the tests name each by its handle, through the public `serverLink(handle:)`.
struct ServerLinks {
    var table = ConnectionTable<8, 27, NoConnectionExtra>()

    init(_ handles: [UInt16] = [0x0040]) {
        for h in handles {
            _ = try? table.insert(handle: h, role: .peripheral, peer: DeviceAddress(type: .publicDevice, address: .zero),
                                  timing: ConnectionTiming(interval: 24, latency: 0, supervisionTimeout: 400))
        }
    }

    /// The link `handle` as the server and the database take it (a test's own table always has it).
    subscript(handle: UInt16) -> GATTServerLink { try! table.serverLink(handle: handle) }
}

/// A stack's connection table for harnesses that play one around an application: links come and
/// go, a test may choose the entry a link takes, and the server is handed each link by handle.
struct StackLinks {
    var table = ConnectionTable<2, 27, NoConnectionExtra>()

    /// Puts `handle` in the first free entry, or in entry `position` when it is free (the entries
    /// before it held meanwhile).
    mutating func insert(_ handle: UInt16, at position: Int? = nil) {
        var held: [UInt16] = []
        for k in 0..<(position ?? 0) where table.handle(at: k) == nil {
            add(0x0E00 + UInt16(k))
            held.append(0x0E00 + UInt16(k))
        }
        add(handle)
        for h in held { _ = table.remove(handle: h) }
    }

    mutating func remove(_ handle: UInt16) { _ = table.remove(handle: handle) }

    /// The link `handle`, put in the table first if it is not there.
    mutating func link(_ handle: UInt16) -> GATTServerLink {
        if !table.contains(handle: handle) { add(handle) }
        return try! table.serverLink(handle: handle)
    }

    private mutating func add(_ handle: UInt16) {
        _ = try? table.insert(handle: handle, role: .peripheral, peer: DeviceAddress(type: .publicDevice, address: .zero),
                              timing: ConnectionTiming(interval: 24, latency: 0, supervisionTimeout: 400))
    }
}

func hex(_ s: String) -> [UInt8] {
    let clean = s.filter { !$0.isWhitespace }
    precondition(clean.count % 2 == 0, "odd hex")
    var out: [UInt8] = []
    var i = clean.startIndex
    while i < clean.endIndex {
        let j = clean.index(i, offsetBy: 2)
        out.append(UInt8(clean[i..<j], radix: 16)!)
        i = j
    }
    return out
}

func hexString<C: Collection>(_ b: C) -> String where C.Element == UInt8 { b.map { String(format: "%02x", $0) }.joined() }

func bytes<let N: Int>(_ a: InlineArray<N, UInt8>) -> [UInt8] { (0..<N).map { a[$0] } }

func inline16(_ b: [UInt8]) -> InlineArray<16, UInt8> {
    precondition(b.count == 16)
    var r = InlineArray<16, UInt8>(repeating: 0)
    for i in 0..<16 { r[i] = b[i] }
    return r
}

func base64(_ s: String) -> [UInt8] { [UInt8](Data(base64Encoded: s)!) }

/// Finds a Herald vector file: the copy in Fixtures/ first, then `../shared/vectors/herald/` beside
/// the repository (how CI lays the checkout out).
func vectorRows(_ name: String, filePath: String = #filePath) throws -> [[String]] {
    let here = URL(fileURLWithPath: filePath).deletingLastPathComponent()
    let repoRoot = here.deletingLastPathComponent().deletingLastPathComponent()
    let candidates = [
        here.appendingPathComponent("Fixtures/\(name)"),
        repoRoot.deletingLastPathComponent().appendingPathComponent("shared/vectors/herald/\(name)"),
    ]
    guard let url = candidates.first(where: { FileManager.default.fileExists(atPath: $0.path) }) else {
        throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: name])
    }
    let text = try String(contentsOf: url, encoding: .utf8)
    return text.split(whereSeparator: \.isNewline).dropFirst().map { $0.split(separator: ",").map(String.init) }
}
