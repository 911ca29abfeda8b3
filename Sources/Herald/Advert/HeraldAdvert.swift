import BluetoothHost

/// Which pair of Herald identifiers goes in the advertisement proper (the other UUID moves to the
/// scan response, so scanners that filter on either still find us).
public enum HeraldAdvertIdentifiers: Sendable, Equatable {
    /// Flags + the specification's 128-bit service UUID (the default).
    case specification
    /// Flags + the registered 16-bit UUID 0xFCF6 (Herald apps since v2.1).
    case registered
}

/// Our legacy advertisement and scan response (31 octets each, Core 5.4 Vol 3 Part C 11).
///
/// Our device does not advertise a pseudo device address: its resolvable private address already
/// rotates with the contact identifier (see `ResolvablePrivateAddress`).
public struct HeraldAdvertisement {
    public static let legacyCapacity = 31

    public var advertisingData: FixedBytes<31>
    public var scanResponseData: FixedBytes<31>

    /// `name` (UTF-8) goes in the scan response, shortened at a character boundary if it does not
    /// fit; `txPower` (dBm) in the advertisement if given.
    public init(identifiers: HeraldAdvertIdentifiers = .specification, name: Span<UInt8> = Span(),
                txPower: Int8? = nil) throws(AdvertisingDataError) {
        var adv = AdvertisingDataBuilder<31>()
        var scan = AdvertisingDataBuilder<31>()
        // LE General Discoverable, BR/EDR not supported (Core Supplement Part A 1.3).
        try adv.addFlags(ADFlags.generalDiscoverableLEOnly)
        switch identifiers {
        case .specification:
            try adv.addServiceUUID(HeraldIdentifiers.serviceUUID)
            try scan.addServiceUUID(HeraldIdentifiers.registeredServiceUUID)
        case .registered:
            try adv.addServiceUUID(HeraldIdentifiers.registeredServiceUUID)
            try scan.addServiceUUID(HeraldIdentifiers.serviceUUID)
        }
        if let txPower { try adv.addTxPowerLevel(txPower) }
        if name.count > 0 { try scan.addLocalNameFitting(name) }
        advertisingData = adv.build()
        scanResponseData = scan.build()
    }

    /// Data already made: for firmware that keeps its advertisement in flash, made by the initialiser
    /// above where the image is built (the beacon's test checks its copy), not at each start-up.
    public init(advertisingData: FixedBytes<31>, scanResponseData: FixedBytes<31>) {
        self.advertisingData = advertisingData
        self.scanResponseData = scanResponseData
    }
}

/// What an advertiser is, for a Herald scanner.
public enum HeraldAdvertKind: Sendable, Equatable {
    /// Advertises a Herald service UUID or a pseudo device address.
    case herald
    /// An Apple device showing only Apple manufacturer data: a backgrounded iPhone hides its service
    /// UUIDs in Apple's "overflow area", so only connecting and discovering services can tell.
    case appleConnectToCheck
    /// An Apple device the reference apps' filter rules out from its advert alone (`AppleDeviceFilter`):
    /// no connection is spent on it.
    case appleIgnored
    /// Anything else (including Apple iBeacons, which are beacons, not phones).
    case notHerald
}

/// The Herald-relevant facts in an advertisement (and optionally its scan response).
public struct HeraldAdvertClassification: Sendable, Equatable {
    public var hasSpecificationServiceUUID = false
    public var hasRegisteredServiceUUID = false
    /// 6 octets after manufacturer ID 0xFFFA or 0x05F1.
    public var pseudoDeviceAddress: PseudoDeviceAddress?
    /// Manufacturer data with Apple's company ID 0x004C.
    public var isApple = false
    /// First octet of Apple's manufacturer payload (0x01 overflow area, 0x02 iBeacon, 0x10 nearby …).
    public var appleType: UInt8?
    /// The first `AppleDeviceFilter.patterns` index an Apple message matched.
    public var appleFilterMatch: Int?
    /// Tx Power Level AD structure, dBm.
    public var txPower: Int8?

    public init() {}

    public init(advertisingData: Span<UInt8>, scanResponse: Span<UInt8> = Span()) throws(DecodeError) {
        self.init()
        try add(advertisingData)
        try add(scanResponse)
    }

    public var kind: HeraldAdvertKind {
        if hasSpecificationServiceUUID || hasRegisteredServiceUUID || pseudoDeviceAddress != nil { return .herald }
        // iBeacon: Apple type 0x02, length 0x15 — a fixed beacon, never a phone running Herald.
        if isApple && appleType != 0x02 { return appleFilterMatch == nil ? .appleConnectToCheck : .appleIgnored }
        return .notHerald
    }

    /// Folds in one advertising or scan response data block; a malformed AD structure is an error.
    public mutating func add(_ data: Span<UInt8>) throws(DecodeError) {
        var parser = AdvertisingDataParser(data)
        while let s = try parser.next() {
            let d = s.data
            if let width = AdvertisingDataParser.uuidListWidth(ofType: s.type) {
                guard d.count % width == 0 else {
                    throw .badLength(field: "Service UUID list", declared: d.count, limit: d.count - d.count % width)
                }
                var offset = 0
                while offset < d.count {
                    let uuid = try BluetoothUUID(wire: d.extracting(offset..<(offset + width)))
                    if uuid == HeraldIdentifiers.serviceUUID { hasSpecificationServiceUUID = true }
                    if uuid == HeraldIdentifiers.registeredServiceUUID { hasRegisteredServiceUUID = true }
                    offset += width
                }
            } else if s.type == ADType.manufacturerSpecificData {
                guard d.count >= 2 else { throw .badLength(field: "Manufacturer Specific Data", declared: d.count, limit: 2) }
                let company = UInt16(d[0]) | UInt16(d[1]) &<< 8
                let payload = d.extracting(2..<d.count)
                switch company {
                case HeraldIdentifiers.pseudoDeviceAddressManufacturerID, HeraldIdentifiers.registeredManufacturerID:
                    // Only the 6-octet form is a pseudo device address; other lengths are someone else's.
                    if payload.count == PseudoDeviceAddress.size { pseudoDeviceAddress = try PseudoDeviceAddress(wire: payload) }
                case HeraldIdentifiers.appleCompanyID:
                    isApple = true
                    if payload.count > 0 { appleType = payload[0] }
                    if appleFilterMatch == nil { appleFilterMatch = AppleDeviceFilter.firstMatch(inAppleData: payload) }
                default:
                    break
                }
            } else if s.type == ADType.txPowerLevel {
                guard d.count == 1 else { throw .badLength(field: "Tx Power Level", declared: d.count, limit: 1) }
                txPower = Int8(bitPattern: d[0])
            }
        }
    }
}
