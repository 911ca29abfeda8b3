/// A set of single-bit flags over an integer. `OptionSet` cannot be used in the core: its
/// array-literal conformance allocates, which the embedded `-no-allocations` gate rejects.
/// Combine flags with `|` instead of an array literal.
public protocol GATTBitFlags: RawRepresentable, Equatable where RawValue: FixedWidthInteger {
    init(rawValue: RawValue)
}

extension GATTBitFlags {
    public func contains(_ other: Self) -> Bool { rawValue & other.rawValue == other.rawValue }
    public static func | (a: Self, b: Self) -> Self { Self(rawValue: a.rawValue | b.rawValue) }
    public static var none: Self { Self(rawValue: 0) }
    public var isEmpty: Bool { rawValue == 0 }
}

/// Attribute permissions (Core 5.4 Vol 3 Part F 3.2.5): access, encryption, authentication and
/// authorization, each for reading and writing. They are not visible over the air; the server
/// enforces them and names the missing one in its Error Response.
public struct GATTPermissions: GATTBitFlags, Sendable, Hashable {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let read = GATTPermissions(rawValue: 0x0001)
    public static let write = GATTPermissions(rawValue: 0x0002)
    /// Reading needs an encrypted link.
    public static let readEncrypted = GATTPermissions(rawValue: 0x0004)
    /// Reading needs an encrypted link with an authenticated (MITM-protected) key.
    public static let readAuthenticated = GATTPermissions(rawValue: 0x0008)
    /// Reading needs the application's authorization of this client.
    public static let readAuthorized = GATTPermissions(rawValue: 0x0010)
    public static let writeEncrypted = GATTPermissions(rawValue: 0x0020)
    public static let writeAuthenticated = GATTPermissions(rawValue: 0x0040)
    public static let writeAuthorized = GATTPermissions(rawValue: 0x0080)

    public static let readWrite = GATTPermissions(rawValue: 0x0003)
}

/// Characteristic properties, the first octet of a characteristic declaration (Part G 3.3.1.1).
public struct GATTCharacteristicProperties: GATTBitFlags, Sendable, Hashable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let broadcast = GATTCharacteristicProperties(rawValue: 0x01)
    public static let read = GATTCharacteristicProperties(rawValue: 0x02)
    public static let writeWithoutResponse = GATTCharacteristicProperties(rawValue: 0x04)
    public static let write = GATTCharacteristicProperties(rawValue: 0x08)
    public static let notify = GATTCharacteristicProperties(rawValue: 0x10)
    public static let indicate = GATTCharacteristicProperties(rawValue: 0x20)
    public static let authenticatedSignedWrites = GATTCharacteristicProperties(rawValue: 0x40)
    public static let extendedProperties = GATTCharacteristicProperties(rawValue: 0x80)
}

/// Client Characteristic Configuration descriptor value (Part G 3.3.3.3).
public struct GATTClientConfiguration: GATTBitFlags, Sendable, Hashable {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public static let notification = GATTClientConfiguration(rawValue: 0x0001)
    public static let indication = GATTClientConfiguration(rawValue: 0x0002)
}

/// The security a link currently has, as the server needs it to enforce permissions. The connection
/// layer updates it on the bearer when encryption changes (Core 5.4 Vol 3 Part C 10.3).
public struct ATTLinkSecurity: Sendable, Equatable {
    public var encrypted = false
    /// The key was produced by an authenticated (MITM-protected) pairing.
    public var authenticated = false
    /// The application authorised this client.
    public var authorized = false
    /// An LTK exists for the peer; decides Insufficient Encryption vs Insufficient Authentication.
    public var bonded = false
    /// Encryption key size in octets (7...16).
    public var keySize: UInt8 = 0
    /// Smallest key size permissions accept when encryption is required.
    public var minimumKeySize: UInt8 = 7
    public init() {}
}

/// Attribute types GATT defines (Core 5.4 Vol 3 Part G 3 and Assigned Numbers).
public enum GATTAttributeType {
    public static let primaryService: UInt16 = 0x2800
    public static let secondaryService: UInt16 = 0x2801
    public static let include: UInt16 = 0x2802
    public static let characteristic: UInt16 = 0x2803
    public static let characteristicExtendedProperties: UInt16 = 0x2900
    public static let characteristicUserDescription: UInt16 = 0x2901
    public static let clientCharacteristicConfiguration: UInt16 = 0x2902
    public static let serverCharacteristicConfiguration: UInt16 = 0x2903
    public static let characteristicPresentationFormat: UInt16 = 0x2904
    public static let characteristicAggregateFormat: UInt16 = 0x2905

