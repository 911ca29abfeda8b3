/// Why advertising data could not be built.
public enum AdvertisingDataError: Error, Equatable, Sendable {
    /// The structure would run past the buffer (31 octets for legacy advertising,
    /// Core 5.4 Vol 3 Part C 11) or past the 255-octet limit of one AD structure.
    case doesNotFit
}

/// Builds advertising or scan response data, one AD structure at a time, into `N` octets
/// (31 for legacy PDUs, up to 251 for one extended advertising fragment).
///
/// Every method checks the whole structure fits before writing any of it, so a failed call
/// leaves the data unchanged and the caller can try a smaller alternative (e.g. a shortened name).
public struct AdvertisingDataBuilder<let N: Int> {
    public private(set) var bytes: FixedBytes<N>

    public init() { bytes = FixedBytes() }

    public var count: Int { bytes.count }
    public var freeCapacity: Int { bytes.freeCapacity }

    /// The finished data.
    public func build() -> FixedBytes<N> { bytes }

    /// Octets left for the data of one more structure (after its length and type octets).
    public var freeDataCapacity: Int { max(0, min(freeCapacity - 2, 254)) }

    private func reserve(_ dataLength: Int) throws(AdvertisingDataError) {
        // The length octet counts the type octet too and must fit in one byte.
        guard dataLength >= 0, dataLength + 1 <= 255, 2 + dataLength <= freeCapacity else { throw .doesNotFit }
    }

    private mutating func header(_ type: UInt8, _ dataLength: Int) {
        bytes.append(UInt8(truncatingIfNeeded: dataLength + 1))
        bytes.append(type)
    }

    /// Any AD structure.
    public mutating func add(type: UInt8, data: Span<UInt8>) throws(AdvertisingDataError) {
        try reserve(data.count)
        header(type, data.count)
        bytes.append(contentsOf: data)
    }

    /// Flags (Core Supplement Part A 1.3); e.g. `ADFlags.generalDiscoverableLEOnly`.
    public mutating func addFlags(_ flags: UInt8) throws(AdvertisingDataError) {
        try reserve(1)
        header(ADType.flags, 1)
        bytes.append(flags)
    }

    /// A list of 16-bit service UUIDs (Core Supplement Part A 1.1).
    public mutating func addServiceUUIDs16(_ uuids: Span<UInt16>, complete: Bool = true) throws(AdvertisingDataError) {
        try reserve(2 * uuids.count)
        header(complete ? ADType.completeServiceUUIDs16 : ADType.incompleteServiceUUIDs16, 2 * uuids.count)
        for i in uuids.indices { bytes.append(u16: uuids[i]) }
    }

    /// A list of 32-bit service UUIDs.
    public mutating func addServiceUUIDs32(_ uuids: Span<UInt32>, complete: Bool = true) throws(AdvertisingDataError) {
        try reserve(4 * uuids.count)
        header(complete ? ADType.completeServiceUUIDs32 : ADType.incompleteServiceUUIDs32, 4 * uuids.count)
        for i in uuids.indices { bytes.append(u32: uuids[i]) }
    }

    /// A list of 128-bit service UUIDs (each written in full, whatever size it was created with).
    public mutating func addServiceUUIDs128(_ uuids: Span<BluetoothUUID>, complete: Bool = true) throws(AdvertisingDataError) {
        try reserve(16 * uuids.count)
        header(complete ? ADType.completeServiceUUIDs128 : ADType.incompleteServiceUUIDs128, 16 * uuids.count)
        for i in uuids.indices { uuids[i].write(to: &bytes, size: 16) }
    }

    /// One service UUID in the shortest list type it allows (16-bit alias or 128-bit).
    public mutating func addServiceUUID(_ uuid: BluetoothUUID, complete: Bool = true) throws(AdvertisingDataError) {
        let width = uuid.shortestWireSize
        let type: UInt8 = width == 2
            ? (complete ? ADType.completeServiceUUIDs16 : ADType.incompleteServiceUUIDs16)
            : (complete ? ADType.completeServiceUUIDs128 : ADType.incompleteServiceUUIDs128)
        try reserve(width)
        header(type, width)
        uuid.write(to: &bytes, size: width)
    }

    /// Manufacturer Specific Data: company identifier (little-endian) then the payload
    /// (Core Supplement Part A 1.4).
    public mutating func addManufacturerData(companyID: UInt16, data: Span<UInt8>) throws(AdvertisingDataError) {
        try reserve(2 + data.count)
        header(ADType.manufacturerSpecificData, 2 + data.count)
        bytes.append(u16: companyID)
        bytes.append(contentsOf: data)
    }

    /// Shortened or Complete Local Name (Core Supplement Part A 1.2), UTF-8 octets.
    public mutating func addLocalName(_ name: Span<UInt8>, complete: Bool = true) throws(AdvertisingDataError) {
        try add(type: complete ? ADType.completeLocalName : ADType.shortenedLocalName, data: name)
    }

    public mutating func addLocalName(_ name: StaticString, complete: Bool = true) throws(AdvertisingDataError) {
        let n = name.utf8CodeUnitCount
        try reserve(n)
        header(complete ? ADType.completeLocalName : ADType.shortenedLocalName, n)
        for i in 0..<n { bytes.append(name.utf8Start[i]) }
    }

    /// The complete name if it fits, else as much of it as fits as a Shortened Local Name.
    /// Throws only if not even one octet of name fits. Cuts at a UTF-8 character boundary.
    public mutating func addLocalNameFitting(_ name: Span<UInt8>) throws(AdvertisingDataError) {
        if name.count <= freeDataCapacity { return try addLocalName(name, complete: true) }
        var cut = freeDataCapacity
        // Never split a multi-octet character: back up over continuation octets (10xxxxxx).
        while cut > 0, name[cut] & 0xC0 == 0x80 { cut -= 1 }
        guard cut > 0 else { throw .doesNotFit }
        try addLocalName(name.extracting(0..<cut), complete: false)
    }

    /// Tx Power Level in dBm (Core Supplement Part A 1.5).
    public mutating func addTxPowerLevel(_ dBm: Int8) throws(AdvertisingDataError) {
        try reserve(1)
        header(ADType.txPowerLevel, 1)
        bytes.append(i8: dBm)
    }

    /// Service Data with a 16-bit UUID (Core Supplement Part A 1.11).
    public mutating func addServiceData16(uuid: UInt16, data: Span<UInt8>) throws(AdvertisingDataError) {
        try reserve(2 + data.count)
        header(ADType.serviceData16, 2 + data.count)
        bytes.append(u16: uuid)
        bytes.append(contentsOf: data)
    }

    /// Service Data with a 32-bit UUID.
    public mutating func addServiceData32(uuid: UInt32, data: Span<UInt8>) throws(AdvertisingDataError) {
        try reserve(4 + data.count)
        header(ADType.serviceData32, 4 + data.count)
        bytes.append(u32: uuid)
        bytes.append(contentsOf: data)
    }

    /// Service Data with a 128-bit UUID.
    public mutating func addServiceData128(uuid: BluetoothUUID, data: Span<UInt8>) throws(AdvertisingDataError) {
        try reserve(16 + data.count)
        header(ADType.serviceData128, 16 + data.count)
        uuid.write(to: &bytes, size: 16)
        bytes.append(contentsOf: data)
    }
}
