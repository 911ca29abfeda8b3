/// Service data copied out of advertising data: the UUID and up to 27 octets of payload
/// (the most a 16-bit-UUID entry can carry in a legacy PDU).
public struct ADServiceData: Equatable {
    public var uuid: BluetoothUUID
    public var data: FixedBytes<27>

    public init(uuid: BluetoothUUID, data: FixedBytes<27>) {
        self.uuid = uuid
        self.data = data
    }
}

/// The fields of advertising data a scanner displays or filters on, copied into fixed storage so
/// it outlives the event buffer (Core Supplement Part A 1).
///
/// Capacities fit anything a legacy 31-octet advertisement can carry in full; from longer extended
/// data, entries past a capacity are dropped and `truncated` is set. `containsServiceUUID` answers
/// only from what was kept; `AdvertisingDataParser.containsServiceUUID(_:in:)` scans raw data in full.
public struct AdvertisingDataSummary: Equatable {
    public static let uuid16Capacity = 8
    public static let uuid32Capacity = 4
    public static let uuid128Capacity = 2
    public static let serviceDataCapacity = 2

    public var flags: UInt8?
    public private(set) var uuids16 = InlineArray<8, UInt16>(repeating: 0)
    public private(set) var uuid16Count = 0
    public private(set) var uuids32 = InlineArray<4, UInt32>(repeating: 0)
    public private(set) var uuid32Count = 0
    public private(set) var uuids128 = InlineArray<2, BluetoothUUID>(repeating: BluetoothUUID(uuid16: 0))
    public private(set) var uuid128Count = 0
    /// True if some UUID list present was marked complete and none incomplete
    /// (the advertiser claims to have listed every service it offers).
    public private(set) var uuidListsComplete = false
    private var sawIncompleteList = false

    public var manufacturerCompanyID: UInt16?
    /// Manufacturer payload after the company identifier, first Manufacturer Specific Data only.
    public var manufacturerData = FixedBytes<29>()

    /// Name octets (UTF-8); `nameIsComplete` says whether it was the Complete Local Name.
    public var name = FixedBytes<29>()
    public var nameIsComplete: Bool?

    public var txPowerLevel: Int8?

    public private(set) var serviceData = InlineArray<2, ADServiceData>(
        repeating: ADServiceData(uuid: BluetoothUUID(uuid16: 0), data: FixedBytes()))
    public private(set) var serviceDataCount = 0

    /// Something did not fit the fixed capacities and was dropped.
    public private(set) var truncated = false

    public init() {}

    /// Summarises advertising data; a structure running past the end is a decode error.
    /// Structures of unknown type are skipped; a known one with an impossible length is an error.
    public init(parsing data: Span<UInt8>) throws(DecodeError) {
        self.init()
        var parser = AdvertisingDataParser(data)
        while let s = try parser.next() {
            try add(s)
        }
    }

    /// Folds one AD structure in (also used to merge a scan response into its advertisement).
    public mutating func add(_ s: borrowing ADStructure) throws(DecodeError) {
        let d = s.data
        switch s.type {
        case ADType.flags:
            // Core Supplement Part A 1.3: flags may be longer than one octet; only bits 0-4 exist.
            guard d.count >= 1 else { throw .badLength(field: "Flags", declared: d.count, limit: 1) }
            flags = d[0]
        case ADType.incompleteServiceUUIDs16, ADType.completeServiceUUIDs16,
            ADType.incompleteServiceUUIDs32, ADType.completeServiceUUIDs32,
            ADType.incompleteServiceUUIDs128, ADType.completeServiceUUIDs128:
            try addUUIDList(s)
        case ADType.shortenedLocalName, ADType.completeLocalName:
            name = FixedBytes(d)
            if name.overflowed { truncated = true }
            nameIsComplete = s.type == ADType.completeLocalName
        case ADType.txPowerLevel:
            guard d.count == 1 else { throw .badLength(field: "Tx Power Level", declared: d.count, limit: 1) }
            txPowerLevel = Int8(bitPattern: d[0])
        case ADType.manufacturerSpecificData:
            guard d.count >= 2 else { throw .badLength(field: "Manufacturer Specific Data", declared: d.count, limit: 2) }
            guard manufacturerCompanyID == nil else { truncated = true; return }
            manufacturerCompanyID = UInt16(d[0]) | UInt16(d[1]) << 8
            manufacturerData = FixedBytes(d.extracting(2..<d.count))
            if manufacturerData.overflowed { truncated = true }
        case ADType.serviceData16, ADType.serviceData32, ADType.serviceData128:
            let width = s.type == ADType.serviceData16 ? 2 : s.type == ADType.serviceData32 ? 4 : 16
            guard d.count >= width else { throw .badLength(field: "Service Data", declared: d.count, limit: width) }
            guard serviceDataCount < Self.serviceDataCapacity else { truncated = true; return }
            let uuid = try BluetoothUUID(wire: d.extracting(0..<width))
            let payload = FixedBytes<27>(d.extracting(width..<d.count))
            if payload.overflowed { truncated = true }
            serviceData[serviceDataCount] = ADServiceData(uuid: uuid, data: payload)
            serviceDataCount += 1
        default:
            break
        }
    }