    public static let genericAccessService: UInt16 = 0x1800
    public static let genericAttributeService: UInt16 = 0x1801
    public static let deviceName: UInt16 = 0x2A00
    public static let appearance: UInt16 = 0x2A01
    public static let serviceChanged: UInt16 = 0x2A05
    public static let clientSupportedFeatures: UInt16 = 0x2B29
    public static let databaseHash: UInt16 = 0x2B2A
}

/// Why the database builder refused an attribute.
public enum GATTDatabaseError: Error, Sendable, Equatable {
    /// No room for another attribute (the `attributeCapacity` generic).
    case tooManyAttributes
    /// No room for the value bytes (the `valueCapacity` generic).
    case valueStorageFull
    /// A characteristic or descriptor before any service, or a descriptor before a characteristic.
    case noEnclosingDeclaration
    /// A stored value longer than the 512 octets ATT allows (Part F 3.2.9) or than its maximum.
    case valueTooLong
    /// A constant table (`GATTDatabase(table:)`) whose records or values lie outside it or outside
    /// the database's per-link octets, or a table for a database that has attribute capacity.
    case invalidTable
    /// `writeConstantTable`: a writable stored value (or a permission outside the low octet) cannot
    /// be a constant.
    case notConstant
}

/// Where an attribute's value comes from, given to the builder.
public enum GATTValueSource: ~Escapable {
    /// Kept in the database: `initial` bytes, room for up to `maxLength`.
    case stored(Span<UInt8>, maxLength: Int)
    /// Produced and consumed by the application's `GATTServerDelegate` under this identifier.
    case dynamic(id: UInt16)
}

/// The link a GATT server request came on, as the connection table found it. `handle`, the HCI
/// connection handle, is the link's one name above the stack: it is all a `GATTServerDelegate` is
/// given, and what `LEApplication` and `StackControl` use. `slot` is where the database keeps the
/// link's per-link values (CCCDs, Client Supported Features, Part G 3.3.3.3 and 7.2): the table's
/// position for the link, which it fills with whatever entry is free. Only the table that owns that
/// numbering makes this value (`LinkTable.serverLink(handle:)`; `LEStack` in `serveATT`), so the
/// database and the ATT server are asked for a link by its handle, and no caller can name a slot:
/// an unknown handle is `ConnectionTableError.unknownHandle`, never slot 0. A value is good while
/// its link stays in that table (a later link may take the position); make one per use.
public struct GATTServerLink: Equatable, Sendable {
    public let handle: UInt16
    let slot: Int

    init(handle: UInt16, slot: Int) {
        self.handle = handle
        self.slot = slot
    }
}

/// The application side of the GATT server: values it produces itself, writes it consumes, and
/// configuration changes it reacts to. Generic, never existential: the server is specialised for it.
///
/// `offset` is the position in the value the client asked for (Read Blob / Prepare Write). A long
/// value read in several Read Blob requests must stay consistent, so an application whose value
/// changes should snapshot it per `link` when `offset == 0` and serve later offsets from that
/// snapshot.
///
/// `link` is the HCI connection handle of the link the request came on, the number
/// `LEApplication.stackDidConnect` reported for it (`GATTServerLink`).
public protocol GATTServerDelegate {
    /// Writes the value of `id` from `offset` on into `sink` (at most 512 - offset octets are used),
    /// or returns the error to report (e.g. `.invalidOffset` if `offset` is past the end).
    mutating func read<S: ByteSink>(id: UInt16, link: UInt16, offset: Int, into sink: inout S) -> ATTErrorCode?
    /// Stores `value` at `offset` into `id`; `nil` accepts it.
    mutating func write(id: UInt16, link: UInt16, offset: Int, value: Span<UInt8>) -> ATTErrorCode?
    /// A client changed the CCCD of the characteristic whose value is at `valueHandle`.
    mutating func clientConfigurationChanged(valueHandle: UInt16, link: UInt16, configuration: GATTClientConfiguration)
    /// A client wrote a stored (database-held) value.
    mutating func storedValueWritten(handle: UInt16, link: UInt16)
    /// The optional procedures this server offers; `.all` unless the application says otherwise.
    static var serverFeatures: GATTServerFeatures { get }
    /// Each link's prepare-write queue (Core 5.4 Vol 3 Part F 3.4.6.1), sized by what clients write
    /// to this server: the standard 8 writes / 512 octets unless said otherwise. `ATTNoPrepareQueue`
    /// for a server without queued writes (`serverFeatures`): every link then carries 0.6 KB less.
    /// Named here, beside the features that decide whether queued writes exist, so that the ATT
    /// server's bearer is `ATTBearer<Delegate.PrepareQueue>` (`ATTServer.handle`).
    associatedtype PrepareQueue: ATTPrepareQueue = ATTStandardPrepareQueue
}

