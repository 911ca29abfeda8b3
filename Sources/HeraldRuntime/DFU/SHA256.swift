import Herald

/// SHA-256 of byte arrays for the DFU init packet's image hash: the core's FIPS 180-4 implementation
/// (`Herald.SHA256`) behind the array-shaped interface the DFU code uses.
public struct DFUSHA256 {
    private var hasher = SHA256()

    public init() {}

    public mutating func update<C: Collection>(_ bytes: C) where C.Element == UInt8 {
        let array = Array(bytes)
        hasher.update(array.span)
    }

    public mutating func finalize() -> [UInt8] {
        let digest = hasher.finalize()
        return (0..<32).map { digest[$0] }
    }

    public static func hash<C: Collection>(_ bytes: C) -> [UInt8] where C.Element == UInt8 {
        var s = DFUSHA256()
        s.update(bytes)
        return s.finalize()
    }
}
