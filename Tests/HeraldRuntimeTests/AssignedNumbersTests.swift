import Testing
@testable import HeraldRuntime

/// `herald gatt` names SIG-assigned and Herald UUIDs and shows UTF-8 values as text.
@Suite struct AssignedNumbersTests {
    @Test func namesServicesCharacteristicsDescriptorsAndHerald() {
        #expect(AssignedNumbers.name("1800") == "Generic Access")
        #expect(AssignedNumbers.name("2A00") == "Device Name")
        #expect(AssignedNumbers.name("2902") == "Client Characteristic Configuration")
        #expect(AssignedNumbers.name("428132af-4746-42d3-801e-4572d65bfd9b") == "Herald")
        #expect(AssignedNumbers.name("9d2c0002-5b1a-4c6e-8f3d-2a7b6c5d4e01") == nil)
    }

    @Test func textOnlyForPrintableUTF8() {
        #expect(AssignedNumbers.text(hex: "6865726164") == "herad")
        #expect(AssignedNumbers.text(hex: "6e5246353200") == "nRF52")  // trailing NUL, as devices send
        #expect(AssignedNumbers.text(hex: "c3a9") == "é")
        #expect(AssignedNumbers.text(hex: "01020304") == nil)
        #expect(AssignedNumbers.text(hex: "ff") == nil)
        #expect(AssignedNumbers.text(hex: "") == nil)
        #expect(AssignedNumbers.text(hex: "0000") == nil)
    }
}
