// libFuzzer target: advertising data — AD structure parsing (AdvertisingDataParser,
// AdvertisingDataSummary, Core 5.4 Vol 3 Part C 11) and Herald advert classification
// (HeraldAdvertClassification). Built by Tools/fuzz; host-only code.
// Input: `[n][advertising data: n bytes][scan response: the rest]`.
// Invariants: no trap or over-read; structures tile the data exactly when it is well formed; the
// summary never holds more than its capacities; the classification agrees with a direct search for
// the Herald service UUIDs and its kind follows from its fields.
import BluetoothHost
import Herald

func check(_ condition: Bool, _ message: StaticString) {
    if !condition { fatalError("invariant: \(message)") }
}

/// Walks `data`; returns whether it is well formed, checking bounds on the way.
func walk(_ data: Span<UInt8>) -> Bool {
    var parser = AdvertisingDataParser(data)
    var used = 0
    while true {
        do {
            guard let s = try parser.next() else { break }
            let n = s.data.count
            used += 2 + n
            check(n <= 254, "AD data length")
            check(used <= data.count, "AD structures within the data")
        } catch {
            return false
        }
    }
    // Zero-length padding may end the data early (Part C 11: the rest is zeros).
    check(used <= data.count, "consumed within the data")
    return true
}

func fuzzOne(_ input: Span<UInt8>) {
    guard input.count > 0 else { return }
    let split = min(Int(input[0]), input.count - 1)
    let adv = input.extracting(1..<(1 + split))
    let scan = input.extracting((1 + split)..<input.count)

    let advOK = walk(adv)
    let scanOK = walk(scan)

    if let summary = try? AdvertisingDataSummary(parsing: adv) {
        check(advOK, "summary parses only well-formed data")
        check(summary.uuid16Count <= AdvertisingDataSummary.uuid16Capacity, "uuid16 capacity")
        check(summary.uuid32Count <= AdvertisingDataSummary.uuid32Capacity, "uuid32 capacity")
        check(summary.uuid128Count <= AdvertisingDataSummary.uuid128Capacity, "uuid128 capacity")
        check(summary.serviceDataCount <= AdvertisingDataSummary.serviceDataCapacity, "service data capacity")
        // Longer names / manufacturer data (extended advertising) are cut and flagged `truncated`.
        check(summary.name.count <= 29 && (!summary.name.overflowed || summary.truncated), "name capacity")
        check(summary.manufacturerData.count <= 29 && (!summary.manufacturerData.overflowed || summary.truncated),
              "manufacturer data capacity")
        if !summary.truncated {
            for uuid in [HeraldIdentifiers.serviceUUID, HeraldIdentifiers.registeredServiceUUID] {
                check(summary.containsServiceUUID(uuid) == AdvertisingDataParser.containsServiceUUID(uuid, in: adv),
                      "summary and parser agree on service UUIDs")
            }
        }
    }

    do {
        let c = try HeraldAdvertClassification(advertisingData: adv, scanResponse: scan)
        check(advOK && scanOK, "classification only of well-formed data")
        if c.hasSpecificationServiceUUID {
            check(AdvertisingDataParser.containsServiceUUID(HeraldIdentifiers.serviceUUID, in: adv)
                  || AdvertisingDataParser.containsServiceUUID(HeraldIdentifiers.serviceUUID, in: scan),
                  "specification UUID is really there")
        }
        switch c.kind {
        case .herald:
            check(c.hasSpecificationServiceUUID || c.hasRegisteredServiceUUID || c.pseudoDeviceAddress != nil, "herald kind")
        case .appleConnectToCheck:
            check(c.isApple && c.appleType != 0x02 && c.appleFilterMatch == nil, "apple kind")
        case .appleIgnored:
            check(c.isApple && c.appleFilterMatch != nil, "ignored apple kind")
        case .notHerald:
            check(!c.hasSpecificationServiceUUID && !c.hasRegisteredServiceUUID && c.pseudoDeviceAddress == nil, "not herald")
        }
    } catch {
        // Malformed data is a typed error; nothing more to check.
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let buffer = UnsafeBufferPointer(start: size > 0 ? data : nil, count: size)
    fuzzOne(buffer.span)
    return 0
}
