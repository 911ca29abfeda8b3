// LE Advertising Report (legacy, 0x02) and LE Extended Advertising Report (0x0D) events, both
// yielding one normalised `AdvertisingReport` so scanning code does not care which one the
// controller sends (Bumble's virtual controller answers a legacy scan with extended reports).

/// What kind of PDU a report came from, as the extended report's Event_Type bits
/// (Core 5.4 Vol 4 Part E 7.7.65.13). Legacy event types are mapped onto the same bits using the
/// equivalences that section lists, so one test (`isConnectable`, ...) works for both events.
public struct AdvertisingReportKind: Equatable, Hashable, Sendable {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let connectable = AdvertisingReportKind(rawValue: 0x0001)
    public static let scannable = AdvertisingReportKind(rawValue: 0x0002)
    public static let directed = AdvertisingReportKind(rawValue: 0x0004)
    public static let scanResponse = AdvertisingReportKind(rawValue: 0x0008)
    public static let legacy = AdvertisingReportKind(rawValue: 0x0010)

    public func contains(_ other: AdvertisingReportKind) -> Bool { rawValue & other.rawValue == other.rawValue }

    public var isConnectable: Bool { contains(.connectable) }
    public var isScannable: Bool { contains(.scannable) }
    public var isDirected: Bool { contains(.directed) }
    public var isScanResponse: Bool { contains(.scanResponse) }
    public var isLegacy: Bool { contains(.legacy) }

    /// Bits 5-6: 0 complete, 1 incomplete (more reports follow), 2 incomplete and truncated.
    public var dataStatus: UInt8 { UInt8(truncatingIfNeeded: (rawValue &>> 5) & 0x3) }
    public var isDataComplete: Bool { dataStatus == 0 }

    /// Legacy Event_Type (Core 5.4 Vol 4 Part E 7.7.65.2): ADV_IND 0, ADV_DIRECT_IND 1,
    /// ADV_SCAN_IND 2, ADV_NONCONN_IND 3, SCAN_RSP 4. A legacy SCAN_RSP does not say which
    /// advertisement it answers; it is mapped as a response to a scannable one.
    public init(legacyEventType: UInt8) throws(DecodeError) {
        switch legacyEventType {
        case 0x00: rawValue = 0b001_0011
        case 0x01: rawValue = 0b001_0101
        case 0x02: rawValue = 0b001_0010
        case 0x03: rawValue = 0b001_0000
        case 0x04: rawValue = 0b001_1010
        default: throw .invalidValue(field: "Event_Type", value: Int(legacyEventType))
        }
    }
}

/// One advertising report, borrowed from the event.
public struct AdvertisingReport: ~Escapable {
    public let kind: AdvertisingReportKind
    public let address: DeviceAddress
    /// dBm; nil when the controller could not measure it (0x7F).
    public let rssi: Int8?
    /// The advertiser's Tx power in dBm; extended reports only, nil when absent (0x7F).
    public let txPower: Int8?
    /// Extended reports only: Advertising SID, nil when no ADI field was present (0xFF).
    public let advertisingSID: UInt8?
    /// Advertising or scan response data (AD structures; see `AdvertisingDataParser`).
    public let data: Span<UInt8>

    @_lifetime(copy data)
    public init(
        kind: AdvertisingReportKind, address: DeviceAddress, rssi: Int8?, txPower: Int8?, advertisingSID: UInt8?,
        data: Span<UInt8>
    ) {
        self.kind = kind
        self.address = address
        self.rssi = rssi
        self.txPower = txPower
        self.advertisingSID = advertisingSID
        self.data = data
    }
}

/// 0x7F means "not available" for RSSI and Tx power in both report events.
@inline(__always)
private func optionalPower(_ v: Int8) -> Int8? { v == 0x7F ? nil : v }

private func advertiserAddress(type rawType: UInt8, _ address: BDAddress, allowAnonymous: Bool) throws(DecodeError) -> DeviceAddress {
    guard let type = AddressType(rawValue: rawType), allowAnonymous || type != .anonymous else {
        throw .invalidValue(field: "Address_Type", value: Int(rawType))
    }
    return DeviceAddress(type: type, address: address)
}

/// LE Advertising Report (Core 5.4 Vol 4 Part E 7.7.65.2), iterated report by report:
///
///     var reports = try HCILEAdvertisingReportEvent(meta)
///     while let report = try reports.next() { ... }
///
/// Each report is length-checked as it is read. A report cut short throws and ends the iteration:
/// nothing after it can be found. A report read whole whose values are wrong (a reserved Event_Type
/// or Address_Type, Data_Length over 31) throws, and the iteration goes on with the next report,
/// which its lengths still locate (the reports follow one another, each carrying its own length,
/// Core 5.4 Vol 4 Part E 7.7.65.2; Linux skips such a report the same way). Bytes left after the
/// last declared report are `trailingBytes`. Loop `while !isFinished` to see every report and error.
public struct HCILEAdvertisingReportEvent: ~Escapable {
    public static let subevent = HCILESubeventCode.advertisingReport
    var cursor: ReportCursor
    public var numberOfReports: Int { cursor.numberOfReports }
    /// True once `next` has nothing more to give: every report read, or one cut short.
    public var isFinished: Bool { cursor.isFinished }

