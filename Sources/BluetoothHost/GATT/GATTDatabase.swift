/// One attribute of the server (Core 5.4 Vol 3 Part F 3.2): handle = index + 1, type, permissions and
/// where its value lives.
public struct GATTAttribute: Sendable {
    public var type: BluetoothUUID
    public var permissions: GATTPermissions
    var storage: Storage
    /// For a characteristic value: the characteristic's properties and its CCCD handle (0 = none),
    /// so notify/indicate can find the per-link configuration without a search.
    public var properties = GATTCharacteristicProperties(rawValue: 0)
    public var cccdHandle: UInt16 = 0

    enum Storage: Sendable, Equatable {
        /// Declarations: fixed bytes in the value pool.
        case constant(offset: Int, length: Int)
        /// Application values held here; `length` changes with writes up to `capacity`.
        case stored(offset: Int, length: Int, capacity: Int)
        /// Served by the delegate.
        case dynamic(id: UInt16)
        /// One `width`-octet value per link (CCCD, Client Supported Features), `width * links` octets.
        case perLink(offset: Int, width: Int)
        /// The Database Hash, computed from the other attributes (Part G 7.3).
        case databaseHash
    }

    func isType(_ uuid16: UInt16) -> Bool { type.uuid16 == uuid16 }
}

/// Handles of a characteristic the builder added.
public struct GATTCharacteristicHandles: Sendable, Equatable {
    public var declaration: UInt16
    public var value: UInt16
    /// 0 when the characteristic neither notifies nor indicates.
    public var clientConfiguration: UInt16
}

/// A fixed-capacity GATT server database (Core 5.4 Vol 3 Part G 3), built at start-up, no heap.
/// With `attributeCapacity` 0 it is a constant table instead (`init(table:)`, GATTConstantTable.swift):
/// attributes and constant values in flash, only per-link values in RAM.
///
/// - `attributeCapacity`: most attributes (handles run 0x0001...count, no gaps; a sparse constant
///   table has its own handles).
/// - `valueCapacity`: octets for declarations, stored values and per-link values together.
/// - `linkCapacity`: connections that keep their own CCCDs and Client Supported Features (8 is a
///   sensible default, matching the connection table).
/// - `Handles`: whether a constant table's handles may have gaps (`GATTHandleLayout`). `GATTDatabase`
///   is this type with `AnyGATTHandles`; an application whose tables are all dense (the builder's
///   and the firmware images') chooses `ConsecutiveGATTHandles` and links no sparse lookups.
///
/// `init` adds the GAP service (Device Name, Appearance; Part C 12) and the GATT service (Service
/// Changed with its CCCD, Client Supported Features, Database Hash; Part G 7); the application then
/// adds its services with the builder methods. Values are read and written through the access
/// functions (GATTDatabaseAccess.swift), which the ATT server reaches through `GATTAttributeDatabase`.
public struct GATTDatabaseOf<let attributeCapacity: Int, let valueCapacity: Int, let linkCapacity: Int, Handles: GATTHandleLayout> {
    var attributes: InlineArray<attributeCapacity, GATTAttribute>
    var values: InlineArray<valueCapacity, UInt8>
    public internal(set) var count = 0
    var valuesUsed = 0
    var lastServiceHandle: UInt16 = 0
    var lastCharacteristicValueHandle: UInt16 = 0
    /// Cached Database Hash, little-endian as it is read over ATT; recomputed after any change.
    var hash: AES128.Block = InlineArray(repeating: 0)
    var hashIsValid = false
    /// The constant table a `GATTDatabase<0, V, L>` serves from (`init(table:)`); empty otherwise.
    var table = UnsafeBufferPointer<UInt8>(start: nil, count: 0)
    /// Whether `table` has a handle column (gaps in its handles, GATTConstantTable.swift); otherwise
    /// the handle of attribute `i` is `i + 1`.
    var sparse = false