extension GATTServerDelegate {
    public mutating func read<S: ByteSink>(id: UInt16, link: UInt16, offset: Int, into sink: inout S) -> ATTErrorCode? {
        .readNotPermitted
    }
    public mutating func write(id: UInt16, link: UInt16, offset: Int, value: Span<UInt8>) -> ATTErrorCode? {
        .writeNotPermitted
    }
    public mutating func clientConfigurationChanged(valueHandle: UInt16, link: UInt16, configuration: GATTClientConfiguration) {}
    public mutating func storedValueWritten(handle: UInt16, link: UInt16) {}
    public static var serverFeatures: GATTServerFeatures { .all }
}

/// Optional server procedures an application can leave out (Core 5.4 Vol 3 Part G 4.2, Table 4.2
/// lists each as optional for a server). Why a choice at all: firmware that never needs them should
/// not carry their code, and because the server reads these from the delegate's *type*, a `false`
/// is a constant after specialisation and the procedure's code is not linked (the choice NimBLE's
/// per-procedure `BLE_ATT_SVR_*` settings give C firmware). A client asking for a procedure left out
/// gets Request Not Supported (Part F 3.4.1.1), which clients handle: nothing breaks.
public struct GATTServerFeatures: Sendable, Equatable {
    /// Read Multiple and Read Multiple Variable (Part F 3.4.4.7, 3.4.4.11; Part G 4.8.4, 4.8.5).
    public var readMultiple: Bool
    /// Prepare Write and Execute Write (Part F 3.4.6): Write Long Characteristic Values and Reliable
    /// Writes (Part G 4.9.4, 4.9.5). Without them a client can write at most ATT_MTU - 3 octets.
    public var queuedWrites: Bool
    /// The Database Hash characteristic (Part G 7.3), computed with AES-CMAC, which lets a caching
    /// client check its copy of the database without discovering it again (Part G 2.5.2.1). Must
    /// match the `GATTDatabase`'s `features` (`LEStack` checks at start-up).
    public var databaseHash: Bool
    /// Write Commands (Part F 3.4.5.3), the ATT side of Write Without Response (Part G 4.9.1): a
    /// server whose characteristics never list that property leaves them out, and every command is
    /// dropped unanswered (as one to an attribute that does not take commands always is); CCCDs are
    /// written with Write Requests (Part G 4.12.3). Leave it out only then: a client told a value
    /// takes Write Without Response would lose its writes.
    public var writeCommands: Bool

    public init(readMultiple: Bool = true, queuedWrites: Bool = true, databaseHash: Bool = true, writeCommands: Bool = true) {
        self.readMultiple = readMultiple
        self.queuedWrites = queuedWrites
        self.databaseHash = databaseHash
        self.writeCommands = writeCommands
    }

    /// Every procedure this server implements: the default.
    public static var all: GATTServerFeatures { GATTServerFeatures() }
    /// Only the procedures a server must have: discovery, reads, short writes with a response,
    /// notifications and indications.
    public static var mandatory: GATTServerFeatures {
        GATTServerFeatures(readMultiple: false, queuedWrites: false, databaseHash: false, writeCommands: false)
    }
}

/// A delegate for databases that only hold stored values.
public struct GATTNoDelegate: GATTServerDelegate {
    public init() {}
}
