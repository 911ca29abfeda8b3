import CZlib

/// CRC-32 as zlib (and so Nordic's bootloader, `crc32_compute`) computes it: reflected polynomial
/// 0xEDB88320, initial value and final XOR 0xFFFFFFFF. Chainable: pass the previous result as `crc`.
public enum DFUCRC32 {
    public static func checksum<C: Collection>(_ bytes: C, crc: UInt32 = 0) -> UInt32 where C.Element == UInt8 {
        if let fast = bytes.withContiguousStorageIfAvailable({ buf in
            UInt32(truncatingIfNeeded: crc32(uLong(crc), buf.baseAddress, uInt(buf.count)))
        }) {
            return fast
        }
        let copy = Array(bytes)
        return copy.withUnsafeBufferPointer { buf in
            UInt32(truncatingIfNeeded: crc32(uLong(crc), buf.baseAddress, uInt(buf.count)))
        }
    }
}
