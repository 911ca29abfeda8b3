// libFuzzer target: the btsnoop reader (HeraldRuntime/Logging/BTSnoopReader), strict and lenient
// (a capture cut off mid-record). Invariants: nothing traps or over-reads; the records hold no more
// bytes than the file; lenient reading keeps every record strict reading accepts, and differs only
// by a trailing partial record; no record's included length exceeds its original length.
// fuzz: max_len=4096
import HeraldRuntime

func check(_ condition: Bool, _ message: StaticString) {
    if !condition { fatalError("invariant: \(message)") }
}

func fuzzOne(_ bytes: [UInt8]) {
    let strict = try? BTSnoopReader(bytes: bytes, strict: true)
    let lenient = try? BTSnoopReader(bytes: bytes, strict: false)
    if let strict {
        check(lenient != nil, "lenient reads what strict reads")
        check(lenient?.records == strict.records, "same records")
        check(!strict.trailingPartialRecord, "strict never partial")
    }
    if let lenient {
        let held = lenient.records.reduce(0) { $0 + 24 + $1.packet.count }
        check(16 + held <= bytes.count, "records within the file")
        for r in lenient.records {
            check(UInt32(r.packet.count) <= r.originalLength, "included <= original")
            _ = r.direction; _ = r.isCommandOrEvent; _ = r.date; _ = r.isTruncated
        }
        if strict == nil { check(lenient.trailingPartialRecord, "lenient differs only by a partial record") }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    fuzzOne(size > 0 ? Array(UnsafeBufferPointer(start: data, count: size)) : [])
    return 0
}