    @_lifetime(copy parameters)
    public init(parsing parameters: Span<UInt8>) throws(DecodeError) {
        cursor = try ReportCursor(parsing: parameters)
    }

    @_lifetime(copy meta)
    public init(_ meta: HCILEMetaEvent) throws(DecodeError) {
        try expectSubevent(meta.subevent, Self.subevent)
        try self.init(parsing: meta.parameters)
    }

    @_lifetime(copy self)
    public mutating func next() throws(DecodeError) -> AdvertisingReport? {
        guard try cursor.beginReport() else { return nil }
        let eventType = try cursor.reader.u8()
        let addressType = try cursor.reader.u8()
        let rawAddress = try BDAddress.read(&cursor.reader)
        let length = Int(try cursor.reader.u8())
        let data = try cursor.reader.bytes(length)
        let rssi = try cursor.reader.i8()
        // Read whole: from here an error costs only this report.
        cursor.failed = false
        guard length <= 31 else { throw .badLength(field: "Data_Length", declared: length, limit: 31) }
        let kind = try AdvertisingReportKind(legacyEventType: eventType)
        let address = try advertiserAddress(type: addressType, rawAddress, allowAnonymous: false)
        return AdvertisingReport(
            kind: kind, address: address, rssi: optionalPower(rssi), txPower: nil, advertisingSID: nil, data: data)
    }
}

/// The iteration both report events share: Num_Reports, then that many reports. A report cut short
/// ends the iteration; bytes left after the last declared report are `trailingBytes`.
struct ReportCursor: ~Escapable {
    let numberOfReports: Int
    var reader: ByteReader
    var index = 0
    /// Set while a report is being read and cleared once it was read whole, so that a report cut
    /// short (or bytes after the last) latches.
    var failed = false

    /// Nothing more to read: a report was cut short, or every report was read and nothing follows.
    var isFinished: Bool { failed || (index >= numberOfReports && reader.isAtEnd) }

    @_lifetime(copy parameters)
    init(parsing parameters: Span<UInt8>) throws(DecodeError) {
        var r = ByteReader(parameters)
        let n = Int(try r.u8())
        guard n >= 1 else { throw .invalidValue(field: "Num_Reports", value: n) }
        numberOfReports = n
        reader = r
    }

    /// True when another report is to be read; false once all were (after checking nothing follows).
    mutating func beginReport() throws(DecodeError) -> Bool {
        guard !failed else { return false }
        guard index < numberOfReports else {
            if !reader.isAtEnd { failed = true }
            try reader.expectEnd()
            return false
        }
        index += 1
        failed = true
        return true
    }
}

/// LE Extended Advertising Report (Core 5.4 Vol 4 Part E 7.7.65.13), iterated like the legacy one.
/// Each report is 24 octets plus its data.
public struct HCILEExtendedAdvertisingReportEvent: ~Escapable {
    public static let subevent = HCILESubeventCode.extendedAdvertisingReport
    var cursor: ReportCursor
    public var numberOfReports: Int { cursor.numberOfReports }
    /// True once `next` has nothing more to give (as `HCILEAdvertisingReportEvent.isFinished`).
    public var isFinished: Bool { cursor.isFinished }

    @_lifetime(copy parameters)
    public init(parsing parameters: Span<UInt8>) throws(DecodeError) {
        cursor = try ReportCursor(parsing: parameters)
    }

    @_lifetime(copy meta)
    public init(_ meta: HCILEMetaEvent) throws(DecodeError) {
        try expectSubevent(meta.subevent, Self.subevent)
        try self.init(parsing: meta.parameters)
    }

    @_lifetime(copy self)
    public mutating func next() throws(DecodeError) -> AdvertisingReport? {
        guard try cursor.beginReport() else { return nil }
        let kind = AdvertisingReportKind(rawValue: try cursor.reader.u16())
        let addressType = try cursor.reader.u8()
        let rawAddress = try BDAddress.read(&cursor.reader)
        try cursor.reader.skip(2)  // Primary_PHY, Secondary_PHY
        let sid = try cursor.reader.u8()
        let txPower = try cursor.reader.i8()
        let rssi = try cursor.reader.i8()
        try cursor.reader.skip(2 + 1 + 6)  // Periodic_Advertising_Interval, Direct_Address_Type, Direct_Address
        let length = Int(try cursor.reader.u8())
        let data = try cursor.reader.bytes(length)
        // Read whole: from here an error costs only this report.
        cursor.failed = false
        let address = try advertiserAddress(type: addressType, rawAddress, allowAnonymous: true)
        return AdvertisingReport(
            kind: kind, address: address, rssi: optionalPower(rssi), txPower: optionalPower(txPower),
            advertisingSID: sid == 0xFF ? nil : sid, data: data)
    }
}