    public private(set) var deviceNameHandle: UInt16 = 0
    public private(set) var appearanceHandle: UInt16 = 0
    public private(set) var serviceChanged = GATTCharacteristicHandles(declaration: 0, value: 0, clientConfiguration: 0)
    public internal(set) var clientSupportedFeaturesHandle: UInt16 = 0
    public internal(set) var databaseHashHandle: UInt16 = 0

    /// Builds the two mandatory services. `deviceNameMaxLength` leaves room to rename the device later.
    /// `features` must be the application's `serverFeatures`: they decide whether the GATT service
    /// has a Database Hash.
    public init(deviceName: Span<UInt8>, deviceNameMaxLength: Int = 32, appearance: UInt16 = 0,
                features: GATTServerFeatures = .all) throws(GATTDatabaseError) {
        attributes = InlineArray(repeating: GATTAttribute(type: BluetoothUUID(uuid16: 0), permissions: GATTPermissions(rawValue: 0), storage: .dynamic(id: 0)))
        values = InlineArray(repeating: 0)

        try addPrimaryService(BluetoothUUID(uuid16: GATTAttributeType.genericAccessService))
        deviceNameHandle = try addCharacteristic(
            BluetoothUUID(uuid16: GATTAttributeType.deviceName), properties: .read, permissions: .read,
            value: .stored(deviceName, maxLength: max(deviceNameMaxLength, deviceName.count))).value
        var appearanceBytes = FixedBytes<2>()
        appearanceBytes.append(u16: appearance)
        appearanceHandle = try addCharacteristic(
            BluetoothUUID(uuid16: GATTAttributeType.appearance), properties: .read, permissions: .read,
            value: .stored(appearanceBytes.span, maxLength: 2)).value

        try addPrimaryService(BluetoothUUID(uuid16: GATTAttributeType.genericAttributeService))
        // Service Changed is indicate-only and not readable (Part G 7.1); its value is the affected range.
        let zero = InlineArray<4, UInt8>(repeating: 0)
        serviceChanged = try addCharacteristic(
            BluetoothUUID(uuid16: GATTAttributeType.serviceChanged), properties: .indicate, permissions: GATTPermissions(rawValue: 0),
            value: .stored(zero.span, maxLength: 4))
        // Client Supported Features: one octet per client (Part G 7.2).
        let csfDeclaration = try addDeclaration(uuid: BluetoothUUID(uuid16: GATTAttributeType.clientSupportedFeatures),
                                                properties: GATTCharacteristicProperties.read | .write)
        clientSupportedFeaturesHandle = try addAttribute(
            BluetoothUUID(uuid16: GATTAttributeType.clientSupportedFeatures), permissions: .readWrite,
            storage: try reservePerLink(width: 1))
        attributes[Int(clientSupportedFeaturesHandle) - 1].properties = GATTCharacteristicProperties.read | .write
        _ = csfDeclaration
        // Database Hash (Part G 7.3), read-only.
        guard features.databaseHash else { return }
        _ = try addDeclaration(uuid: BluetoothUUID(uuid16: GATTAttributeType.databaseHash), properties: .read)
        databaseHashHandle = try addAttribute(BluetoothUUID(uuid16: GATTAttributeType.databaseHash),
                                              permissions: .read, storage: .databaseHash)
        attributes[Int(databaseHashHandle) - 1].properties = .read
    }

    public static var linkCount: Int { linkCapacity }

    // MARK: Builder

    /// Starts a primary service (Part G 3.1). Returns its declaration handle.
    @discardableResult
    public mutating func addPrimaryService(_ uuid: BluetoothUUID) throws(GATTDatabaseError) -> UInt16 {
        try addService(uuid, type: GATTAttributeType.primaryService)
    }

