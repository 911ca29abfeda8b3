import Foundation
import BluetoothHost
@testable import Herald

/// A growable sink for tests (the core itself only uses fixed buffers).
struct ArraySink: ByteSink {
    var bytes: [UInt8] = []
    mutating func append(_ byte: UInt8) { bytes.append(byte) }
}

func hex(_ s: String) -> [UInt8] {
    let clean = s.filter { !$0.isWhitespace }
    precondition(clean.count % 2 == 0, "odd hex")
    var out: [UInt8] = []
    var i = clean.startIndex
    while i < clean.endIndex {
        let j = clean.index(i, offsetBy: 2)
        out.append(UInt8(clean[i..<j], radix: 16)!)
        i = j
    }
    return out
}

func hexString<C: Collection>(_ b: C) -> String where C.Element == UInt8 { b.map { String(format: "%02x", $0) }.joined() }

func bytes<let N: Int>(_ a: InlineArray<N, UInt8>) -> [UInt8] { (0..<N).map { a[$0] } }

func inline16(_ b: [UInt8]) -> InlineArray<16, UInt8> {
    precondition(b.count == 16)
    var r = InlineArray<16, UInt8>(repeating: 0)
    for i in 0..<16 { r[i] = b[i] }
    return r
}

func base64(_ s: String) -> [UInt8] { [UInt8](Data(base64Encoded: s)!) }

/// Finds a Herald vector file: the copy in Fixtures/ first, then `../shared/vectors/herald/` beside
/// the repository (how CI lays the checkout out).
func vectorRows(_ name: String, filePath: String = #filePath) throws -> [[String]] {
    let here = URL(fileURLWithPath: filePath).deletingLastPathComponent()
    let repoRoot = here.deletingLastPathComponent().deletingLastPathComponent()
    let candidates = [
        here.appendingPathComponent("Fixtures/\(name)"),
        repoRoot.deletingLastPathComponent().appendingPathComponent("shared/vectors/herald/\(name)"),
    ]
    guard let url = candidates.first(where: { FileManager.default.fileExists(atPath: $0.path) }) else {
        throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: name])
    }
    let text = try String(contentsOf: url, encoding: .utf8)
    return text.split(whereSeparator: \.isNewline).dropFirst().map { $0.split(separator: ",").map(String.init) }
}
