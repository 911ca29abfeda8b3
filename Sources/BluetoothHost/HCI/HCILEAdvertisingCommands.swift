// Legacy advertising, scanning and connection-initiation commands (Core 5.4 Vol 4 Part E 7.8.5-7.8.13).
// Legacy commands work on every controller; Zephyr's hci_uart and Bumble accept both these and
// the extended set, but a controller refuses mixing them until reset (Core 5.4 Vol 4 Part E 3.1.1).

/// Which address the controller puts in our PDUs (Own_Address_Type, Core 5.4 Vol 4 Part E 7.8.5).
public enum HCIOwnAddressType: UInt8, Sendable, Equatable {
    case publicAddress = 0x00
    case randomAddress = 0x01
    /// RPA from the resolving list, else the public address.
    case resolvableOrPublic = 0x02
    /// RPA from the resolving list, else the random address.
    case resolvableOrRandom = 0x03
}

/// Advertising_Type of LE Set Advertising Parameters (Core 5.4 Vol 4 Part E 7.8.5).
public enum HCILEAdvertisingType: UInt8, Sendable, Equatable {
    /// ADV_IND: connectable and scannable undirected.
    case connectableUndirected = 0x00
    /// ADV_DIRECT_IND, high duty cycle (at most 1.28 s).
    case connectableDirectedHighDuty = 0x01
    /// ADV_SCAN_IND: scannable undirected.
    case scannableUndirected = 0x02
    /// ADV_NONCONN_IND.
    case nonConnectableUndirected = 0x03
    /// ADV_DIRECT_IND, low duty cycle.
    case connectableDirectedLowDuty = 0x04
}

/// Advertising_Filter_Policy (Core 5.4 Vol 4 Part E 7.8.5).
public enum HCIAdvertisingFilterPolicy: UInt8, Sendable, Equatable {
    case acceptAll = 0x00
    case filterScanRequests = 0x01
    case filterConnectionRequests = 0x02
    case filterBoth = 0x03
}

/// LE Set Advertising Parameters (Core 5.4 Vol 4 Part E 7.8.5). Intervals in 0.625 ms units
/// (0x0020...0x4000); the defaults are the specification's (1.28 s, all three channels).
public struct HCILESetAdvertisingParameters: HCICommand, Equatable, Sendable {
    public static let opcode = HCIOpcode(ogf: 0x08, ocf: 0x0006)
    public var intervalMin: UInt16
    public var intervalMax: UInt16
    public var advertisingType: HCILEAdvertisingType
    public var ownAddressType: HCIOwnAddressType
    /// Only used by directed advertising or when resolving-list lookup applies; 0 public, 1 random.
    public var peerAddressType: AddressType
    public var peerAddress: BDAddress
    /// Bit 0 channel 37, bit 1 channel 38, bit 2 channel 39.
    public var channelMap: UInt8
    public var filterPolicy: HCIAdvertisingFilterPolicy

    public init(
        intervalMin: UInt16 = 0x0800, intervalMax: UInt16 = 0x0800,
        advertisingType: HCILEAdvertisingType = .connectableUndirected,
        ownAddressType: HCIOwnAddressType = .publicAddress,
        peerAddressType: AddressType = .publicDevice, peerAddress: BDAddress = .zero,
        channelMap: UInt8 = 0x07, filterPolicy: HCIAdvertisingFilterPolicy = .acceptAll
    ) {
        self.intervalMin = intervalMin
        self.intervalMax = intervalMax
        self.advertisingType = advertisingType
        self.ownAddressType = ownAddressType
        self.peerAddressType = peerAddressType
        self.peerAddress = peerAddress
        self.channelMap = channelMap
        self.filterPolicy = filterPolicy
    }

    public func writeParameters<S: ByteSink>(to sink: inout S) {
        sink.append(u16: intervalMin)
        sink.append(u16: intervalMax)
        sink.append(advertisingType.rawValue)
        sink.append(ownAddressType.rawValue)
        sink.append(peerAddressType.rawValue)
        peerAddress.write(to: &sink)
        sink.append(channelMap)
        sink.append(filterPolicy.rawValue)
    }
}