    mutating func addService(_ uuid: BluetoothUUID, type: UInt16) throws(GATTDatabaseError) -> UInt16 {
        var v = FixedBytes<16>()
        uuid.write(to: &v, size: uuid.shortestWireSize)
        let handle = try addAttribute(BluetoothUUID(uuid16: type), permissions: .read,
                                      storage: try reserveConstant(v.span))
        lastServiceHandle = handle
        lastCharacteristicValueHandle = 0
        return handle
    }

    /// Adds a characteristic declaration, its value and, when it notifies or indicates, its CCCD
    /// (Part G 3.3). `permissions` apply to the value; the CCCD is readable and writable by anyone
    /// (Part G 3.3.3.3 leaves its write security to the profile; none of ours needs it).
    // Not inlined: start-up code adds a handful of characteristics, one call each is enough.
    @discardableResult
    @inline(never)
    public mutating func addCharacteristic(_ uuid: BluetoothUUID, properties: GATTCharacteristicProperties,
                                           permissions: GATTPermissions, value: borrowing GATTValueSource)
        throws(GATTDatabaseError) -> GATTCharacteristicHandles
    {
        let declaration = try addDeclaration(uuid: uuid, properties: properties)
        let valueHandle = try addAttribute(uuid, permissions: permissions, storage: try reserve(value))
        attributes[Int(valueHandle) - 1].properties = properties
        lastCharacteristicValueHandle = valueHandle
        var cccd: UInt16 = 0
        if properties.contains(.notify) || properties.contains(.indicate) {
            cccd = try addAttribute(BluetoothUUID(uuid16: GATTAttributeType.clientCharacteristicConfiguration),
                                    permissions: .readWrite, storage: try reservePerLink(width: 2))
            attributes[Int(valueHandle) - 1].cccdHandle = cccd
        }
        return GATTCharacteristicHandles(declaration: declaration, value: valueHandle, clientConfiguration: cccd)
    }

    /// Adds a descriptor to the last characteristic (Part G 3.3.3). CCCDs are added automatically.
    @discardableResult
    public mutating func addDescriptor(_ uuid: BluetoothUUID, permissions: GATTPermissions,
                                       value: borrowing GATTValueSource) throws(GATTDatabaseError) -> UInt16 {
        guard lastCharacteristicValueHandle != 0 else { throw .noEnclosingDeclaration }
        return try addAttribute(uuid, permissions: permissions, storage: try reserve(value))
    }

    mutating func addDeclaration(uuid: BluetoothUUID, properties: GATTCharacteristicProperties) throws(GATTDatabaseError) -> UInt16 {
        guard lastServiceHandle != 0 else { throw .noEnclosingDeclaration }
        guard count + 2 <= attributeCapacity else { throw .tooManyAttributes }
        // Value: properties, value handle (the next attribute), UUID (Part G 3.3.1).
        var v = FixedBytes<19>()
        v.append(properties.rawValue)
        v.append(u16: UInt16(truncatingIfNeeded: count + 2))
        uuid.write(to: &v, size: uuid.shortestWireSize)
        return try addAttribute(BluetoothUUID(uuid16: GATTAttributeType.characteristic), permissions: .read,
                                storage: try reserveConstant(v.span))
    }

    mutating func addAttribute(_ type: BluetoothUUID, permissions: GATTPermissions,
                               storage: GATTAttribute.Storage) throws(GATTDatabaseError) -> UInt16 {
        guard count < attributeCapacity, count < 0xFFFF else { throw .tooManyAttributes }
        attributes[count] = GATTAttribute(type: type, permissions: permissions, storage: storage)
        count += 1
        hashIsValid = false
        return UInt16(truncatingIfNeeded: count)
    }

    mutating func reserve(_ source: borrowing GATTValueSource) throws(GATTDatabaseError) -> GATTAttribute.Storage {
        switch source {
        case .dynamic(let id):
            return .dynamic(id: id)
        case .stored(let initial, let maxLength):
            let capacity = max(maxLength, initial.count)
            guard capacity <= ATTMTU.maximumAttributeLength else { throw .valueTooLong }
            let offset = try reserveBytes(capacity)
            for i in initial.indices { values[offset + i] = initial[i] }
            return .stored(offset: offset, length: initial.count, capacity: capacity)
        }
    }

