import Foundation

/// Intel HEX (record types 00–05) to a flat image: the bytes from the lowest to the highest address
/// written, gaps filled with 0xFF (erased flash), as nrfutil's IntelHex `tobinarray()` does.
public struct IntelHexImage: Equatable, Sendable {
    public var startAddress: UInt32
    public var bytes: [UInt8]

    public enum Failure: Error, Equatable, CustomStringConvertible, Sendable {
        case badRecord(line: Int, why: String)
        case checksum(line: Int)
        case overlap(address: UInt32)
        case empty
        case noEndRecord

        public var description: String {
            switch self {
            case let .badRecord(line, why): "Intel HEX line \(line): \(why)"
            case let .checksum(line): "Intel HEX line \(line): checksum mismatch"
            case let .overlap(address): String(format: "Intel HEX writes address 0x%08X twice with different values", address)
            case .empty: "Intel HEX holds no data"
            case .noEndRecord: "Intel HEX has no end-of-file record (truncated?)"
            }
        }
    }

    public init(startAddress: UInt32, bytes: [UInt8]) {
        self.startAddress = startAddress
        self.bytes = bytes
    }

    public init(text: String) throws(Failure) {
        var chunks: [(address: UInt32, data: [UInt8])] = []
        var upper: UInt32 = 0 // from type 04 (<<16) or type 02 (<<4)
        var sawEnd = false
        var lineNumber = 0
        for rawLine in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r" }) {
            lineNumber += 1
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty { continue }
            if sawEnd { throw .badRecord(line: lineNumber, why: "data after the end-of-file record") }
            guard line.first == ":" else { throw .badRecord(line: lineNumber, why: "does not start with ':'") }
            let hex = Array(line.utf8.dropFirst())
            guard hex.count >= 10, hex.count % 2 == 0 else { throw .badRecord(line: lineNumber, why: "odd or short length") }
            var record: [UInt8] = []
            record.reserveCapacity(hex.count / 2)
            var i = 0
            while i < hex.count {
                guard let hi = Self.nibble(hex[i]), let lo = Self.nibble(hex[i + 1]) else {
                    throw .badRecord(line: lineNumber, why: "non-hex character")
                }
                record.append(hi << 4 | lo)
                i += 2
            }
            let count = Int(record[0])
            guard record.count == count + 5 else { throw .badRecord(line: lineNumber, why: "length byte says \(count), record has \(record.count - 5)") }
            guard record.reduce(UInt8(0), &+) == 0 else { throw .checksum(line: lineNumber) }
            let offset = UInt32(record[1]) << 8 | UInt32(record[2])
            let payload = Array(record[4..<(4 + count)])
            switch record[3] {
            case 0x00:
                if !payload.isEmpty { chunks.append((upper &+ offset, payload)) }
            case 0x01:
                sawEnd = true
            case 0x02:
                guard count == 2 else { throw .badRecord(line: lineNumber, why: "extended segment address needs 2 bytes") }
                upper = (UInt32(payload[0]) << 8 | UInt32(payload[1])) << 4
            case 0x04:
                guard count == 2 else { throw .badRecord(line: lineNumber, why: "extended linear address needs 2 bytes") }
                upper = (UInt32(payload[0]) << 8 | UInt32(payload[1])) << 16
            case 0x03, 0x05:
                break // start address: meaningless for a flash image
            default:
                throw .badRecord(line: lineNumber, why: "unknown record type \(record[3])")
            }
        }
        guard sawEnd else { throw .noEndRecord }
        guard !chunks.isEmpty else { throw .empty }
        chunks.sort { $0.address < $1.address }
        let low = chunks[0].address
        let high = chunks.map { UInt64($0.address) + UInt64($0.data.count) }.max()!
        guard high - UInt64(low) <= 16 * 1024 * 1024 else {
            throw .badRecord(line: 0, why: "image spans more than 16 MB (addresses 0x\(String(low, radix: 16)) to 0x\(String(high, radix: 16)))")
        }
        var image = [UInt8](repeating: 0xFF, count: Int(high - UInt64(low)))
        var written = [Bool](repeating: false, count: image.count)
        for chunk in chunks {
            for (k, byte) in chunk.data.enumerated() {
                let at = Int(chunk.address - low) + k
                if written[at] && image[at] != byte { throw .overlap(address: low + UInt32(at)) }
                image[at] = byte
                written[at] = true
            }
        }
        startAddress = low
        bytes = image
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
