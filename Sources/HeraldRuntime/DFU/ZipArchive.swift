import CZlib

/// A minimal reader for the ZIP files `nrfutil pkg generate` writes (PKWARE APPNOTE 6.3): finds the
/// end-of-central-directory record, walks the central directory, and extracts stored (method 0) or
/// deflated (method 8, raw inflate through zlib) entries, checking each entry's CRC-32.
/// No ZIP64, encryption, or multi-disk archives — nrfutil never produces them for DFU packages.
public struct ZipArchive: Sendable {
    public struct Entry: Sendable, Equatable {
        public var name: String
        public var method: UInt16
        public var flags: UInt16
        public var crc32: UInt32
        public var compressedSize: Int
        public var uncompressedSize: Int
        public var localHeaderOffset: Int
    }

    public enum Failure: Error, Equatable, CustomStringConvertible, Sendable {
        case notAZip
        case truncated(String)
        case unsupported(String)
        case missing(String)
        case corrupt(String)

        public var description: String {
            switch self {
            case .notAZip: "not a ZIP file (no end-of-central-directory record)"
            case .truncated(let what): "ZIP truncated: \(what)"
            case .unsupported(let what): "unsupported ZIP feature: \(what)"
            case .missing(let name): "no entry named \(name) in the ZIP"
            case .corrupt(let what): "corrupt ZIP: \(what)"
            }
        }
    }

    public let bytes: [UInt8]
    public let entries: [Entry]
    /// The most an entry may unpack to. A DFU image fits the chip's flash (1 MB on the nRF52840), so
    /// a larger declared size is damage, not an image; it is refused before anything is allocated
    /// (a 667-byte package declaring 32 MB took 14 s to reject under the fuzzer, one declaring 4 GB
    /// would have asked for 4 GB).
    public static let maximumEntrySize = 16 * 1024 * 1024
    /// DEFLATE cannot expand by more than 1032:1 (a 258-octet match costs at least 2 bits, RFC 1951
    /// 3.2.5), so a declared size beyond that of the stored bytes is a lie.
    static let maximumDeflateRatio = 1032

    public init(bytes: [UInt8]) throws(Failure) {
        self.bytes = bytes
        self.entries = try Self.readCentralDirectory(bytes)
    }

    public func entry(named name: String) -> Entry? { entries.first { $0.name == name } }

    /// The uncompressed contents of `name`, CRC-checked.
    public func read(_ name: String) throws(Failure) -> [UInt8] {
        guard let entry = entry(named: name) else { throw .missing(name) }
        return try read(entry)
    }

    public func read(_ entry: Entry) throws(Failure) -> [UInt8] {
        if entry.flags & 0x0001 != 0 { throw .unsupported("encrypted entry \(entry.name)") }
        let lh = entry.localHeaderOffset
        guard let sig = u32(bytes, lh), sig == 0x0403_4b50 else { throw .corrupt("local header of \(entry.name) not found") }
        guard let nameLen = u16(bytes, lh + 26), let extraLen = u16(bytes, lh + 28) else { throw .truncated("local header of \(entry.name)") }
        let start = lh + 30 + Int(nameLen) + Int(extraLen)
        guard start + entry.compressedSize <= bytes.count else { throw .truncated("data of \(entry.name)") }
        let raw = bytes[start..<(start + entry.compressedSize)]
        guard entry.uncompressedSize <= Self.maximumEntrySize else {
            throw .corrupt("\(entry.name) declares \(entry.uncompressedSize) bytes, more than a DFU image can be (16 MB)")
        }
        let data: [UInt8]
        switch entry.method {
        case 0:
            data = Array(raw)
        case 8:
            guard entry.uncompressedSize <= max(entry.compressedSize, 1) * Self.maximumDeflateRatio else {
                throw .corrupt("\(entry.name) declares \(entry.uncompressedSize) bytes, more than its \(entry.compressedSize) compressed bytes can hold")
            }
            data = try Self.inflate(Array(raw), expected: entry.uncompressedSize, name: entry.name)
        default:
            throw .unsupported("compression method \(entry.method) for \(entry.name)")
        }
        guard data.count == entry.uncompressedSize else {
            throw .corrupt("\(entry.name) is \(data.count) bytes, directory says \(entry.uncompressedSize)")
        }
        guard DFUCRC32.checksum(data) == entry.crc32 else { throw .corrupt("CRC-32 mismatch in \(entry.name)") }
        return data
    }

