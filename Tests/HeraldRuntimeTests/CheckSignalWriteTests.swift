import BluetoothHost
import Herald
import Testing
@testable import HeraldRuntime

/// `herald check --active` writes payloads whose codes the device under test reads in its own byte order:
/// the 0x08 test payload was written little-endian whatever `--byte-order` said, so our wearable (big-endian
/// by default) logged country 14851.
struct CheckSignalWriteTests {
    /// The payload inside the message of `kind` (`01 len payload`, reassembled).
    func payload(_ kind: CheckObservations.SignalWrite.Kind, order: PayloadCodeByteOrder) -> [UInt8] {
        let m = SignalWriteSequence.messages(order: order).first { $0.kind == kind }!
        #expect(m.bytes[0] == 0x01 && Int(m.bytes[1]) | Int(m.bytes[2]) << 8 == m.bytes.count - 3)
        #expect(m.fragments.flatMap { $0 } == m.bytes)
        return Array(m.bytes[3...])
    }

    @Test(arguments: [PayloadCodeByteOrder.bigEndian, .littleEndian])
    func bothPayloadsSayCountry826InTheOrderAsked(order: PayloadCodeByteOrder) throws {
        let fixed = payload(.payload, order: order)
        let test = try FixedTestPayload(parsing: fixed.span, order: order)
        #expect(test.header.countryCode == 826 && test.header.stateCode == 0)
        #expect(test.clientIdentifier == SignalWriteSequence.checkClientIdentifier)
        let simple = payload(.fragmented, order: order)
        let p = try SimplePayload(parsing: simple.span, order: order)
        #expect(p.header.countryCode == 826 && simple.count == 21)
    }

    @Test func theDefaultIsTheSpecificationsBigEndian() {
        #expect(payload(.payload, order: .bigEndian)[1...2] == [0x03, 0x3A])
        #expect(SignalWriteSequence.messages().map(\.bytes) == SignalWriteSequence.messages(order: .bigEndian).map(\.bytes))
    }
}
