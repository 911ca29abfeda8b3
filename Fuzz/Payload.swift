// libFuzzer target: Herald payload decoding (Simple payload, venue beacon payload, extended data,
// shared payload lists). Built by Tools/fuzz; host-only code, so Array is fine here.
// Invariants: decoding never traps or over-reads (ASan), every accepted payload re-encodes to exactly
// the bytes it came from, extended data that validates iterates without error, and the shared list
// iterator yields exactly `count` payloads of `payloadSize` bytes.
import BluetoothHost
import Herald

func check(_ condition: Bool, _ message: StaticString) {
    if !condition { fatalError("invariant: \(message)") }
}

struct Sink: ByteSink {
    var bytes: [UInt8] = []
    mutating func append(_ byte: UInt8) { bytes.append(byte) }
}

func equal(_ a: [UInt8], _ b: Span<UInt8>) -> Bool {
    guard a.count == b.count else { return false }
    for i in 0..<a.count where a[i] != b[i] { return false }
    return true
}

func fuzzOne(_ input: Span<UInt8>) {
    for order in [PayloadCodeByteOrder.bigEndian, .littleEndian] {
        if let p = try? SimplePayload(parsing: input, order: order) {
            let ext = p.extendedData
            check(ext.count <= SimplePayload.maximumExtendedDataSize, "simple extended data bound")
            check(ext.count == input.count - SimplePayload.minimumSize, "simple extended data is the tail")
            var sink = Sink()
            let header = p.header, id = p.contactIdentifier
            do {
                try SimplePayload.write(header: header, contactIdentifier: id, extendedData: ext, order: order, to: &sink)
            } catch { check(false, "accepted simple payload re-encodes") }
            check(equal(sink.bytes, input), "simple payload round trip")
        }
        if let v = try? VenueBeaconPayload(parsing: input, order: order) {
            let ext = v.extendedData
            check(ext.count <= VenueBeaconPayload.maximumExtendedDataSize, "beacon extended data bound")
            var sink = Sink()
            let header = v.header, location = v.locationCode
            do {
                try VenueBeaconPayload.write(header: header, locationCode: location, extendedData: ext, order: order, to: &sink)
            } catch { check(false, "accepted beacon payload re-encodes") }
            check(equal(sink.bytes, input), "beacon payload round trip")
        }
    }

    // Extended data: sections tile the input exactly when it validates.
    var reader = ExtendedDataReader(input)
    var consumed = 0
    var failed = false
    while true {
        do {
            guard let section = try reader.next() else { break }
            let n = section.data.count
            check(n > 0 && n <= 255, "section length")
            consumed += 2 + n
            check(consumed <= input.count, "sections within input")
            var sink = Sink()
            do { try ExtendedDataWriter.append(code: section.code, data: section.data, to: &sink) } catch {
                check(false, "a read section can be written back")
            }
            check(sink.bytes.count == 2 + n, "written section size")
        } catch {
            failed = true
            break
        }
    }
    let valid = (try? ExtendedDataReader.validate(input)) != nil
    check(valid == !failed, "validate agrees with iteration")
    if valid { check(consumed == input.count, "valid extended data is fully consumed") }

    // Shared payloads, for a few unit sizes (the first byte picks one more).
    let sizes = [SimplePayload.minimumSize, 1, input.count > 0 ? Int(input[0]) : 0, -3]
    for size in sizes {
        var it = SharedPayloadIterator(input, payloadSize: size)
        let unit = it.payloadSize
        check(unit >= 1, "payload size at least 1")
        let expected = it.count
        let validates = (try? it.validate()) != nil
        var seen = 0
        var threw = false
        while true {
            do {
                guard let one = try it.next() else { break }
                check(one.count == unit, "shared payload size")
                seen += 1
                check(seen <= expected, "no more payloads than count")
            } catch { threw = true; break }
        }
        check(seen == expected, "count payloads yielded")
        check(threw == !validates, "validate agrees with iteration (shared)")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let buffer = UnsafeBufferPointer(start: size > 0 ? data : nil, count: size)
    fuzzOne(buffer.span)
    return 0
}