    private static func readCentralDirectory(_ b: [UInt8]) throws(Failure) -> [Entry] {
        // The EOCD is 22 bytes plus a comment of up to 65535 bytes, at the very end.
        guard b.count >= 22 else { throw .notAZip }
        var eocd = -1
        var i = b.count - 22
        let lowest = max(0, b.count - 22 - 0xFFFF)
        while i >= lowest {
            if b[i] == 0x50, b[i + 1] == 0x4b, b[i + 2] == 0x05, b[i + 3] == 0x06 { eocd = i; break }
            i -= 1
        }
        guard eocd >= 0 else { throw .notAZip }
        guard let count = u16(b, eocd + 10), let cdSize = u32(b, eocd + 12), let cdOffset = u32(b, eocd + 16) else {
            throw .truncated("end-of-central-directory record")
        }
        if count == 0xFFFF || cdSize == 0xFFFF_FFFF || cdOffset == 0xFFFF_FFFF { throw .unsupported("ZIP64") }
        guard Int(cdOffset) + Int(cdSize) <= eocd else { throw .corrupt("central directory outside the file") }
        var entries: [Entry] = []
        var p = Int(cdOffset)
        for _ in 0..<Int(count) {
            guard let sig = u32(b, p), sig == 0x0201_4b50 else { throw .corrupt("central directory entry \(entries.count) has a bad signature") }
            guard p + 46 <= b.count,
                  let flags = u16(b, p + 8), let method = u16(b, p + 10), let crc = u32(b, p + 16),
                  let csize = u32(b, p + 20), let usize = u32(b, p + 24),
                  let nameLen = u16(b, p + 28), let extraLen = u16(b, p + 30), let commentLen = u16(b, p + 32),
                  let offset = u32(b, p + 42)
            else { throw .truncated("central directory entry \(entries.count)") }
            let nameEnd = p + 46 + Int(nameLen)
            guard nameEnd <= b.count else { throw .truncated("central directory name") }
            let name = String(decoding: b[(p + 46)..<nameEnd], as: UTF8.self)
            if csize == 0xFFFF_FFFF || usize == 0xFFFF_FFFF || offset == 0xFFFF_FFFF { throw .unsupported("ZIP64 entry \(name)") }
            entries.append(Entry(name: name, method: method, flags: flags, crc32: crc,
                                 compressedSize: Int(csize), uncompressedSize: Int(usize), localHeaderOffset: Int(offset)))
            p = nameEnd + Int(extraLen) + Int(commentLen)
        }
        return entries
    }

    /// Raw DEFLATE (RFC 1951, no zlib header: window bits -15) into a buffer of the expected size.
    static func inflate(_ input: [UInt8], expected: Int, name: String) throws(Failure) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: max(expected, 1))
        var stream = z_stream()
        var status = inflateInit2_(&stream, -15, zlibVersion(), Int32(MemoryLayout<z_stream>.size))
        guard status == Z_OK else { throw .corrupt("zlib init failed (\(status))") }
        defer { inflateEnd(&stream) }
        var input = input
        let produced: Int = input.withUnsafeMutableBufferPointer { inBuf in
            output.withUnsafeMutableBufferPointer { outBuf in
                stream.next_in = inBuf.baseAddress
                stream.avail_in = uInt(inBuf.count)
                stream.next_out = outBuf.baseAddress
                stream.avail_out = uInt(outBuf.count)
                status = CZlib.inflate(&stream, Z_FINISH)
                return outBuf.count - Int(stream.avail_out)
            }
        }
        guard status == Z_STREAM_END else { throw .corrupt("deflate stream of \(name) is damaged or longer than declared (zlib \(status))") }
        return Array(output[0..<produced])
    }
}

private func u16(_ b: [UInt8], _ at: Int) -> UInt16? { DFUBytes.readU16(b, at) }
private func u32(_ b: [UInt8], _ at: Int) -> UInt32? { DFUBytes.readU32(b, at) }
