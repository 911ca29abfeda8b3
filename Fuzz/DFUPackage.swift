// libFuzzer target: `herald flash --package` (HeraldRuntime/DFU): the ZIP reader (central directory,
// local headers, stored and deflated entries, CRC-32), manifest.json and the init packet's
// cross-checks against the image. Built by Tools/fuzz against the instrumented runtime.
// Invariants: nothing traps, over-reads (ASan) or allocates more than the input justifies; every
// entry the ZIP reader hands out has its directory size and CRC; an accepted package has a
// non-empty image its init packet agrees with.
// fuzz: max_len=16384
import HeraldRuntime

func check(_ condition: Bool, _ message: StaticString) {
    if !condition { fatalError("invariant: \(message)") }
}

func fuzzOne(_ bytes: [UInt8]) {
    if let archive = try? ZipArchive(bytes: bytes) {
        for entry in archive.entries.prefix(16) {
            if let data = try? archive.read(entry) {
                check(data.count == entry.uncompressedSize, "entry size is the directory's")
                check(DFUCRC32.checksum(data) == entry.crc32, "entry CRC is the directory's")
            }
        }
    }
    do {
        let package = try DFUPackage(zip: bytes, source: "fuzz.zip")
        check(!package.firmware.isEmpty, "accepted package has an image")
        let initPacket = package.decodedInitPacket
        check(initPacket != nil, "accepted package's init packet decodes")
        if let size = initPacket?.appSize { check(Int(size) == package.firmware.count, "app_size is the image's") }
    } catch {
        check(!error.description.isEmpty, "error says something")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    fuzzOne(size > 0 ? Array(UnsafeBufferPointer(start: data, count: size)) : [])
    return 0
}