/// LE Set Advertising Data (Core 5.4 Vol 4 Part E 7.8.7).
///
/// The parameter is always the full 31-octet field preceded by the significant length; the
/// unused octets are sent as zero, as the specification requires.
public struct HCILESetAdvertisingData: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: 0x08, ocf: 0x0008)
    public var data: FixedBytes<31>

    public init(data: FixedBytes<31>) { self.data = data }

    /// Copies `bytes`; more than 31 octets do not fit a legacy advertisement.
    public init(_ bytes: Span<UInt8>) throws(AdvertisingDataError) {
        guard bytes.count <= 31 else { throw .doesNotFit }
        data = FixedBytes(bytes)
    }

    public func writeParameters<S: ByteSink>(to sink: inout S) { writeLegacyDataField(data, to: &sink) }
}

/// LE Set Scan Response Data (Core 5.4 Vol 4 Part E 7.8.8): same layout as advertising data.
public struct HCILESetScanResponseData: HCICommand, Equatable {
    public static let opcode = HCIOpcode(ogf: 0x08, ocf: 0x0009)
    public var data: FixedBytes<31>

    public init(data: FixedBytes<31> = FixedBytes()) { self.data = data }

    public init(_ bytes: Span<UInt8>) throws(AdvertisingDataError) {
        guard bytes.count <= 31 else { throw .doesNotFit }
        data = FixedBytes(bytes)
    }

    public func writeParameters<S: ByteSink>(to sink: inout S) { writeLegacyDataField(data, to: &sink) }
}

/// Length octet, significant part, zero padding to 31 (Core 5.4 Vol 4 Part E 7.8.7, 7.8.8).
private func writeLegacyDataField<S: ByteSink>(_ data: FixedBytes<31>, to sink: inout S) {
    sink.append(UInt8(truncatingIfNeeded: data.count))
    for i in 0..<31 { sink.append(i < data.count ? data[i] : 0) }
}

/// LE Set Advertising Enable (Core 5.4 Vol 4 Part E 7.8.9).
public struct HCILESetAdvertisingEnable: HCICommand, Equatable, Sendable {
    public static let opcode = HCIOpcode(ogf: 0x08, ocf: 0x000A)
    public var enable: Bool
    public init(_ enable: Bool) { self.enable = enable }
    public func writeParameters<S: ByteSink>(to sink: inout S) { sink.append(enable ? 1 : 0) }
}

/// LE_Scan_Type (Core 5.4 Vol 4 Part E 7.8.10).
public enum HCILEScanType: UInt8, Sendable, Equatable {
    /// Listen only; no SCAN_REQ is sent.
    case passive = 0x00
    /// Sends SCAN_REQ to scannable advertisers and reports their SCAN_RSP.
    case active = 0x01
}

/// Scanning_Filter_Policy (Core 5.4 Vol 4 Part E 7.8.10).
public enum HCIScanningFilterPolicy: UInt8, Sendable, Equatable {
    case acceptAll = 0x00
    case filterAcceptListOnly = 0x01
    /// Like acceptAll, but also directed advertising to a resolvable private address.
    case acceptAllAndUnresolvedDirected = 0x02
    case filterAcceptListAndUnresolvedDirected = 0x03
}

/// LE Set Scan Parameters (Core 5.4 Vol 4 Part E 7.8.10). Interval and window in 0.625 ms units
/// (0x0004...0x4000, window ≤ interval); defaults are the specification's 10 ms / 10 ms.
public struct HCILESetScanParameters: HCICommand, Equatable, Sendable {
    public static let opcode = HCIOpcode(ogf: 0x08, ocf: 0x000B)
    public var scanType: HCILEScanType
    public var interval: UInt16
    public var window: UInt16
    public var ownAddressType: HCIOwnAddressType
    public var filterPolicy: HCIScanningFilterPolicy

    public init(
        scanType: HCILEScanType = .passive, interval: UInt16 = 0x0010, window: UInt16 = 0x0010,
        ownAddressType: HCIOwnAddressType = .publicAddress, filterPolicy: HCIScanningFilterPolicy = .acceptAll
    ) {
        self.scanType = scanType
        self.interval = interval
        self.window = window
        self.ownAddressType = ownAddressType
        self.filterPolicy = filterPolicy
    }

    public func writeParameters<S: ByteSink>(to sink: inout S) {
        sink.append(scanType.rawValue)
        sink.append(u16: interval)
        sink.append(u16: window)
        sink.append(ownAddressType.rawValue)
        sink.append(filterPolicy.rawValue)
    }
}

