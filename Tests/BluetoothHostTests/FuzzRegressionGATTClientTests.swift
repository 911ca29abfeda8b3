import Testing
@testable import BluetoothHost

/// Inputs the `GATTClient` fuzz target (Fuzz/GATTClient.swift) flagged, kept as regression tests.
@Suite struct FuzzRegressionGATTClientTests {
    /// Finding: a Read By Type Response to characteristic discovery whose entry declared value handle
    /// 0x0000 (`11 00 | 01 | 00 00 | …`) was handed to the application as a characteristic at handle 0.
    /// The value handle must follow the declaration inside the service (Core 5.4 Vol 3 Part G 3.3.1;
    /// 0x0000 is reserved, Part F 3.2.2), so the response is invalid and discovery ends with an error,
    /// reporting none of its entries.
    @Test(arguments: [
        "09 07 11 00 01 00 00 2a 00",  // value handle 0x0000 (the fuzzer's input)
        "09 07 11 00 02 11 00 2a 00",  // value handle equal to the declaration's
        "09 07 11 00 02 10 00 2a 00",  // value handle before the declaration
        "09 07 11 00 02 13 00 2a 00",  // value handle past the service end (0x0012)
        "09 07 0f 00 02 10 00 2a 00 11 00 02 00 00 2a 00",  // a good entry, then a bad one: nothing reported
    ])
    func characteristicWithImpossibleValueHandleIsInvalid(response: String) {
        var c = TestClient()
        #expect(c.start(.discoverAllCharacteristics(serviceStart: 0x000E, serviceEnd: 0x0012)).1 == nil)
        #expect(c.feed(response) == (.none, []))
        #expect(c.delegate.characteristics.isEmpty)
        #expect(c.delegate.completions.count == 1)
        #expect(c.lastError == .invalidResponse)
        #expect(!c.client.isBusy)
    }

    @Test func wellFormedCharacteristicStillDiscovered() {
        var c = TestClient()
        _ = c.start(.discoverAllCharacteristics(serviceStart: 0x000E, serviceEnd: 0x0012))
        // Its value is the service's last handle: no room for another, so discovery ends here.
        #expect(c.feed("09 07 11 00 0c 12 00 2a 00").0 == .none)
        #expect(c.delegate.completions.count == 1 && c.lastError == nil)
        #expect(c.delegate.characteristics == [
            GATTDiscoveredCharacteristic(declarationHandle: 0x11, properties: GATTCharacteristicProperties(rawValue: 0x0C),
                                         valueHandle: 0x12, uuid: BluetoothUUID(uuid16: 0x002A)),
        ])
    }
}
