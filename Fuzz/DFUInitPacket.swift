// libFuzzer target: the DFU init packet (nrfutil's protobuf command object, HeraldRuntime/DFU):
// the wire-format reader (varints, lengths, nested messages, signed packets) and the field decoder.
// Invariants: decoding never traps or over-reads (ASan); a packet that decodes re-encodes to one
// that decodes to the same fields (the encoder writes only what the decoder read).
import HeraldRuntime

func check(_ condition: Bool, _ message: StaticString) {
    if !condition { fatalError("invariant: \(message)") }
}

func fuzzOne(_ bytes: [UInt8]) {
    guard var decoded = try? DFUInitPacket(decoding: bytes) else { return }
    let again: DFUInitPacket
    do { again = try DFUInitPacket(decoding: decoded.encoded()) } catch {
        check(false, "a decoded init packet re-encodes to one that decodes")
        return
    }
    // The encoder writes an unsigned packet; signing is not a field of the command.
    decoded.isSigned = false
    check(again == decoded, "re-encoded init packet decodes to the same fields")
    _ = decoded.sha256Digest
}

@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    fuzzOne(size > 0 ? Array(UnsafeBufferPointer(start: data, count: size)) : [])
    return 0
}
