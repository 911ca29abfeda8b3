// A GATT database as a constant table (in flash on firmware): what `GATTDatabase` serves from when
// its `attributeCapacity` is 0. Learned from BTstack's att_db (one constant byte array the server
// answers from in place) and NimBLE's constant service definitions: a device whose services never
// change need not build them in RAM at start-up. Only the per-link values (CCCDs, Client Supported
// Features) stay in RAM, in the database's `values`.
//
// Layout, little-endian (handle h is record h - 1, so a lookup is one multiplication, no walk):
//
//     count: u16
//     count records of 11 octets:
//       0    kind (0 constant, 1 dynamic, 2 per-link, 3 Database Hash) | 0x80 when the type is 128-bit
//       1    characteristic properties (characteristic values; 0 otherwise)
//       2    permissions (`GATTPermissions`, every defined bit is in the low octet)
//       3-4  type: the 16-bit UUID, or the pool offset of its 16 octets
//       5-6  constant: value offset in the pool; dynamic: the delegate id; per-link: RAM offset
//       7-8  constant: value length; per-link: width per link
//       9-10 CCCD handle (characteristic values that notify or indicate; 0 otherwise)
//     sparse tables only: count handles (u16), ascending, the handle of each record
//     pool: constant values and 128-bit UUIDs; offsets count from the table's first octet, and
//       equal octet strings are stored once (a characteristic's UUID is in its declaration's value
//       and is its value's type).
//
// A sparse table (the first record's kind has 0x40) serves handles with gaps, up to 0xFFFF, as a
// database laid out by someone else must (Core 5.4 Vol 3 Part F 3.2.2: handles need only increase;
// the SIG's GATT test databases put services at 0xFFFD and 0xFFFF). Its records stay 11 octets and
// the handle column follows them, so a dense table (the builder's, the firmware's) is unchanged and
// its lookups stay one multiplication; a sparse one is searched by bisection.
//
// `GATTDatabase.writeConstantTable(to:)` produces the table from a database the builder made, so a
// table is always what the builder would build (the firmware images check theirs in a test).

enum GATTConstantTable {
    static let recordSize = 11
    static let headerSize = 2
    /// In the first record's kind: the table has a handle column (see above).
    static let sparseFlag: UInt8 = 0x40

    static func isSparse(_ t: UnsafeBufferPointer<UInt8>) -> Bool {
        t.count > headerSize && u16(t, 0) > 0 && t[headerSize] & sparseFlag != 0
    }

    /// The handle of record `i` of a sparse table of `count` records.
    @inline(__always)
    static func handle(_ t: UnsafeBufferPointer<UInt8>, _ count: Int, _ i: Int) -> UInt16 {
        UInt16(truncatingIfNeeded: u16(t, headerSize &+ count &* recordSize &+ 2 &* i))
    }

    // A sparse table's lookups, out of line: inlined at each of the database's lookups they cost
    // the images 1.4-1.5 KB of flash, out of line 0.4-0.5 KB, where no image serves a sparse table.
    /// The handle of record `i` of a sparse table (`GATTDatabase.entryHandle`).
    @inline(never)
    static func sparseHandle(_ t: UnsafeBufferPointer<UInt8>, _ count: Int, _ i: Int) -> UInt16 { handle(t, count, i) }

    /// The record of a sparse table whose handle is `handle` (`GATTDatabase.index(of:)`).
    @inline(never)
    static func index(_ t: UnsafeBufferPointer<UInt8>, _ count: Int, of handle: UInt16) -> Int? {
        let i = firstIndex(t, count, atOrAfter: handle)
        guard handle != 0, i < count, Self.handle(t, count, i) == handle else { return nil }
        return i
    }

    /// The first record of a sparse table whose handle is `handle` or above (`count` if none). Out of
    /// line: the witness of sparse tables in an image's symbols (Firmware/features.py).
    @inline(never)
    static func firstIndex(_ t: UnsafeBufferPointer<UInt8>, _ count: Int, atOrAfter handle: UInt16) -> Int {
        var lo = 0, hi = count
        while lo < hi {
            let mid = (lo &+ hi) >> 1
            if Self.handle(t, count, mid) < handle { lo = mid &+ 1 } else { hi = mid }
        }
        return lo
    }

    static func u16(_ t: UnsafeBufferPointer<UInt8>, _ i: Int) -> Int { Int(t[i]) | Int(t[i &+ 1]) << 8 }