    mutating func reserveConstant(_ bytes: Span<UInt8>) throws(GATTDatabaseError) -> GATTAttribute.Storage {
        let offset = try reserveBytes(bytes.count)
        for i in bytes.indices { values[offset + i] = bytes[i] }
        return .constant(offset: offset, length: bytes.count)
    }

    mutating func reservePerLink(width: Int) throws(GATTDatabaseError) -> GATTAttribute.Storage {
        .perLink(offset: try reserveBytes(width * linkCapacity), width: width)
    }

    mutating func reserveBytes(_ n: Int) throws(GATTDatabaseError) -> Int {
        guard valuesUsed + n <= valueCapacity else { throw .valueStorageFull }
        defer { valuesUsed += n }
        return valuesUsed
    }

    // MARK: Lookup

    /// The attribute at `handle`, nil for 0x0000 or past the end.
    @inline(__always)
    public func attribute(_ handle: UInt16) -> GATTAttribute? {
        // Inlined, like `storedSpan`: the ATT server holds the database `inout`, and a call to a
        // read-only method made the compiler copy the whole database to pass `self`.
        guard let i = index(of: handle) else { return nil }
        return entry(i)
    }

    /// The index of the attribute at `handle` (nil for 0x0000 or a handle no attribute has).
    @inline(__always)
    func index(of handle: UInt16) -> Int? {
        if Self.usesTable && Handles.allowsGaps && sparse { return GATTConstantTable.index(table, count, of: handle) }
        // 0 <= i < count <= A: the index needs no second check.
        let i = Int(handle) &- 1
        guard i >= 0, i < count else { return nil }
        return i
    }

    /// The handle of attribute `i` (0 <= i < count).
    @inline(__always)
    public mutating func handle(at i: Int) -> UInt16 { entryHandle(i) }

    /// `handle(at:)` for read-only callers inside the database.
    @inline(__always)
    func entryHandle(_ i: Int) -> UInt16 {
        if Self.usesTable && Handles.allowsGaps && sparse { return GATTConstantTable.sparseHandle(table, count, i) }
        return UInt16(truncatingIfNeeded: i &+ 1)
    }

    /// The index of the first attribute whose handle is `handle` or above (`count` if none): where
    /// a walk over a handle range starts.
    @inline(__always)
    public mutating func firstIndex(atOrAfter handle: UInt16) -> Int {
        if Self.usesTable && Handles.allowsGaps && sparse { return GATTConstantTable.firstIndex(table, count, atOrAfter: handle) }
        return min(max(Int(handle) &- 1, 0), count)
    }

    /// The attribute of handle `i + 1`, for 0 <= i < count: from the table or the RAM array.
    @inline(__always)
    func entry(_ i: Int) -> GATTAttribute {
        if Self.usesTable { return GATTConstantTable.attribute(table, i) }
        return attributes[unchecked: i]
    }

    /// Whether handle `i + 1` (0 <= i < count) has the 16-bit type `uuid16`, and its CCCD handle:
    /// for the loops over handles, which need no more than that of a table record.
    @inline(__always)
    func entryIsType(_ i: Int, _ uuid16: UInt16) -> Bool {
        if Self.usesTable { return GATTConstantTable.isType(table, i, uuid16) }
        return attributes[unchecked: i].isType(uuid16)
    }

    @inline(__always)
    func entryCCCD(_ i: Int) -> UInt16 {
        if Self.usesTable { return GATTConstantTable.cccdHandle(table, i) }
        return attributes[unchecked: i].cccdHandle
    }

    /// Octet `k` of a `.constant` value's storage: in the table when there is one.
    @inline(__always)
    func constantOctet(_ k: Int) -> UInt8 { Self.usesTable ? table[k] : values[k] }

