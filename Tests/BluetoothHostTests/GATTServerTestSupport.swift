import Testing
@testable import BluetoothHost

/// Delegate that records everything and serves a few dynamic values:
/// - id 1: a 200-byte value that changes on every new read (offset 0), snapshotted per link;
/// - id 2: "dyn";
/// - id 10: write-only sink (Herald signal characteristic); every part written is recorded.
struct RecordingDelegate: GATTServerDelegate {
    var writes: [(id: UInt16, link: UInt16, offset: Int, value: [UInt8])] = []
    var configurations: [(valueHandle: UInt16, link: UInt16, value: UInt16)] = []
    var storedWrites: [UInt16] = []
    var version: UInt8 = 0
    var snapshots: [UInt16: [UInt8]] = [:]
    var reads: [(id: UInt16, offset: Int)] = []
    var refuseWrites: ATTErrorCode? = nil

    mutating func read<S: ByteSink>(id: UInt16, link: UInt16, offset: Int, into sink: inout S) -> ATTErrorCode? {
        reads.append((id, offset))
        switch id {
        case 1:
            if offset == 0 {
                version += 1
                snapshots[link] = (0..<200).map { UInt8(truncatingIfNeeded: $0) ^ version }
            }
            guard let snap = snapshots[link], offset <= snap.count else { return .invalidOffset }
            for b in snap[offset...] { sink.append(b) }
            return nil
        case 2:
            let v = Array("dyn".utf8)
            guard offset <= v.count else { return .invalidOffset }
            for b in v[offset...] { sink.append(b) }
            return nil
        default:
            return .readNotPermitted
        }
    }

    mutating func write(id: UInt16, link: UInt16, offset: Int, value: Span<UInt8>) -> ATTErrorCode? {
        if let refuseWrites { return refuseWrites }
        writes.append((id, link, offset, attArray(value)))
        return nil
    }

    mutating func clientConfigurationChanged(valueHandle: UInt16, link: UInt16, configuration: GATTClientConfiguration) {
        configurations.append((valueHandle, link, configuration.rawValue))
    }

    mutating func storedValueWritten(handle: UInt16, link: UInt16) { storedWrites.append(handle) }
}

let heraldServiceUUID = BluetoothUUID("428132af-4746-42d3-801e-4572d65bfd9b")!
let heraldPayloadUUID = BluetoothUUID("3e98c0f8-8f05-4829-a121-43e38f8933e7")!
let heraldSignalUUID = BluetoothUUID("f617b813-092e-437a-8324-e09a80821a11")!
let heraldPayload: [UInt8] = [0x10, 0x03, 0x3A, 0x00, 0x01] + [UInt8](repeating: 0x5A, count: 16)

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

    /// The link `handle` as the server and the database take it (`Issue.record`s an unknown one).
    subscript(handle: UInt16) -> GATTServerLink {
        do { return try table.serverLink(handle: handle) } catch {
            Issue.record("no link \(handle) in the test's table: \(error)")
            return try! ServerLinks([handle]).table.serverLink(handle: handle)
        }
    }
}

/// The server side under test: one database, a bearer per connection, a clock.
struct ServerHarness {
    var server: ATTServer
    var bearers: [ATTStandardBearer] = [ATTStandardBearer(), ATTStandardBearer()]
    var db: GATTStandardDatabase
    var delegate = RecordingDelegate()
    var now: UInt64 = 1_000
    /// Connection `i` is link `handles[i]`.
    let handles: [UInt16]
    var links: ServerLinks

    init(maximumMTU: UInt16 = 247, db: GATTStandardDatabase, handles: [UInt16] = [0x0040, 0x0041]) {
        server = ATTServer(maximumMTU: maximumMTU)
        self.db = db
        self.handles = handles
        links = ServerLinks(handles)
    }

    /// The HCI handle of the harness's link `connection` (0x0040 + connection unless told otherwise).
    func handle(_ connection: Int) -> UInt16 { handles[connection] }

    /// Link `connection` as the server and the database take it.
    func link(_ connection: Int) -> GATTServerLink { links[handles[connection]] }

    /// Sends one PDU from link `connection` (its bearer; the delegate hears its handle,
    /// `handle(connection)`); returns the action and the response bytes.
    mutating func send(_ pdu: [UInt8], connection: Int = 0) -> (ATTServerAction, [UInt8]) {
        var out = ATTTestSink()
        let link = link(connection)
        let action = server.handle(pdu: pdu.span, bearer: &bearers[connection], link: link, now: now,
                                   database: &db, delegate: &delegate, response: &out)
        if action == .respond {
            #expect(out.bytes.count <= Int(bearers[connection].mtu), "response longer than ATT_MTU")
        } else {
            #expect(out.bytes.isEmpty, "bytes written without .respond")
        }
        return (action, out.bytes)
    }

    mutating func send(_ hex: String, connection: Int = 0) -> (ATTServerAction, [UInt8]) {
        send(attHex(hex), connection: connection)
    }

    /// Response bytes of a request (expects `.respond`).
    mutating func ask(_ hex: String, connection: Int = 0) -> [UInt8] {
        let (action, bytes) = send(attHex(hex), connection: connection)
        #expect(action == .respond, "\(hex)")
        return bytes
    }
}

/// The Herald peripheral's database, laid out exactly as the Bumble phone in the captures:
/// GAP 0x0001–0x0005, GATT 0x0006–0x000D, Herald 0x000E–0x0012 (payload read 0x0010, signal write 0x0012).
func heraldDatabase() throws -> GATTStandardDatabase {
    var db = try GATTStandardDatabase(deviceName: Array("herald".utf8).span)
    try db.addPrimaryService(heraldServiceUUID)
    try db.addCharacteristic(heraldPayloadUUID, properties: .read, permissions: .read,
                             value: .stored(heraldPayload.span, maxLength: 64))
    try db.addCharacteristic(heraldSignalUUID, properties: .write, permissions: .write, value: .dynamic(id: 10))
    return db
}

/// "lo hi" hex of a little-endian 16-bit field.
func le16(_ v: UInt16) -> String {
    func two(_ b: UInt16) -> String { let t = String(b, radix: 16); return t.count == 1 ? "0" + t : t }
    return two(v & 0xFF) + " " + two(v >> 8)
}

/// `base` with prepare queue `Q` on its links (`GATTServerDelegate.PrepareQueue`): for tests of a
/// bounded or absent queue, where the application type would otherwise name it.
struct QueueSizedDelegate<Q: ATTPrepareQueue, Base: GATTServerDelegate>: GATTServerDelegate {
    typealias PrepareQueue = Q
    var base: Base
    static var serverFeatures: GATTServerFeatures { Base.serverFeatures }
    mutating func read<S: ByteSink>(id: UInt16, link: UInt16, offset: Int, into sink: inout S) -> ATTErrorCode? {
        base.read(id: id, link: link, offset: offset, into: &sink)
    }
    mutating func write(id: UInt16, link: UInt16, offset: Int, value: Span<UInt8>) -> ATTErrorCode? {
        base.write(id: id, link: link, offset: offset, value: value)
    }
    mutating func clientConfigurationChanged(valueHandle: UInt16, link: UInt16, configuration: GATTClientConfiguration) {
        base.clientConfigurationChanged(valueHandle: valueHandle, link: link, configuration: configuration)
    }
    mutating func storedValueWritten(handle: UInt16, link: UInt16) {
        base.storedValueWritten(handle: handle, link: link)
    }
}