    /// The type of the record at octet `r`. (Declared `@_effects(readonly)`, so that lookups that
    /// do not use the type drop the call, the images were 80 / 430 B smaller, but the beacon's ATT
    /// path then merged into `HCIHost.handlePacket`'s frame: +580 B of main-loop stack.)
    @inline(never)
    static func type(_ t: UnsafeBufferPointer<UInt8>, _ r: Int) -> BluetoothUUID {
        let typeField = u16(t, r &+ 3)
        guard t[r] & 0x80 != 0 else { return BluetoothUUID(uuid16: UInt16(truncatingIfNeeded: typeField)) }
        var b = InlineArray<16, UInt8>(repeating: 0)
        for k in 0..<16 { b[k] = t[typeField &+ k] }
        return BluetoothUUID(littleEndian: b)
    }

    /// Whether record `i` has the 16-bit type `uuid16` (a 128-bit type never does: the table holds
    /// every type that has a 16-bit form in it).
    @inline(__always)
    static func isType(_ t: UnsafeBufferPointer<UInt8>, _ i: Int, _ uuid16: UInt16) -> Bool {
        let r = headerSize &+ i &* recordSize
        return t[r] & 0x80 == 0 && u16(t, r &+ 3) == Int(uuid16)
    }

    @inline(__always)
    static func cccdHandle(_ t: UnsafeBufferPointer<UInt8>, _ i: Int) -> UInt16 {
        UInt16(truncatingIfNeeded: u16(t, headerSize &+ i &* recordSize &+ 9))
    }

    /// The attribute of record `i` (0 <= i < count; `GATTDatabase.init(table:)` checked the table).
    /// Inlined, so each lookup reads only the fields it uses; the type, which takes a loop, is
    /// decoded out of line.
    @inline(__always)
    static func attribute(_ t: UnsafeBufferPointer<UInt8>, _ i: Int) -> GATTAttribute {
        let r = headerSize &+ i &* recordSize
        let flags = t[r]
        let type = Self.type(t, r)
        let a = u16(t, r &+ 5), b = u16(t, r &+ 7)
        let storage: GATTAttribute.Storage
        switch flags & 0x03 {
        case 0: storage = .constant(offset: a, length: b)
        case 1: storage = .dynamic(id: UInt16(truncatingIfNeeded: a))
        case 2: storage = .perLink(offset: a, width: b)
        default: storage = .databaseHash
        }
        var attribute = GATTAttribute(type: type, permissions: GATTPermissions(rawValue: UInt16(t[r &+ 2])), storage: storage)
        attribute.properties = GATTCharacteristicProperties(rawValue: t[r &+ 1])
        attribute.cccdHandle = UInt16(truncatingIfNeeded: u16(t, r &+ 9))
        return attribute
    }
}

extension GATTDatabaseOf {
    /// Whether this database type serves from a constant table (`attributeCapacity == 0`): a
    /// constant after specialisation, so each image links only the path it uses.
    @inline(__always)
    static var usesTable: Bool { attributeCapacity == 0 }

    /// A database that serves the attributes of `table` (the layout in GATTConstantTable.swift) in
    /// place, keeping only per-link values in RAM: `GATTDatabase<0, V, L>`, where `V` is at least
    /// the per-link octets the table's records reserve. The table must stay valid as long as the
    /// database (a `const` array in flash does). It is checked here once, so that requests can read
    /// it without bounds checks: a record or pool range outside it, or a per-link value outside
    /// `V`, is `invalidTable`.
    public init(table: UnsafeBufferPointer<UInt8>) throws(GATTDatabaseError) {
        guard attributeCapacity == 0, table.count >= GATTConstantTable.headerSize else { throw .invalidTable }
        attributes = InlineArray(repeating: GATTAttribute(type: BluetoothUUID(uuid16: 0), permissions: GATTPermissions(rawValue: 0), storage: .dynamic(id: 0)))
        values = InlineArray(repeating: 0)
        // Checked on the raw records, not through `entry`: the decoder is for requests.
        let n = GATTConstantTable.u16(table, 0)
        let isSparse = GATTConstantTable.isSparse(table)
        // A database whose type says its handles are consecutive cannot serve one with gaps.
        guard Handles.allowsGaps || !isSparse else { throw .invalidTable }
        let column = isSparse ? 2 * n : 0
        guard GATTConstantTable.headerSize + n * GATTConstantTable.recordSize + column <= table.count else { throw .invalidTable }
        // Handles of a sparse table ascend from 0x0001 (Part F 3.2.2); no other record may carry the flag.
        var previous = 0
        for i in 0..<n where isSparse {
            let h = Int(GATTConstantTable.handle(table, n, i))
            guard h > previous else { throw .invalidTable }
            previous = h
        }
        for i in 0..<n {
            let r = GATTConstantTable.headerSize + i * GATTConstantTable.recordSize
            let type = GATTConstantTable.u16(table, r + 3)
            let a = GATTConstantTable.u16(table, r + 5), b = GATTConstantTable.u16(table, r + 7)
            guard i == 0 || table[r] & GATTConstantTable.sparseFlag == 0 else { throw .invalidTable }
            let handle = isSparse ? GATTConstantTable.handle(table, n, i) : UInt16(truncatingIfNeeded: i + 1)
            if table[r] & 0x80 != 0 {
                guard type + 16 <= table.count else { throw .invalidTable }
            } else if type == Int(GATTAttributeType.clientSupportedFeatures) {
                clientSupportedFeaturesHandle = handle
            } else if type == Int(GATTAttributeType.databaseHash) {
                databaseHashHandle = handle
            }
            switch table[r] & 0x03 {
            case 0: guard a + b <= table.count else { throw .invalidTable }
            case 2: guard a + b * linkCapacity <= valueCapacity else { throw .invalidTable }
            default: break
            }
        }
        self.table = table
        count = n
        sparse = isSparse
    }

