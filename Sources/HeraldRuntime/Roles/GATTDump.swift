import BluetoothHost
import Foundation

/// A remote GATT database as `herald gatt` found it.
public struct GATTDump: Encodable {
    public struct Descriptor: Encodable {
        public var uuid: String
        public var handle: UInt16
        public var value: String?
        public var error: String?
        /// The SIG's (or Herald's) name for the UUID, when it has one (`named()`).
        public var name: String? = nil
    }
    public struct Characteristic: Encodable {
        public var uuid: String
        public var declaration: UInt16
        public var handle: UInt16
        public var properties: UInt8
        public var propertyNames: [String]
        public var value: String?
        public var error: String?
        public var descriptors: [Descriptor] = []
        public var name: String? = nil
        /// Octets read before a long read failed (a Read Blob refused midway).
        public var partialLength: Int? = nil
    }
    public struct Service: Encodable {
        public var uuid: String
        public var start: UInt16
        public var end: UInt16
        public var characteristics: [Characteristic] = []
        public var name: String? = nil
    }

    public var address: String
    public var mtu: Int = 23
    /// Link-layer PDU sizes (octets each way): 27 until a Data Length Update.
    public var dataLength = DataLength()
    public struct DataLength: Encodable {
        public var txOctets = 27
        public var rxOctets = 27
    }
    /// The PHYs in use ("1M" until a PHY Update moves the link).
    public var phy = PHY()
    public struct PHY: Encodable {
        public var tx = "1M"
        public var rx = "1M"
    }
    public var services: [Service] = []
    /// Milliseconds: connect, MTU exchange, discovery, reading values.
    public var timings: [String: UInt64] = [:]
    /// Set when a procedure failed and the dump stopped short.
    public var error: String?

    /// The dump with each UUID's assigned name filled in, as the text output shows them.
    public func named() -> GATTDump {
        var d = self
        for i in d.services.indices {
            d.services[i].name = AssignedNumbers.name(d.services[i].uuid)
            for j in d.services[i].characteristics.indices {
                d.services[i].characteristics[j].name = AssignedNumbers.name(d.services[i].characteristics[j].uuid)
                for k in d.services[i].characteristics[j].descriptors.indices {
                    d.services[i].characteristics[j].descriptors[k].name =
                        AssignedNumbers.name(d.services[i].characteristics[j].descriptors[k].uuid)
                }
            }
        }
        return d
    }
}
