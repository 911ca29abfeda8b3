/// What the ATT server (Core 5.4 Vol 3 Part F 3.4) needs of a GATT server's attributes (Part G 3,
/// Part F 3.2), and nothing more: `ATTServer` is generic over this one type instead of a database's
/// sizes. `GATTDatabase<A, V, L>` is the conformer; always used generically, never as an existential.
///
/// Invariants a conformer keeps: attribute indices `0..<count` hold handles in ascending order, none
/// 0x0000 (Part F 3.2.2), and `firstIndex(atOrAfter:)` is where a walk over a handle range starts;
/// index-taking members are called only with `0..<count` and may read unchecked. Values are read and
/// written only after `checkAccess` passed (Part F 3.2.5); values it does not hold come from the
/// delegate. It keeps per-link CCCDs (Part G 3.3.3.3) and Client Supported Features (Part G 7.2) for
/// each link the connection table names (`GATTServerLink`), and enforces their write rules inside
/// `writeValue`.
///
/// Lookups are `mutating` although they only read, and so are `GATTDatabase`'s: the server holds the
/// database `inout`, and a non-mutating requirement, once specialised, made it copy the attribute
/// table (1,152 octets for 24 attributes) before each lookup (the host's ATT read: 189 to 216 ns).
public protocol GATTAttributeDatabase {
    /// Attributes held.
    var count: Int { get }
    /// The handle of attribute `index` (0 <= index < count).
    mutating func handle(at index: Int) -> UInt16
    /// The index of the first attribute whose handle is `handle` or above (`count` if none).
    mutating func firstIndex(atOrAfter handle: UInt16) -> Int
    /// The type of attribute `index` (0 <= index < count). Not public: reads unchecked.
    @_spi(UncheckedGATTIndex) mutating func type(at index: Int) -> BluetoothUUID
    /// Whether attribute `index` (0 <= index < count) has the 16-bit type `uuid16`, without decoding
    /// the whole attribute. Not public: reads unchecked.
    @_spi(UncheckedGATTIndex) mutating func hasType(_ uuid16: UInt16, at index: Int) -> Bool
    /// Last handle of the group that starts at the service declaration `handle` (Part G 3.1).
    mutating func groupEnd(ofService handle: UInt16) -> UInt16

    /// The error a request must get when `security` does not satisfy `handle`'s permissions
    /// (Invalid Handle when there is no such attribute), nil when access is allowed.
    mutating func checkAccess(_ handle: UInt16, write: Bool, security: ATTLinkSecurity) -> ATTErrorCode?
    /// Whether a Write Command may change `handle` (Part G 4.9.1, 3.3.1.1).
    mutating func acceptsWriteCommand(_ handle: UInt16) -> Bool
    /// Whether `handle`'s value cannot change length: "fixed length" for Attribute Not Long (Part F 3.4.4.5).
    mutating func hasFixedLength(_ handle: UInt16) -> Bool
    /// Length of a value the database holds, `link`'s own for a per-link value (nil when the
    /// delegate produces it).
    mutating func valueLength(_ handle: UInt16, link: GATTServerLink) -> Int?
    /// Most octets `handle`'s value can hold when the database stores it for writes (nil otherwise):
    /// what Execute Write checks a queue against before writing any of it (Part F 3.4.6.3).
    mutating func storedCapacity(_ handle: UInt16) -> Int?
    /// Writes the value of `handle` from `offset` on into `sink` (Invalid Offset past its end).
    mutating func readValue<D: GATTServerDelegate, S: ByteSink>(
        _ handle: UInt16, link: GATTServerLink, offset: Int, delegate: inout D, into sink: inout S) -> ATTErrorCode?
    /// Writes `value` at `offset` into `handle` for `link`: stored values, CCCDs and Client
    /// Supported Features here, the rest through `delegate`.
    mutating func writeValue<D: GATTServerDelegate>(
        _ handle: UInt16, link: GATTServerLink, offset: Int, value: Span<UInt8>, delegate: inout D) -> ATTErrorCode?
    /// How `link` configured the CCCD of the characteristic whose value is at `valueHandle`.
    func clientConfiguration(valueHandle: UInt16, link: GATTServerLink) -> GATTClientConfiguration
}

extension GATTDatabaseOf: GATTAttributeDatabase {
    @_spi(UncheckedGATTIndex)
    @inline(__always)
    public mutating func type(at index: Int) -> BluetoothUUID { entry(index).type }

    @_spi(UncheckedGATTIndex)
    @inline(__always)
    public mutating func hasType(_ uuid16: UInt16, at index: Int) -> Bool { entryIsType(index, uuid16) }

    /// Values whose length cannot change: declarations, per-link descriptors, the hash, and stored
    /// values created full.
    public mutating func hasFixedLength(_ handle: UInt16) -> Bool {
        guard let a = attribute(handle) else { return false }
        switch a.storage {
        case .constant, .perLink, .databaseHash: return true
        case .stored(_, let length, let capacity): return length == capacity
        case .dynamic: return false
        }
    }

    @inline(__always)
    public mutating func storedCapacity(_ handle: UInt16) -> Int? {
        guard case .stored(_, _, let capacity)? = attribute(handle)?.storage else { return nil }
        return capacity
    }
}
