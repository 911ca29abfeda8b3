import BluetoothHost
import Foundation
import Herald

extension HeraldCheck {
    enum PayloadType: Equatable {
        case simple, venue, fixedTest, unknown(UInt8)

        init(_ first: UInt8) {
            if SimplePayload.protocolRange.contains(first) { self = .simple }
            else if VenueBeaconPayload.protocolRange.contains(first) { self = .venue }
            else if first == FixedTestPayload.protocolAndVersion { self = .fixedTest }
            else { self = .unknown(first) }
        }

        var name: String {
            switch self {
            case .simple: "Simple"
            case .venue: "venue beacon"
            case .fixedTest: "the reference's fixed test payload"
            case .unknown(let b): "unknown type 0x\(hex(b))"
            }
        }

        /// Octets before the extended data, and the longest payload allowed.
        var fixedPart: Int? {
            switch self {
            case .simple: SimplePayload.minimumSize
            case .venue: VenueBeaconPayload.minimumSize
            case .fixedTest: FixedTestPayload.size  // 08, country, state, 64-bit client id (herald-for-cpp ConcreteFixedPayloadDataSupplierV1)
            case .unknown: nil
            }
        }
    }

    static let maximumPayload = 510

    static func judgePayload(_ o: CheckObservations) -> [CheckVerdict] {
        let ids = ["PAY-1", "PAY-2", "PAY-3", "PAY-4", "PAY-5", "PAY-6"]
        guard let bytes = o.payloadReads.first?.bytes else {
            let why = o.gatt == nil ? "no link" : "payload not read" + (o.payloadReadError.map { ": \($0)" } ?? "")
            return ids.map { verdict($0, .skip, why) }
        }
        guard let first = bytes.first else {
            return [verdict("PAY-1", .fail, "the payload is empty")] + ids.dropFirst().map { verdict($0, .skip, "empty payload") }
        }
        var out: [CheckVerdict] = []
        let type = PayloadType(first)
        let shown = hexBytes(Array(bytes.prefix(24))) + (bytes.count > 24 ? "…" : "")
        switch type {
        case .simple, .venue: out.append(verdict("PAY-1", .pass, "\(type.name) (0x\(hex(first))): \(shown)"))
        case .fixedTest: out.append(verdict("PAY-1", .warn, "\(type.name) 0x08, not a Simple or venue payload: \(shown)"))
        case .unknown: out.append(verdict("PAY-1", .fail, "\(type.name): \(shown)"))
        }
        guard let fixed = type.fixedPart else { return out + ids.dropFirst().map { verdict($0, .skip, "unknown payload type") } }

        // PAY-2
        let lengthOK = type == .fixedTest ? bytes.count == fixed : (fixed...maximumPayload).contains(bytes.count)
        let allowed = type == .fixedTest ? "\(fixed)" : "\(fixed)–\(maximumPayload)"
        out.append(verdict("PAY-2", lengthOK ? .pass : .fail, "\(bytes.count) octets (\(type.name): \(allowed))"))
        guard bytes.count >= 5 else { return out + ids.dropFirst(2).map { verdict($0, .skip, "too short for its header") } }

        out.append(byteOrderVerdict(bytes, type: type))

        // PAY-4
        if type == .fixedTest {
            out.append(verdict("PAY-4", .skip, "the fixed test payload has no extended data"))
        } else if bytes.count <= fixed || !lengthOK {
            out.append(verdict("PAY-4", .skip, lengthOK ? "no extended data" : "length invalid"))
        } else {
            out.append(extendedDataVerdict(Array(bytes[fixed...])))
        }
        out += periodVerdicts(o, type: type)
        return out
    }

