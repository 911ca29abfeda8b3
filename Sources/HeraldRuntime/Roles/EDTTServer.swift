import BluetoothHost
import Foundation

/// The database type of `herald serve --profile edtt`: a sparse constant table (EDTTGATTTables),
/// per-link CCCDs and Client Supported Features for 8 links in 64 octets.
public typealias EDTTDatabase = GATTDatabase<0, 64, 8>
public typealias EDTTServerStack = BluetoothStack<EDTTServer, 8, 0, 64>

/// The DUT side of EDTT's GATT server tests (the Bluetooth SIG's test purposes GATT/SR/... and
/// GAP/GAT/...): serves the SIG's four GATT test databases with exactly their handles, switches
/// between them while connected, and notifies or indicates Value V6 when EDTT's relay asks.
///
/// Each service set is its own `EDTTDatabase` over its generated table; a switch parks the current
/// one and serves the next (`LEStack.replaceDatabase`). The GATT service (handles 1-8) is the same
/// in every set, as it is in Zephyr's gatt_test_app, where only the test services are registered
/// and unregistered: its Service Changed CCCD and Client Supported Features follow the client
/// across a switch, and Service Changed is indicated where it was enabled (Core 5.4 Vol 3 Part G
/// 7.1); the test services' CCCDs start cleared when their set is served again, as a service
/// registered anew. Links are named by connection handle, as the stack names them.
public struct EDTTServer: LEApplication {
    /// The decoded tables: allocated once and never freed, as a constant table must outlive its
    /// database (GATTDatabase.init(table:)).
    nonisolated(unsafe) static let tables: [UnsafeBufferPointer<UInt8>] = EDTTGATTTables.sets.map { set in
        let bytes = decodeHex(set.table)
        let buffer = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: bytes.count)
        _ = buffer.initialize(from: bytes)
        return UnsafeBufferPointer(buffer)
    }

    public static var setCount: Int { EDTTGATTTables.sets.count }

    /// The service set being served (gatt_test_app starts with set 1).
    public private(set) var set = 1
    /// The databases of the sets not being served (the served one is in the stack); index = set.
    var parked: [EDTTDatabase]
    /// Writable values per set and dynamic id - 1 (the delegate's), and their room.
    var values: [[[UInt8]]]
    let rooms: [[Int]]
    /// The links up, by connection handle, in the order they came.
    var links: [UInt16] = []
    public private(set) var log: [String] = []
    public private(set) var address: String?
    public private(set) var connected = false
    /// Wakes the run loop every 5 ms, so that a relay command waits at most that long for the
    /// command's `step` (the loop otherwise sleeps up to 50 ms in a read; EDTT allows 100-200 ms).
    var wake: UInt64 = 0
    public var applicationDeadline: UInt64? { wake }

    init(databases: [EDTTDatabase]) {
        parked = databases
        values = EDTTGATTTables.sets.map { $0.values.map { decodeHex($0.initial) } }
        rooms = EDTTGATTTables.sets.map { $0.values.map(\.room) }
    }

    /// The stack, serving set 1. Every table is checked here (`init(table:)`), once.
    public static func makeStack(configuration: HostConfiguration) throws -> EDTTServerStack {
        var databases: [EDTTDatabase] = []
        for t in tables { databases.append(try EDTTDatabase(table: t)) }
        let app = EDTTServer(databases: databases)
        // ATT_MTU up to 512, as gatt_test_app (CONFIG_BT_L2CAP_RX_MTU=512); EDTT asks for 23...512.
        return EDTTServerStack(configuration: configuration, database: databases[1], app: app, maximumMTU: 512)
    }

    /// No LE Set PHY of ours (`LEApplication.asksForLE2MPHY`), as gatt_test_app sends none: the
    /// tests exercise GATT, and EDTT's `Initiator.disconnect` takes the first event after the
    /// Disconnect's Command Status as Disconnection Complete. Our peripheral's request 2 s into a
    /// link put an LE PHY Update Complete there whenever a test ended within the procedure (our
    /// capture: PHY Update Complete 4.9 ms before Disconnection Complete), failing that test (seen:
    /// GATT/SR/GAW/BI-02-C, BI-03-C, BI-33-C; docs/edtt.md).
    public static var asksForLE2MPHY: Bool { false }

    public mutating func note(_ s: String) { log.append(s) }

    public mutating func takeLog() -> [String] {
        defer { log.removeAll() }
        return log
    }

    /// Connectable undirected advertising at 50 ms (EDTT's tester scans for about 200 ms per test
    /// and takes the first ADV_IND it hears), resumed after every disconnection.
    func advertisingIntent() -> AdvertisingIntent {
        var adv = AdvertisingDataBuilder<31>()
        try? adv.addFlags(ADFlags.generalDiscoverableLEOnly)
        try? adv.addLocalNameFitting(Array("Test Database".utf8).span)
        let parameters = HCILESetAdvertisingParameters(intervalMin: 0x0050, intervalMax: 0x0050)
        return AdvertisingIntent(parameters: parameters, data: adv.build(), restartAfterConnection: true)
    }

    // MARK: LEApplication

    public mutating func stackDidBecomeReady(_ info: ControllerInfo, now: UInt64, control: inout StackControl) {
        control.startAdvertising(advertisingIntent())
        wake = now &+ 5
        address = info.address.description
        note("advertising address=\(info.address.description)")
    }

    public mutating func stackDidConnect(_ link: ConnectionSummary, now: UInt64, control: inout StackControl) {
        links.append(link.handle)
        connected = true
        note("connected handle=0x\(hex(link.handle).lowercased()) peer=\(link.peer.address.description)")
    }

    public mutating func stackDidDisconnect(handle: UInt16, reason: HCIStatus, now: UInt64, control: inout StackControl) {
        // The stack forgets the link's CCCDs in the served database; a parked set's per-link values
        // are cleared when it is served again (`LEStack.replaceDatabase`).
        links.removeAll { $0 == handle }
        connected = !links.isEmpty
        note("disconnected handle=0x\(hex(handle).lowercased()) reason=0x\(hex(reason.rawValue).lowercased())")
    }

    public mutating func stackTimerFired(now: UInt64, control: inout StackControl) {
        if now >= wake { wake = now &+ 5 }
    }

    // MARK: GATTServerDelegate: the writable values of the served set

    public mutating func read<S: ByteSink>(id: UInt16, link: UInt16, offset: Int, into sink: inout S) -> ATTErrorCode? {
        let i = Int(id) - 1
        guard values[set].indices.contains(i) else { return .unlikelyError }
        let value = values[set][i]
        // Part F 3.4.4.5: an offset past the end of the value is Invalid Offset.
        guard offset <= value.count else { return .invalidOffset }
        for b in value[offset...] { sink.append(b) }
        return nil
    }

    public mutating func write(id: UInt16, link: UInt16, offset: Int, value: Span<UInt8>) -> ATTErrorCode? {
        let i = Int(id) - 1
        guard values[set].indices.contains(i) else { return .unlikelyError }
        var current = values[set][i]
        // Part F 3.4.6.1 / 3.4.6.3: an offset past the end is Invalid Offset; a value longer than
        // the attribute holds is Invalid Attribute Value Length.
        guard offset <= current.count else { return .invalidOffset }
        guard offset + value.count <= rooms[set][i] else { return .invalidAttributeValueLength }
        current.removeSubrange(offset...)
        for k in value.indices { current.append(value[k]) }
        values[set][i] = current
        return nil
    }

    // MARK: EDTT's commands (through bin/edtt_dut_relay.py)

    /// `SET n`: serve service set `n` from now on. Does nothing for the set being served (as
    /// gatt_test_app's service_setup).
    public static func switchSet(_ n: Int, _ le: inout LEStack<EDTTServer, 8, 0, 64>) {
        let old = le.app.set
        guard n != old, le.app.parked.indices.contains(n) else { return }
        // The GATT service's per-link state follows the client (see the type's comment); the stack
        // moves it, matching links where it keeps them.
        le.app.parked[old] = le.replaceDatabase(with: le.app.parked[n])
        le.app.set = n
        le.app.note("set \(n)")
        // Service Changed (Part G 7.1): the whole handle range may have changed.
        let scNext = serviceChangedHandle(le.database)
        guard scNext != 0 else { return }
        let range: [UInt8] = [0x01, 0x00, 0xFF, 0xFF]
        for handle in le.app.links {
            let r = le.indicate(handle: handle, attribute: scNext, value: range.span)
            le.app.note("service-changed handle=0x\(hex(handle).lowercased()) \(r)")
        }
    }

    /// `NOTIFY` / `INDICATE`: Value V6 (0xB006) of the served set to every link that enabled it
    /// (gatt_test_app's service_notify / service_indicate).
    public static func sendValueV6(indicate: Bool, _ le: inout LEStack<EDTTServer, 8, 0, 64>) {
        let h = EDTTGATTTables.sets[le.app.set].valueV6
        guard h != 0 else { return }
        for handle in le.app.links {
            // A value of the set's own (dynamic), read as the link it goes to reads it.
            var value = FixedBytes<512>()
            do throws(ConnectionTableError) {
                if let e = try le.readValue(h, link: handle, into: &value) {
                    le.app.note("read 0x\(hex(h).lowercased()) handle=0x\(hex(handle).lowercased()) \(e)")
                    continue
                }
            } catch {
                le.app.note("read 0x\(hex(h).lowercased()) \(error)")
                continue
            }
            if indicate {
                let r = le.indicate(handle: handle, attribute: h, value: value.span)
                le.app.note("indicate 0x\(hex(h).lowercased()) \(r)")
            } else {
                let sent = le.notify(handle: handle, attribute: h, value: value.span) == .sent
                le.app.note("notify 0x\(hex(h).lowercased()) sent=\(sent)")
            }
        }
    }

    static func serviceChangedHandle(_ db: EDTTDatabase) -> UInt16 {
        var db = db  // `handle(at:)` is mutating (GATTAttributeDatabase); the table database is small
        for i in 0..<db.count {
            let h = db.handle(at: i)
            if db.attribute(h)?.type == BluetoothUUID(uuid16: GATTAttributeType.serviceChanged) { return h }
        }
        return 0
    }
}

func decodeHex(_ s: String) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(s.utf8.count / 2)
    var high: UInt8?
    for c in s.utf8 {
        let v: UInt8
        switch c {
        case 0x30...0x39: v = c - 0x30
        case 0x61...0x66: v = c - 0x61 + 10
        case 0x41...0x46: v = c - 0x41 + 10
        default: continue
        }
        if let h = high { out.append(h << 4 | v); high = nil } else { high = v }
    }
    return out
}
