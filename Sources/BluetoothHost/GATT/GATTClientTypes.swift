// The vocabulary of the GATT client (Core 5.4 Vol 3 Part G 4): what a caller asks for, what it is
// told, and how a procedure can fail.

/// A GATT procedure the client runs (Core 5.4 Vol 3 Part G 4.3–4.12).
///
/// `~Escapable` because the write procedures borrow the caller's value bytes: `GATTClient.start`
/// serialises the first request at once, so a short write never copies its value. A long write copies
/// it into the client's own buffer (see `GATTClient`), because it needs the bytes again, both to send
/// later chunks and to check the server's echo of each one.
public enum GATTProcedure: ~Escapable {
    /// Exchange MTU (Part G 4.3.1): offer `GATTClient.maximumMTU`; allowed once per connection.
    case exchangeMTU
    /// Discover All Primary Services (Part G 4.4.1): Read By Group Type of 0x2800 over 0x0001...0xFFFF.
    case discoverAllPrimaryServices
    /// Discover Primary Service by Service UUID (Part G 4.4.2): Find By Type Value of 0x2800 = `uuid`.
    case discoverPrimaryServices(uuid: BluetoothUUID)
    /// Discover All Characteristics of a Service (Part G 4.6.1): Read By Type of 0x2803 in the range.
    case discoverAllCharacteristics(serviceStart: UInt16, serviceEnd: UInt16)
    /// Discover All Characteristic Descriptors (Part G 4.7.1): Find Information in `start...end`, which
    /// for one characteristic is its value handle + 1 through its last handle (the handle before the
    /// next characteristic declaration, or the service's end). An empty range is rejected by `start`:
    /// such a characteristic has no descriptors, so there is nothing to ask.
    case discoverAllDescriptors(start: UInt16, end: UInt16)
    /// Read Characteristic Value (Part G 4.8.1): one Read Request, at most ATT_MTU-1 octets.
    case read(handle: UInt16)
    /// Read Long Characteristic Values (Part G 4.8.3): Read, then Read Blob at increasing offsets while
    /// each response fills ATT_MTU-1 octets. Every chunk reaches the delegate with its offset.
    case readLong(handle: UInt16)
    /// Read Using Characteristic UUID (Part G 4.8.2): one Read By Type of `uuid` over 0x0001...0xFFFF,
    /// whose response carries the first such value's handle and up to ATT_MTU-4 octets of it; a value
    /// that fills them is read on with Read Blob from there (the long read of 4.8.3). No discovery is
    /// needed to read a characteristic whose UUID is known. The delegate hears each chunk with the
    /// value's handle and offset.
    case readUsingCharacteristicUUID(BluetoothUUID)
    /// Write Without Response (Part G 4.9.1): one Write Command of at most ATT_MTU-3 octets. It is not a
    /// transaction, so it may be sent while a procedure is outstanding and never completes or times out.
    case writeWithoutResponse(handle: UInt16, value: Span<UInt8>)
    /// Write Characteristic Value (Part G 4.9.3): one Write Request of at most ATT_MTU-3 octets.
    case write(handle: UInt16, value: Span<UInt8>)
    /// Write Long Characteristic Values (Part G 4.9.4): Prepare Write in ATT_MTU-5 octet chunks, each
    /// echo checked, then Execute Write. At most `GATTClient`'s `longWriteCapacity` octets (and 512).
    case writeLong(handle: UInt16, value: Span<UInt8>)
    /// Write the Client Characteristic Configuration descriptor at `descriptorHandle` (Part G 4.10, 4.11,
    /// 4.12.3): `.notification` (0x0001) or `.indication` (0x0002) subscribes, `.none` (0x0000) unsubscribes.
    case setClientConfiguration(descriptorHandle: UInt16, GATTClientConfiguration)
}

/// Which procedure a completion belongs to.
public enum GATTProcedureKind: Equatable, Sendable {
    case exchangeMTU
    case discoverAllPrimaryServices
    case discoverPrimaryServices
    case discoverAllCharacteristics
    case discoverAllDescriptors
    case read
    case readLong
    case readUsingCharacteristicUUID
    case write
    case writeLong
    case setClientConfiguration
}