    /// The ISO 3166-1 numeric codes go to 999: a country code above that in one byte order and not in
    /// the other tells the order apart (826 is 0x033A; read the other way round, 14,851).
    static func byteOrderVerdict(_ b: [UInt8], type: PayloadType) -> CheckVerdict {
        let be = (UInt16(b[1]) << 8 | UInt16(b[2]), UInt16(b[3]) << 8 | UInt16(b[4]))
        let le = (UInt16(b[2]) << 8 | UInt16(b[1]), UInt16(b[4]) << 8 | UInt16(b[3]))
        func codes(_ c: (UInt16, UInt16), big: Bool) -> String {
            var s = "country \(c.0), state \(c.1)"
            if type == .venue, b.count >= 9 {
                let loc = big ? b[5..<9].reduce(UInt32(0)) { $0 << 8 | UInt32($1) } : b[5..<9].reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
                s += ", location \(loc)"
            }
            return s
        }
        if be == le { return verdict("PAY-3", .pass, "\(codes(be, big: true)): the same in either byte order") }
        let beOK = be.0 <= 999, leOK = le.0 <= 999
        switch (beOK, leOK) {
        case (true, false):
            return verdict("PAY-3", .pass, "big-endian: \(codes(be, big: true))")
        case (false, true):
            return verdict("PAY-3", .warn, "little-endian, as the reference apps write them: \(codes(le, big: false)) (read big-endian: \(codes(be, big: true)))")
        case (true, true):
            return verdict("PAY-3", .pass, "big-endian assumed (ambiguous: both orders give a plausible country): \(codes(be, big: true)); little-endian \(codes(le, big: false))")
        case (false, false):
            return verdict("PAY-3", .fail, "no ISO 3166-1 numeric country (≤ 999) in either order: big-endian \(be.0), little-endian \(le.0)")
        }
    }

    static func extendedDataVerdict(_ ext: [UInt8]) -> CheckVerdict {
        var sections: [String] = []
        var reader = ExtendedDataReader(ext.span)
        do {
            while let s = try reader.next() {
                var text = "0x\(hex(s.code)) (\(s.data.count) octets"
                if s.isText {
                    var v: [UInt8] = []
                    for i in s.data.indices { v.append(s.data[i]) }
                    text += " \"\(String(decoding: v, as: UTF8.self))\""
                }
                sections.append(text + ")")
            }
        } catch {
            return verdict("PAY-4", .fail, "after \(sections.count) valid section(s)\(sections.isEmpty ? "" : " " + sections.joined(separator: ", ")): \(error)")
        }
        return verdict("PAY-4", .pass, "\(sections.count) section(s): " + sections.joined(separator: ", "))
    }

    /// PAY-5 and PAY-6 from the reads' times on the payload period grid (periods start at multiples of
    /// the period in Unix time: the key schedule's epochs are whole days).
    static func periodVerdicts(_ o: CheckObservations, type: PayloadType) -> [CheckVerdict] {
        let reads = o.payloadReads
        let period = max(o.payloadPeriod, 1)
        let fixedPayload = type != .simple
        var byPeriod: [Int: [[UInt8]]] = [:]
        for r in reads { byPeriod[Int((r.unixSeconds / period).rounded(.down)), default: []].append(r.bytes) }
        var out: [CheckVerdict] = []
        if reads.count < 2 {
            out.append(verdict("PAY-5", .skip, "read once; --active reads it again on a second link"))
        } else if fixedPayload {
            let same = Set(reads.map(\.bytes)).count == 1
            out.append(verdict("PAY-5", same ? .pass : .fail, same ? "\(reads.count) reads, all identical" : "\(reads.count) reads of a fixed payload differ"))
        } else if let (p, group) = byPeriod.first(where: { $0.value.count >= 2 }) {
            let same = Set(group).count == 1
            out.append(verdict("PAY-5", same ? .pass : .fail, "\(group.count) reads in period \(p): " + (same ? "identical" : "they differ")))
        } else {
            out.append(verdict("PAY-5", .skip, "no two reads in one payload period"))
        }
        if fixedPayload {
            out.append(verdict("PAY-6", .skip, "not a Simple payload (\(type.name) stays fixed)"))
        } else {
            let periods = byPeriod.keys.sorted()
            if let a = periods.first, let b = periods.last, a != b, let x = byPeriod[a]?.first, let y = byPeriod[b]?.first {
                out.append(verdict("PAY-6", x != y ? .pass : .fail, x != y ? "periods \(a) and \(b) served different payloads" : "periods \(a) and \(b) served the same payload"))
            } else {
                out.append(verdict("PAY-6", .skip, String(format: "the run did not span a payload period boundary (every %.0f s)", period)))
            }
        }
        return out
    }
}
