// libFuzzer target: `herald wearable --secret-key-file` (HeraldRuntime/Keys/SecretKeyFile): the secret
// key file and its IRK beside it, written mode 0600 to a scratch directory and loaded as the wearable
// loads them, then the Simple payload source and supplier built from the key. Input: the key file's
// bytes, a NUL, the IRK file's bytes (missing: no IRK file); the first byte's low bit makes the key
// file world-readable, which must be refused.
// Invariants: nothing traps; a loaded key is exactly 2048 bytes and the IRK 16; a world-readable key
// is refused; a loaded key builds a payload source whose payload is a Simple payload.
// fuzz: max_len=4200
import Foundation
import Herald
import HeraldRuntime

func check(_ condition: Bool, _ message: StaticString) {
    if !condition { fatalError("invariant: \(message)") }
}

let scratch: String = {
    let dir = NSTemporaryDirectory() + "herald-fuzz-key-\(getpid())"
    try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    atexit { try? FileManager.default.removeItem(atPath: NSTemporaryDirectory() + "herald-fuzz-key-\(getpid())") }
    return dir
}()

func write(_ bytes: ArraySlice<UInt8>, to path: String, mode: mode_t) {
    unlink(path)
    let fd = open(path, O_WRONLY | O_CREAT | O_EXCL, mode)
    guard fd >= 0 else { return }
    fchmod(fd, mode)
    _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    close(fd)
}

func fuzzOne(_ bytes: [UInt8]) {
    guard let first = bytes.first else { return }
    let open = first & 1 == 1
    let sections = bytes.dropFirst().split(separator: 0, maxSplits: 1, omittingEmptySubsequences: false)
    let path = scratch + "/wearable.key"
    write(sections.first ?? [], to: path, mode: open ? 0o644 : 0o600)
    if sections.count > 1 { write(sections[1], to: SecretKeyFile.irkPath(for: path), mode: 0o600) } else { unlink(SecretKeyFile.irkPath(for: path)) }
    do {
        let secret = try SecretKeyFile.loadSecretKey(path)
        check(!open, "a world-readable key is refused")
        check(secret.count == 2048, "secret key is 2048 bytes")
        let header = PayloadHeader(protocolAndVersion: 0x10, countryCode: 826, stateCode: 0)
        let epoch = KeyEpoch.standard
        _ = try SimplePayloadDataSupplier(secretKey: secret.span, header: header, epoch: epoch, order: .bigEndian)
        _ = try SecretKeyFile.loadIRK(forSecretKey: path)
    } catch {
        check(!"\(error)".isEmpty, "error says something")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    fuzzOne(size > 0 ? Array(UnsafeBufferPointer(start: data, count: size)) : [])
    return 0
}