/// Why a procedure could not start or did not succeed.
public enum GATTClientError: Error, Equatable, Sendable {
    /// Another procedure is outstanding; ATT allows one request at a time per bearer (Part F 3.3.2).
    case busy
    /// A transaction timed out earlier, so nothing more may be sent on this bearer (Part F 3.3.3).
    case bearerClosed
    /// This procedure's request went 30 s without a response (Part F 3.3.3). The bearer is now
    /// unusable; the caller must disconnect the link.
    case timeout
    /// The server answered with an Error Response (Part F 3.4.1.1).
    case attError(ATTErrorCode, handle: UInt16)
    /// A response PDU that is not the one the outstanding request expects.
    case unexpectedResponse(ATTOpcode)
    /// An Error Response that names a request other than the outstanding one.
    case unexpectedErrorResponse(requestOpcode: ATTOpcode)
    /// The expected response did not parse.
    case malformed(DecodeError)
    /// The response parsed but breaks the procedure's rules: entries outside the requested range or out
    /// of order, a UUID of the wrong size, a value longer than ATT_MTU allows or longer than 512 octets.
    case invalidResponse
    /// A Prepare Write Response did not echo what was sent (Part G 4.9.4): the queued writes were
    /// cancelled with Execute Write (flags 0x00) and nothing was written.
    case prepareWriteMismatch(offset: UInt16)
    /// The value does not fit the request (ATT_MTU-3 for a write, the buffer or 512 for a long write).
    case valueTooLong(length: Int, limit: Int)
    /// Handle 0x0000 (reserved, Part F 3.2.2), a range whose start is above its end, a procedure that
    /// may only run once (Exchange MTU) run again, or an empty long write.
    case invalidParameter
}

/// What the caller must do after `GATTClient.handle` or `GATTClient.tick`.
public enum GATTClientAction: Equatable, Sendable {
    /// Nothing to send.
    case none
    /// The reply sink holds exactly one PDU (the procedure's next request, an Execute Write cancel, or
    /// a Handle Value Confirmation) to send on this bearer.
    case send
    /// A transaction timed out: the link must be disconnected (Part F 3.3.3).
    case disconnect
}

/// A primary service found by discovery (Part G 4.4): its handle range and type.
public struct GATTDiscoveredService: Equatable, Sendable {
    public var startHandle: UInt16
    public var endHandle: UInt16
    public var uuid: BluetoothUUID
    public init(startHandle: UInt16, endHandle: UInt16, uuid: BluetoothUUID) {
        self.startHandle = startHandle
        self.endHandle = endHandle
        self.uuid = uuid
    }
}

/// A characteristic declaration found by discovery (Part G 3.3.1, 4.6). Its last handle is the handle
/// before the next declaration found, or the service's end for the last one (Part G 4.7.1).
public struct GATTDiscoveredCharacteristic: Equatable, Sendable {
    public var declarationHandle: UInt16
    public var properties: GATTCharacteristicProperties
    public var valueHandle: UInt16
    public var uuid: BluetoothUUID
    public init(declarationHandle: UInt16, properties: GATTCharacteristicProperties, valueHandle: UInt16, uuid: BluetoothUUID) {
        self.declarationHandle = declarationHandle
        self.properties = properties
        self.valueHandle = valueHandle
        self.uuid = uuid
    }
}

/// A characteristic descriptor found by discovery (Part G 4.7): its handle and type, e.g. 0x2902 CCCD.
public struct GATTDiscoveredDescriptor: Equatable, Sendable {
    public var handle: UInt16
    public var type: BluetoothUUID
    public init(handle: UInt16, type: BluetoothUUID) {
        self.handle = handle
        self.type = type
    }
}

