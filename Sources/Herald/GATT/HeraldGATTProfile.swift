import BluetoothHost

/// Handles of the Herald service in a database (see `HeraldGATTProfile.add`).
public struct HeraldGATTHandles: Sendable, Equatable {
    /// The primary service declaration.
    public var service: UInt16
    /// The payload characteristic (read).
    public var payload: GATTCharacteristicHandles
    /// The compliant ("Android") signal characteristic (write with response).
    public var signal: GATTCharacteristicHandles

    public init(service: UInt16, payload: GATTCharacteristicHandles, signal: GATTCharacteristicHandles) {
        self.service = service
        self.payload = payload
        self.signal = signal
    }
}

/// The Herald GATT service (Herald protocol specification, "GATT service"): one primary service with
///
/// - the payload characteristic: read only; the value is produced by the application (`dynamic`),
///   because it changes every period and may differ per connection;
/// - the compliant ("Android") signal characteristic: write with response only (no write without
///   response: the writer must learn, through the ATT response, whether each fragment was accepted),
///   also served by the application so it can reassemble fragments per connection.
///
/// The non-compliant ("iOS") signal characteristic, which also notifies, exists only for iPhones that
/// act as peripherals; a device that never needs to push data to a central has no use for it.
public enum HeraldGATTProfile {
    /// Delegate identifiers of the two dynamic values (`GATTServerDelegate.read/write(id:)`). In the
    /// 0x48xx range so an application that adds its own dynamic values can keep clear of them.
    public static let payloadValueID: UInt16 = 0x4801
    public static let signalValueID: UInt16 = 0x4802

    /// Attributes the service adds: service declaration, then declaration + value for each
    /// characteristic (neither notifies, so no CCCD).
    public static let attributeCount = 5
    /// Value-pool octets the service adds at most: the service UUID (16, or 2 for 0xFCF6) and two
    /// characteristic declarations with 128-bit UUIDs (3 + 16 octets each, Core 5.4 Vol 3 Part G
    /// 3.3.1). Dynamic values take none.
    public static let valueOctets = 16 + 2 * 19

    /// Adds the Herald service to `database` and returns its handles.
    ///
    /// `identifiers` picks the service UUID: `.specification` (the default) uses the specification's
    /// 128-bit UUID, which every Herald release discovers; `.registered` uses the registered 16-bit
    /// 0xFCF6. The characteristics keep their 128-bit UUIDs either way.
    @discardableResult
    public static func add<let A: Int, let V: Int, let L: Int>(
        to database: inout GATTDatabase<A, V, L>, identifiers: HeraldAdvertIdentifiers = .specification,
        payloadID: UInt16 = payloadValueID, signalID: UInt16 = signalValueID
    ) throws(GATTDatabaseError) -> HeraldGATTHandles {
        let serviceUUID = identifiers == .specification ? HeraldIdentifiers.serviceUUID : HeraldIdentifiers.registeredServiceUUID
        let service = try database.addPrimaryService(serviceUUID)
        let payload = try database.addCharacteristic(
            HeraldIdentifiers.payloadCharacteristicUUID, properties: .read, permissions: .read,
            value: .dynamic(id: payloadID))
        let signal = try database.addCharacteristic(
            HeraldIdentifiers.androidSignalCharacteristicUUID, properties: .write, permissions: .write,
            value: .dynamic(id: signalID))
        return HeraldGATTHandles(service: service, payload: payload, signal: signal)
    }
}
