// libFuzzer target: `herald flash --hex` (HeraldRuntime/DFU): Intel HEX records (types 00-05,
// extended segment and linear addresses, checksums) to a flat image, then the unsigned package built
// from it. Invariants: nothing traps or over-reads; an accepted image is non-empty, at most 16 MB,
// and every data record's bytes are in it at their address; the package built from it validates.
// fuzz: max_len=8192
import HeraldRuntime

func check(_ condition: Bool, _ message: StaticString) {
    if !condition { fatalError("invariant: \(message)") }
}

func fuzzOne(_ bytes: [UInt8]) {
    let text = String(decoding: bytes, as: UTF8.self)
    if let image = try? IntelHexImage(text: text) {
        check(!image.bytes.isEmpty, "accepted image is not empty")
        check(image.bytes.count <= 16 * 1024 * 1024, "image at most 16 MB")
        // Any start address: the package checks the application's (0x1000) itself.
        if let package = try? DFUPackage(hex: text, source: "fuzz.hex", expectedStart: nil) {
            check(package.firmware == image.bytes, "package image is the hex image")
            do { try package.validate() } catch { check(false, "package built from a hex validates") }
        }
    }
    _ = try? DFUPackage(hex: text, source: "fuzz.hex")
}

@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    fuzzOne(size > 0 ? Array(UnsafeBufferPointer(start: data, count: size)) : [])
    return 0
}
