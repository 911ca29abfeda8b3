import BluetoothHost
import Testing
@testable import Herald

/// A payload fixed for the program's life, as the firmware beacon's in flash: 40 octets 0x50...0x77.
/// Its `writePayload` writes other octets, so a test sees which of the two was served.
struct ConstantSource: HeraldPayloadSource {
    nonisolated(unsafe) static let storage: UnsafeBufferPointer<UInt8> = {
        let b = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: 40)
        for i in 0..<40 { b[i] = UInt8(0x50 + i) }
        return UnsafeBufferPointer(b)
    }()
    static var changesWithTime: Bool { false }
    static var constantBytes: UnsafeBufferPointer<UInt8>? { storage }
    mutating func writePayload<S: ByteSink>(at time: Int64, to sink: inout S) -> Bool {
        for _ in 0..<40 { sink.append(0xEE) }
        return true
    }
}

@Suite struct ConstantPayloadTests {
    /// Read and Read Blob are served from the constant octets on every link, an offset past them is
    /// Invalid Offset (Core 5.4 Vol 3 Part F 3.4.4.5), and the delegate hears each read from offset 0.
    @Test func readsComeFromTheConstantOctets() throws {
        var h = try PeripheralHarness(source: ConstantSource())
        h.connect(0x0040)
        h.connect(0x0041)
        let first = h.read()
        let second = h.readBlob(offset: 22)
        #expect(first.first == 0x0B && second.first == 0x0D)
        #expect(Array(first.dropFirst() + second.dropFirst()) == (0..<40).map { UInt8(0x50 + $0) })
        #expect(h.readBlob(offset: 40) == [0x0D])
        #expect(h.readBlob(offset: 41) == [0x01, 0x0C] + h.le(h.handles.payload.value) + [0x07])
        #expect(Array(h.read(link: 0x0041).dropFirst()) == (0..<22).map { UInt8(0x50 + $0) })
        let whole = hexString((0..<40).map { UInt8(0x50 + $0) })
        #expect(h.events == ["served 64 \(whole)", "served 65 \(whole)"])
    }

    /// With no payload kept per link at all (`payloadCapacity` 0, as the firmware beacon): the same.
    @Test func noPerLinkCopyIsNeeded() throws {
        let peripheral = try HeraldPeripheral<ConstantSource, StandardServerOffer, 1, 0, 0>(
            source: ConstantSource(), advertising: HeraldAdvertisingConfiguration(), clock: HeraldClock(unixMillisAtZero: testUnixMillis))
        var server = try OneLinkHeraldServer(peripheral: peripheral, delegate: PeripheralEventLog())
        let payload = server.handles.payload.value
        let read = server.send([0x0A, UInt8(payload & 0xFF), UInt8(payload >> 8)])
        #expect(read == [0x0B] + (0..<22).map { UInt8(0x50 + $0) })
        #expect(server.app.delegate.events.count == 1)
    }
}