/// LE Set Scan Enable (Core 5.4 Vol 4 Part E 7.8.11).
public struct HCILESetScanEnable: HCICommand, Equatable, Sendable {
    public static let opcode = HCIOpcode(ogf: 0x08, ocf: 0x000C)
    public var enable: Bool
    /// When true the controller reports each advertiser once per scan, until scanning restarts.
    public var filterDuplicates: Bool

    public init(enable: Bool, filterDuplicates: Bool = false) {
        self.enable = enable
        self.filterDuplicates = filterDuplicates
    }

    public func writeParameters<S: ByteSink>(to sink: inout S) {
        sink.append(enable ? 1 : 0)
        sink.append(filterDuplicates ? 1 : 0)
    }
}

/// LE Create Connection (Core 5.4 Vol 4 Part E 7.8.12). Completes with Command Status; the
/// connection (or its cancellation) arrives as LE (Enhanced) Connection Complete.
/// Scan timing in 0.625 ms, connection interval in 1.25 ms, supervision timeout in 10 ms,
/// CE lengths in 0.625 ms.
public struct HCILECreateConnection: HCICommand, Equatable, Sendable {
    public static let opcode = HCIOpcode(ogf: 0x08, ocf: 0x000D)
    public var scanInterval: UInt16
    public var scanWindow: UInt16
    /// False: connect to `peerAddress`. True: connect to any device on the Filter Accept List.
    public var useFilterAcceptList: Bool
    public var peerAddressType: AddressType
    public var peerAddress: BDAddress
    public var ownAddressType: HCIOwnAddressType
    public var connectionIntervalMin: UInt16
    public var connectionIntervalMax: UInt16
    public var maxLatency: UInt16
    public var supervisionTimeout: UInt16
    public var minCELength: UInt16
    public var maxCELength: UInt16

    public init(
        scanInterval: UInt16 = 0x0060, scanWindow: UInt16 = 0x0060, useFilterAcceptList: Bool = false,
        peerAddressType: AddressType, peerAddress: BDAddress, ownAddressType: HCIOwnAddressType = .publicAddress,
        connectionIntervalMin: UInt16 = 0x0018, connectionIntervalMax: UInt16 = 0x0028, maxLatency: UInt16 = 0,
        supervisionTimeout: UInt16 = 0x01F4, minCELength: UInt16 = 0, maxCELength: UInt16 = 0
    ) {
        self.scanInterval = scanInterval
        self.scanWindow = scanWindow
        self.useFilterAcceptList = useFilterAcceptList
        self.peerAddressType = peerAddressType
        self.peerAddress = peerAddress
        self.ownAddressType = ownAddressType
        self.connectionIntervalMin = connectionIntervalMin
        self.connectionIntervalMax = connectionIntervalMax
        self.maxLatency = maxLatency
        self.supervisionTimeout = supervisionTimeout
        self.minCELength = minCELength
        self.maxCELength = maxCELength
    }

    /// Connects to the device an advertising report came from.
    public init(peer: DeviceAddress, ownAddressType: HCIOwnAddressType = .publicAddress) {
        self.init(peerAddressType: peer.type, peerAddress: peer.address, ownAddressType: ownAddressType)
    }

    public func writeParameters<S: ByteSink>(to sink: inout S) {
        sink.append(u16: scanInterval)
        sink.append(u16: scanWindow)
        sink.append(useFilterAcceptList ? 1 : 0)
        sink.append(peerAddressType.rawValue)
        peerAddress.write(to: &sink)
        sink.append(ownAddressType.rawValue)
        sink.append(u16: connectionIntervalMin)
        sink.append(u16: connectionIntervalMax)
        sink.append(u16: maxLatency)
        sink.append(u16: supervisionTimeout)
        sink.append(u16: minCELength)
        sink.append(u16: maxCELength)
    }
}

/// LE Create Connection Cancel (Core 5.4 Vol 4 Part E 7.8.13). On success the pending connection
/// completes with status 0x02 Unknown Connection Identifier.
public struct HCILECreateConnectionCancel: HCICommand, Equatable, Sendable {
    public static let opcode = HCIOpcode(ogf: 0x08, ocf: 0x000E)
    public init() {}
    public func writeParameters<S: ByteSink>(to sink: inout S) {}
}
