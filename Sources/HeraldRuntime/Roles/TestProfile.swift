import BluetoothHost
import Foundation

/// The test GATT profile `herald serve --profile test` exposes, for interop tests against other hosts.
///
/// One 128-bit primary service with four characteristics, each exercising one part of ATT:
/// - `longValue`: 200 readable octets 0x00...0xC7, longer than any MTU-23 response, so a client
///   needs Read Blob (Core 5.4 Vol 3 Part G 4.8.3); it carries a User Description descriptor.
/// - `writable`: Write and Write Without Response, up to 512 octets, so long values need Prepare and
///   Execute Write (Part G 4.9.4); every write is reported, and reads return the last value that
///   link wrote.
/// - `notifying` and `indicating`: once a client enables them in the CCCD, the server sends `count`
///   values in order, a 32-bit little-endian counter from 0; each indication waits for its confirmation.
/// Plus the Battery service (0x180F) with a readable Battery Level, for a 16-bit service.
public enum TestProfile {
    public static let service = BluetoothUUID("4c4d0001-7e57-4e3a-9d8c-5a1f3c2b1a00")!
    public static let longValue = BluetoothUUID("4c4d0002-7e57-4e3a-9d8c-5a1f3c2b1a00")!
    public static let writable = BluetoothUUID("4c4d0003-7e57-4e3a-9d8c-5a1f3c2b1a00")!
    public static let notifying = BluetoothUUID("4c4d0004-7e57-4e3a-9d8c-5a1f3c2b1a00")!
    public static let indicating = BluetoothUUID("4c4d0005-7e57-4e3a-9d8c-5a1f3c2b1a00")!
    public static let batteryService = BluetoothUUID(uuid16: 0x180F)
    public static let batteryLevel = BluetoothUUID(uuid16: 0x2A19)
    public static let longValueLength = 200
    public static let longValueDescription = "200 octets, 0x00 to 0xc7"
    public static let batteryPercent: UInt8 = 87
    /// The writable characteristic's value identifier for the delegate.
    static let writableID: UInt16 = 1
}

/// Sizes of the test server: 8 links (Zephyr's hci_uart default allows that many), room for the
/// two mandatory services, ours and Battery.
public typealias TestServerDatabase = GATTDatabase<40, 1024, 8>
public typealias TestServerStack = BluetoothStack<TestServer, 8, 40, 1024>

/// One line of `herald serve` output.
public struct TestServerEvent: Encodable, Equatable {
    public var event: String
    public var time: UInt64
    public var handle: UInt16?
    public var peer: String?
    public var peerType: String?
    public var reason: String?
    public var mtu: Int?
    /// LL PDU sizes after a Data Length Update (octets each way).
    public var txOctets: Int?
    public var rxOctets: Int?
    /// PHYs after a PHY Update ("1M", "2M", "Coded").
    public var txPHY: String?
    public var rxPHY: String?
    public var attribute: UInt16?
    public var notify: Bool?
    public var indicate: Bool?
    public var value: String?
    public var length: Int?
    public var parts: Int?
    public var index: Int?
    public var address: String?

    init(_ event: String, time: UInt64) {
        self.event = event
        self.time = time
    }

    /// A short human line for the terminal (the JSON form carries everything).
    public var line: String {
        var s = event
        if let handle { s += " handle=0x\(hex(handle).lowercased())" }
        if let peer { s += " peer=\(peer)" }
        if let reason { s += " reason=\(reason)" }
        if let mtu { s += " mtu=\(mtu)" }
        if let txOctets, let rxOctets { s += " tx=\(txOctets) rx=\(rxOctets)" }
        if let txPHY, let rxPHY { s += " tx=\(txPHY) rx=\(rxPHY)" }
        if let attribute { s += " attribute=0x\(hex(attribute).lowercased())" }
        if let notify { s += " notify=\(notify)" }
        if let indicate { s += " indicate=\(indicate)" }
        if let index { s += " index=\(index)" }
        if let length { s += " length=\(length)" }
        if let value { s += " value=\(value)" }
        if let address { s += " address=\(address)" }
        return s
    }
}