    private mutating func addUUIDList(_ s: borrowing ADStructure) throws(DecodeError) {
        guard let width = AdvertisingDataParser.uuidListWidth(ofType: s.type) else { return }
        let d = s.data
        guard d.count % width == 0 else {
            throw .badLength(field: "Service UUID list", declared: d.count, limit: d.count - d.count % width)
        }
        let complete = s.type == ADType.completeServiceUUIDs16 || s.type == ADType.completeServiceUUIDs32
            || s.type == ADType.completeServiceUUIDs128
        if complete { uuidListsComplete = !sawIncompleteList } else { sawIncompleteList = true; uuidListsComplete = false }
        var offset = 0
        while offset < d.count {
            let wire = d.extracting(offset..<(offset + width))
            switch width {
            case 2:
                if uuid16Count < Self.uuid16Capacity {
                    uuids16[uuid16Count] = UInt16(wire[0]) | UInt16(wire[1]) << 8
                    uuid16Count += 1
                } else { truncated = true }
            case 4:
                if uuid32Count < Self.uuid32Capacity {
                    uuids32[uuid32Count] = UInt32(wire[0]) | UInt32(wire[1]) << 8 | UInt32(wire[2]) << 16
                        | UInt32(wire[3]) << 24
                    uuid32Count += 1
                } else { truncated = true }
            default:
                if uuid128Count < Self.uuid128Capacity {
                    uuids128[uuid128Count] = try BluetoothUUID(wire: wire)
                    uuid128Count += 1
                } else { truncated = true }
            }
            offset += width
        }
    }

    /// True if `uuid` is in any of the kept service UUID lists (16, 32 or 128-bit). A 16-bit UUID
    /// matches its 128-bit form and vice versa, since they are the same UUID on the Base UUID.
    public func containsServiceUUID(_ uuid: BluetoothUUID) -> Bool {
        for i in 0..<uuid16Count where BluetoothUUID(uuid16: uuids16[i]) == uuid { return true }
        for i in 0..<uuid32Count where BluetoothUUID(uuid32: uuids32[i]) == uuid { return true }
        for i in 0..<uuid128Count where uuids128[i] == uuid { return true }
        return false
    }

    public static func == (a: AdvertisingDataSummary, b: AdvertisingDataSummary) -> Bool {
        guard a.flags == b.flags, a.uuid16Count == b.uuid16Count, a.uuid32Count == b.uuid32Count,
            a.uuid128Count == b.uuid128Count, a.uuidListsComplete == b.uuidListsComplete,
            a.manufacturerCompanyID == b.manufacturerCompanyID, a.manufacturerData == b.manufacturerData,
            a.name == b.name, a.nameIsComplete == b.nameIsComplete, a.txPowerLevel == b.txPowerLevel,
            a.serviceDataCount == b.serviceDataCount, a.truncated == b.truncated
        else { return false }
        for i in 0..<a.uuid16Count where a.uuids16[i] != b.uuids16[i] { return false }
        for i in 0..<a.uuid32Count where a.uuids32[i] != b.uuids32[i] { return false }
        for i in 0..<a.uuid128Count where a.uuids128[i] != b.uuids128[i] { return false }
        for i in 0..<a.serviceDataCount where a.serviceData[i] != b.serviceData[i] { return false }
        return true
    }
}