/// The application side of the GATT client. Generic, never existential: `GATTClient.handle` is
/// specialised for the concrete delegate. Every method has a no-op default, so an application
/// implements only what it listens for.
public protocol GATTClientDelegate {
    /// Exchange MTU finished: `mtu` is the ATT_MTU now in use (Part G 4.3.1).
    mutating func gattClientDidExchangeMTU(_ mtu: UInt16)
    /// One service, as its response arrives (Part G 4.4).
    mutating func gattClientDidDiscover(service: GATTDiscoveredService)
    /// One characteristic, as its response arrives (Part G 4.6).
    mutating func gattClientDidDiscover(characteristic: GATTDiscoveredCharacteristic)
    /// One descriptor, as its response arrives (Part G 4.7).
    mutating func gattClientDidDiscover(descriptor: GATTDiscoveredDescriptor)
    /// Part of a value read from `handle`, starting `offset` octets into it (0 for a plain read). A long
    /// read delivers consecutive chunks; the client keeps none of them, the application assembles.
    mutating func gattClientDidRead(handle: UInt16, offset: Int, value: Span<UInt8>)
    /// A Handle Value Notification (Part G 4.10), also each entry of a Multiple Handle Value
    /// Notification (Part G 4.10.2).
    mutating func gattClientDidReceiveNotification(handle: UInt16, value: Span<UInt8>)
    /// A Handle Value Indication (Part G 4.11); the client has already written its confirmation.
    mutating func gattClientDidReceiveIndication(handle: UInt16, value: Span<UInt8>)
    /// The procedure ended: `error` is nil on success. Discovery that ends with Attribute Not Found
    /// succeeded (Part G 4.4.1, 4.6.1, 4.7.1).
    mutating func gattClientDidComplete(_ procedure: GATTProcedureKind, error: GATTClientError?)
    /// After each discovery response: true ends the discovery there, as a success, without asking for
    /// the rest of the range (Part G 4.4.1, 4.4.2, 4.6.1: "it is permitted to end the sub-procedure
    /// early if a desired" service or characteristic is found). A client that needs one service spares
    /// the round trip that would only end in Attribute Not Found.
    var gattClientHasFoundWhatItNeeds: Bool { get }
    /// The procedures this delegate's client runs beyond the ones every client answers (Exchange MTU,
    /// Discover All Primary Services, Discover All Characteristics, the reads and Write Request).
    /// The client answers a response of a procedure left out here with `.invalidResponse`, so its
    /// parser and its checks are not linked: a delegate lists every procedure its owner starts.
    static var optionalProcedures: GATTClientOptionalProcedures { get }
}

extension GATTClientDelegate {
    public mutating func gattClientDidExchangeMTU(_ mtu: UInt16) {}
    public mutating func gattClientDidDiscover(service: GATTDiscoveredService) {}
    public mutating func gattClientDidDiscover(characteristic: GATTDiscoveredCharacteristic) {}
    public mutating func gattClientDidDiscover(descriptor: GATTDiscoveredDescriptor) {}
    public mutating func gattClientDidRead(handle: UInt16, offset: Int, value: Span<UInt8>) {}
    public mutating func gattClientDidReceiveNotification(handle: UInt16, value: Span<UInt8>) {}
    public mutating func gattClientDidReceiveIndication(handle: UInt16, value: Span<UInt8>) {}
    public mutating func gattClientDidComplete(_ procedure: GATTProcedureKind, error: GATTClientError?) {}
    public var gattClientHasFoundWhatItNeeds: Bool { false }
    public static var optionalProcedures: GATTClientOptionalProcedures { .all }
}

/// The procedures a GATT client may leave out by its delegate's type (`GATTClientDelegate.optionalProcedures`),
/// as a server leaves out what `GATTServerFeatures` does not list.
public struct GATTClientOptionalProcedures: Sendable, Equatable {
    /// Discover Primary Service by Service UUID (Part G 4.4.2): Find By Type Value.
    public var discoverServicesByUUID: Bool
    /// Discover All Characteristic Descriptors (Part G 4.7.1): Find Information.
    public var discoverDescriptors: Bool
    /// Handle Value Notifications and Multiple Handle Value Notifications (Part G 4.10): without
    /// them every notification is dropped unparsed (`ignoredPDUs`). Indications are always
    /// confirmed (Part G 4.11.1).
    public var notifications: Bool

    public init(discoverServicesByUUID: Bool = true, discoverDescriptors: Bool = true, notifications: Bool = true) {
        self.discoverServicesByUUID = discoverServicesByUUID
        self.discoverDescriptors = discoverDescriptors
        self.notifications = notifications
    }

    /// Every procedure the client implements: the default.
    public static var all: GATTClientOptionalProcedures { GATTClientOptionalProcedures() }
}