    /// Writes this database as a constant table (layout in GATTConstantTable.swift) for
    /// `GATTDatabase<0, V, L>(table:)`, which then serves the same handles, types, permissions,
    /// properties and values. Stored values become constants as they are now; a writable one
    /// cannot (its value must be able to change) and is `notConstant`: serve it from the delegate.
    /// Per-link values are numbered afresh from RAM offset 0; `perLinkOctets` is the `V` they need.
    public func writeConstantTable<S: ByteSink>(to sink: inout S) throws(GATTDatabaseError) -> (octets: Int, perLinkOctets: Int) {
        var records = FixedBytes<2048>()
        var pool = FixedBytes<2048>()
        let base = GATTConstantTable.headerSize + count * GATTConstantTable.recordSize
        var perLink = 0
        for i in 0..<count {
            let a = entry(i)
            guard a.permissions.rawValue <= 0xFF else { throw .notConstant }
            var kind: UInt8 = 0
            var fieldA = 0, fieldB = 0
            switch a.storage {
            case .constant(let o, let n), .stored(let o, let n, _):
                if case .stored = a.storage, a.permissions.contains(.write) { throw .notConstant }
                fieldA = base + Self.pooled(values.span.extracting(o..<(o + n)), in: &pool)
                fieldB = n
            case .dynamic(let id): kind = 1; fieldA = Int(id)
            case .perLink(_, let w): kind = 2; fieldA = perLink; fieldB = w; perLink += w * linkCapacity
            case .databaseHash: kind = 3
            }
            var typeField = 0
            if let t = a.type.uuid16 {
                typeField = Int(t)
            } else {
                kind |= 0x80
                var b = FixedBytes<16>()
                a.type.write(to: &b, size: 16)
                typeField = base + Self.pooled(b.span, in: &pool)
            }
            records.append(kind)
            records.append(a.properties.rawValue)
            records.append(UInt8(truncatingIfNeeded: a.permissions.rawValue))
            records.append(u16: UInt16(truncatingIfNeeded: typeField))
            records.append(u16: UInt16(truncatingIfNeeded: fieldA))
            records.append(u16: UInt16(truncatingIfNeeded: fieldB))
            records.append(u16: a.cccdHandle)
        }
        guard !records.overflowed, !pool.overflowed, base + pool.count <= 0xFFFF else { throw .valueStorageFull }
        sink.append(u16: UInt16(truncatingIfNeeded: count))
        sink.append(contentsOf: records.span)
        sink.append(contentsOf: pool.span)
        return (base + pool.count, perLink)
    }

    /// The offset of `bytes` in `pool`, appending them unless the pool already holds them.
    static func pooled<let N: Int>(_ bytes: Span<UInt8>, in pool: inout FixedBytes<N>) -> Int {
        if bytes.count > 0 && bytes.count <= pool.count {
            for start in 0...(pool.count - bytes.count) {
                var same = true
                for k in bytes.indices where pool[start + k] != bytes[k] { same = false; break }
                if same { return start }
            }
        }
        let start = pool.count
        pool.append(contentsOf: bytes)
        return start
    }
}