    /// Last handle of the group that starts at the service declaration `handle` (Part G 3.1).
    /// Inlined for the reason `attribute` is: as a call it copied the database (0.8 KB) into its frame.
    @inline(__always)
    public mutating func groupEnd(ofService handle: UInt16) -> UInt16 {
        guard let first = index(of: handle) else { return handle }
        var i = first &+ 1
        while i < count {
            if entryIsType(i, GATTAttributeType.primaryService) || entryIsType(i, GATTAttributeType.secondaryService) { break }
            i &+= 1
        }
        return entryHandle(i &- 1)
    }

    /// Octets the value occupies in the pool (stored, constant, per-link); nil when the delegate or the
    /// hash produces it.
    @inline(__always)
    func storedSpan(_ handle: UInt16, slot: Int) -> (offset: Int, length: Int)? {
        guard let a = attribute(handle) else { return nil }
        switch a.storage {
        case .constant(let o, let n), .stored(let o, let n, _): return (o, n)
        case .perLink(let o, let w):
            guard slot >= 0, slot < linkCapacity else { return nil }
            return (o + slot * w, w)
        case .dynamic, .databaseHash: return nil
        }
    }

    /// The stored or constant value at `handle` (empty for dynamic values, and for per-link values
    /// (CCCDs, Client Supported Features), which belong to a link: `value(_:link:)`).
    @_addressableSelf
    @_lifetime(borrow self)
    public func value(_ handle: UInt16) -> Span<UInt8> {
        value(handle, slot: -1)
    }

    /// The stored or constant value at `handle` as `link` sees it: its own copy of a per-link value.
    @_addressableSelf
    @_lifetime(borrow self)
    public func value(_ handle: UInt16, link: GATTServerLink) -> Span<UInt8> {
        value(handle, slot: link.slot)
    }

    /// `value` for the link the connection table keeps at `slot` (-1: none, per-link values empty).
    @_addressableSelf
    @_lifetime(borrow self)
    func value(_ handle: UInt16, slot: Int) -> Span<UInt8> {
        let r = storedSpan(handle, slot: slot) ?? (0, 0)
        if Self.usesTable, case .constant? = attribute(handle)?.storage {
            // The table outlives the database (init(table:)), so its octets may be lent as ours.
            let octets = Span(_unsafeElements: table.extracting(r.offset..<(r.offset + r.length)))
            return unsafe _overrideLifetime(octets, borrowing: self)
        }
        return values.span.extracting(r.offset..<(r.offset + r.length))
    }
}

/// The database whose constant table may be sparse (`AnyGATTHandles`): what every application has
/// unless it chooses otherwise (`LEApplication.GATTHandles`).
public typealias GATTDatabase<let attributeCapacity: Int, let valueCapacity: Int, let linkCapacity: Int> =
    GATTDatabaseOf<attributeCapacity, valueCapacity, linkCapacity, AnyGATTHandles>

/// Whether a constant GATT table's handles may have gaps (a sparse table, GATTConstantTable.swift):
/// a type, read as a constant after specialisation, so that a database whose tables are all dense
/// links none of a sparse table's lookups (1.1 KB of each firmware image's flash).
public protocol GATTHandleLayout {
    static var allowsGaps: Bool { get }
}

/// Tables with or without gaps in their handles (EDTT's test databases have them).
public enum AnyGATTHandles: GATTHandleLayout {
    public static var allowsGaps: Bool { true }
}

/// Tables whose handles run 0x0001...count, as the builder writes them: a sparse table is refused.
public enum ConsecutiveGATTHandles: GATTHandleLayout {
    public static var allowsGaps: Bool { false }
}

/// A database sized for a small peripheral: 64 attributes, 1 KiB of values, 8 links.
public typealias GATTStandardDatabase = GATTDatabase<64, 1024, 8>
