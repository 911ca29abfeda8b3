import BluetoothHost
import Foundation
import Herald

/// `herald check --active`'s writes to a signal characteristic, one Write Request at a time (Core 5.4
/// Vol 3 Part G 4.9.3) at ATT_MTU 23, as a Herald phone makes them:
/// 1. an RSSI message (`02` + Int16, 3 octets);
/// 2. a payload message carrying the reference's 13-octet fixed test payload (16 octets: one request);
/// 3. a payload message carrying a 21-octet Simple payload (24 octets) in 20-octet Write Requests, as
///    Android writes past ATT_MTU-3 (`SignalFragmenter`); the device reassembles it.
struct SignalWriteSequence {
    struct Message {
        var kind: CheckObservations.SignalWrite.Kind
        var bytes: [UInt8]
        var fragments: [[UInt8]]
    }

    var handle: UInt16 = 0
    var valueHandle: UInt16 = 0
    var client = GATTStandardClient()
    var collector = BenchPayloadReader.Collector()
    var messages: [Message] = []
    var message = 0
    var fragment = 0
    var results: [CheckObservations.SignalWrite] = []

    init() {}

    init(handle: UInt16, valueHandle: UInt16, order: PayloadCodeByteOrder = .bigEndian) {
        self.handle = handle
        self.valueHandle = valueHandle
        messages = Self.messages(order: order)
    }

    /// The client identifier of the fixed test payload: "hcheck01" read as a big-endian integer.
    static let checkClientIdentifier: UInt64 = 0x6863_6865_636B_3031

    /// The messages, with the payloads' codes in `order`: the device under test decodes them with its own
    /// byte order (ours: `--byte-order`, the specification's big-endian by default), so `check` writes
    /// them in the order it was given. Writing the 0x08 payload little-endian whatever the option made our
    /// own wearable log country 14851 instead of 826.
    static func messages(order: PayloadCodeByteOrder = .bigEndian) -> [Message] {
        func build(_ write: (inout FixedBytes<64>) throws(DecodeError) -> Void) -> [UInt8] {
            var sink = FixedBytes<64>()
            try? write(&sink)
            let s = sink.span
            var out: [UInt8] = []
            for i in s.indices { out.append(s[i]) }
            return out
        }
        let rssi = build { (s: inout FixedBytes<64>) throws(DecodeError) in SignalMessageEncoder.writeRSSI(-55, to: &s) }
        // 08, country 826, state 0, a 64-bit client identifier: the shape herald-for-cpp serves.
        let fixed = build { (s: inout FixedBytes<64>) throws(DecodeError) in
            FixedTestPayload(countryCode: 826, stateCode: 0, clientIdentifier: checkClientIdentifier).write(order: order, to: &s)
        }
        let short = build { (s: inout FixedBytes<64>) throws(DecodeError) in try SignalMessageEncoder.writePayload(fixed.span, to: &s) }
        // A Simple payload: 0x10, 826/0, a 16-octet contact identifier.
        var identifier = ContactIdentifier(repeating: 0)
        for (i, b) in "herald-check-id!".utf8.enumerated() { identifier[i] = b }
        let simple = build { (s: inout FixedBytes<64>) throws(DecodeError) in
            try SimplePayload.write(header: PayloadHeader(protocolAndVersion: 0x10, countryCode: 826, stateCode: 0),
                                    contactIdentifier: identifier, extendedData: Span(), order: order, to: &s)
        }
        let long = build { (s: inout FixedBytes<64>) throws(DecodeError) in try SignalMessageEncoder.writePayload(simple.span, to: &s) }
        func chunks(_ b: [UInt8]) -> [[UInt8]] {
            stride(from: 0, to: b.count, by: SignalFragmenter.defaultFragmentSize).map {
                Array(b[$0..<min($0 + SignalFragmenter.defaultFragmentSize, b.count)])
            }
        }
        return [Message(kind: .rssi, bytes: rssi, fragments: [rssi]),
                Message(kind: .payload, bytes: short, fragments: [short]),
                Message(kind: .fragmented, bytes: long, fragments: chunks(long))]
    }

    /// Sends the first request; true when there is nothing to send.
    mutating func begin(now: UInt64, control: inout StackControl) -> Bool {
        message = 0
        fragment = 0
        return !send(now: now, control: &control)
    }

    /// Sends the current fragment; false when the sequence is over.
    mutating func send(now: UInt64, control: inout StackControl) -> Bool {
        while message < messages.count {
            let value = messages[message].fragments[fragment]
            var request = FixedBytes<256>()
            do {
                try client.start(GATTProcedure.write(handle: valueHandle, value: value.span), now: now, into: &request)
            } catch {
                record(error: "request refused locally: \(error)")
                continue
            }
            if control.sendATT(handle: handle, pdu: request.span) { return true }
            record(error: "ATT queue full")
        }
        return false
    }

    /// One ATT PDU from the device; true when the sequence is over.
    mutating func handle(pdu: Span<UInt8>, now: UInt64, control: inout StackControl) -> Bool {
        var reply = FixedBytes<256>()
        switch client.handle(pdu: pdu, now: now, delegate: &collector, reply: &reply) {
        case .send: _ = control.sendATT(handle: handle, pdu: reply.span)
        case .disconnect: record(error: "no Write Response within 30 s")
        case .none: break
        }
        return advance(now: now, control: &control)
    }

    mutating func tick(now: UInt64, control: inout StackControl) -> Bool {
        if client.tick(now: now, delegate: &collector) == .disconnect { record(error: "no Write Response within 30 s") }
        return advance(now: now, control: &control)
    }

    mutating func advance(now: UInt64, control: inout StackControl) -> Bool {
        guard let (_, error) = collector.completed else { return message >= messages.count }
        collector.completed = nil
        if let error {
            record(error: "fragment \(fragment + 1) of \(messages[message].fragments.count): \(GATTDumper.describe(error))")
        } else if fragment + 1 < messages[message].fragments.count {
            fragment += 1
        } else {
            record(error: nil)
        }
        return !send(now: now, control: &control)
    }

    /// Ends the current message with this outcome and moves to the next.
    mutating func record(error: String?) {
        guard message < messages.count else { return }
        let m = messages[message]
        results.append(.init(kind: m.kind, octets: m.bytes.count, fragments: m.fragments.count, error: error))
        message += 1
        fragment = 0
    }

    mutating func linkLost(_ reason: HCIStatus) {
        if message < messages.count { record(error: "link lost (reason 0x\(hex(reason.rawValue)))") }
        message = messages.count
    }
}
