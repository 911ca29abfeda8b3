import Foundation

/// One btsnoop record.
public struct BTSnoopRecord: Equatable, Sendable {
    public var originalLength: UInt32
    public var flags: UInt32
    public var cumulativeDrops: UInt32
    /// Microseconds since 0 AD (see `BTSnoop.epochOffset`).
    public var timestamp: Int64
    /// The included bytes: for datalink 1002 a full H4 packet, indicator first.
    public var packet: [UInt8]

    public var direction: BTSnoopDirection { flags & BTSnoop.flagReceived != 0 ? .received : .sent }
    public var isCommandOrEvent: Bool { flags & BTSnoop.flagCommandOrEvent != 0 }
    public var date: Date { BTSnoop.date(timestamp: timestamp) }
    /// Whether the writer cut the packet short (included length < original length).
    public var isTruncated: Bool { UInt32(packet.count) < originalLength }
}

public enum BTSnoopError: Error, Equatable, CustomStringConvertible {
    case tooShortForHeader(size: Int)
    case badMagic
    case unsupportedVersion(UInt32)
    case unsupportedDatalink(UInt32)
    /// A record header or its packet runs past the end of the file.
    case truncatedRecord(index: Int, offset: Int)
    /// Included length larger than the original length.
    case inconsistentLengths(index: Int, offset: Int)
    case unreadable(String, reason: String)

    public var description: String {
        switch self {
        case .tooShortForHeader(let size): return "btsnoop: file is \(size) bytes, shorter than the 16-byte header"
        case .badMagic: return "btsnoop: not a btsnoop file (bad magic)"
        case .unsupportedVersion(let v): return "btsnoop: unsupported version \(v) (expected 1)"
        case .unsupportedDatalink(let d): return "btsnoop: unsupported datalink \(d) (expected 1002, H4)"
        case .truncatedRecord(let i, let o): return "btsnoop: record \(i) at offset \(o) is truncated"
        case .inconsistentLengths(let i, let o): return "btsnoop: record \(i) at offset \(o) includes more bytes than its original length"
        case .unreadable(let path, let reason): return "btsnoop: cannot read \(path): \(reason)"
        }
    }
}

/// Parses a btsnoop v1 file (datalink 1002, H4) into records.
public struct BTSnoopReader: Sendable {
    public let datalink: UInt32
    public let records: [BTSnoopRecord]
    /// Set when the file ends in a partial record (a writer killed mid-record); `records` holds
    /// everything before it. `strict` parsing throws instead.
    public let trailingPartialRecord: Bool

    public init(path: String, strict: Bool = false) throws(BTSnoopError) {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw .unreadable(path, reason: CommandMessage.reason(error))
        }
        try self.init(bytes: [UInt8](data), strict: strict)
    }

    public init(bytes: [UInt8], strict: Bool = true) throws(BTSnoopError) {
        guard bytes.count >= BTSnoop.fileHeaderSize else { throw .tooShortForHeader(size: bytes.count) }
        guard Array(bytes[0..<8]) == BTSnoop.magic else { throw .badMagic }
        let version = Self.u32(bytes, 8)
        guard version == BTSnoop.version else { throw .unsupportedVersion(version) }
        let datalink = Self.u32(bytes, 12)
        guard datalink == BTSnoop.datalinkH4 else { throw .unsupportedDatalink(datalink) }

        var records: [BTSnoopRecord] = []
        var offset = BTSnoop.fileHeaderSize
        var partial = false
        while offset < bytes.count {
            let index = records.count
            guard bytes.count - offset >= BTSnoop.recordHeaderSize else {
                if strict { throw .truncatedRecord(index: index, offset: offset) }
                partial = true
                break
            }
            let original = Self.u32(bytes, offset)
            let included = Self.u32(bytes, offset + 4)
            guard included <= original else { throw .inconsistentLengths(index: index, offset: offset) }
            let start = offset + BTSnoop.recordHeaderSize
            guard UInt64(included) <= UInt64(bytes.count - start) else {
                if strict { throw .truncatedRecord(index: index, offset: offset) }
                partial = true
                break
            }
            let end = start + Int(included)
            records.append(BTSnoopRecord(
                originalLength: original,
                flags: Self.u32(bytes, offset + 8),
                cumulativeDrops: Self.u32(bytes, offset + 12),
                timestamp: Int64(bitPattern: UInt64(Self.u32(bytes, offset + 16)) << 32 | UInt64(Self.u32(bytes, offset + 20))),
                packet: Array(bytes[start..<end])
            ))
            offset = end
        }
        self.datalink = datalink
        self.records = records
        self.trailingPartialRecord = partial
    }

    private static func u32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
        UInt32(bytes[at]) << 24 | UInt32(bytes[at + 1]) << 16 | UInt32(bytes[at + 2]) << 8 | UInt32(bytes[at + 3])
    }
}
