import Testing
@testable import BluetoothHost

// Expected bytes are whole H4 command packets: indicator 01, opcode (LE), length, parameters.
// Those marked "capture" are copied from ../shared/captures (beside the repository)/*.btsnoop (Bumble 0.0.236 hosts);
// the rest are hand-computed from Core 5.4 Vol 4 Part E 7.x and Zephyr's hci_vs.h layouts, and the
// LE connection/scan/advertising ones were cross-checked against Bumble 0.0.236's own encoders.

private struct ArraySink: ByteSink {
    var bytes: [UInt8] = []
    mutating func append(_ byte: UInt8) { bytes.append(byte) }
}

private func packet<C: HCICommand>(_ command: C) -> [UInt8] {
    var sink = ArraySink()
    command.writePacket(to: &sink)
    return sink.bytes
}

/// Parses a Command Complete event (no H4 indicator) and decodes it as command `C`.
private func complete<C: HCICommand>(_ eventHex: String, as _: C.Type) throws -> C.ReturnParameters {
    let bytes = hex(eventHex)
    let event = try HCIEventPacket(parsing: bytes.span)
    let cc = try HCICommandCompleteEvent(event)
    return try cc.decode(C.self)
}

/// Decodes return parameters directly (after the status octet).
private func returnParameters<C: HCICommand>(_ paramsHex: String, as _: C.Type) throws(DecodeError) -> C.ReturnParameters {
    let bytes = hex(paramsHex)
    return try C.ReturnParameters(parsing: bytes.span)
}

private let peer = BDAddress(displayOrder: 0xF0, 0xF1, 0xF2, 0xF3, 0xF4, 0xF5)

@Suite struct HCICommandEncodingTests {
    @Test func controllerAndBasebandCommands() {
        #expect(packet(HCIReset()) == hex("01 030c 00"))  // capture
        #expect(packet(HCISetEventMask(mask: 0x3DBF_F807_BFFF_9FFF)) == hex("01 010c 08 ff9fffbf07f8bf3d"))  // capture
        #expect(packet(HCILESetEventMask(mask: 0x007B_ED0F_FFF7_FFFF)) == hex("01 0120 08 fffff7ff0fed7b00"))  // capture
        #expect(packet(HCISetEventMask.leHostDefault) == hex("01 010c 08 9088000200800020"))
    }

    @Test func leEventMaskBitsFollowSubeventCodes() {
        #expect(HCILESetEventMask.bit(forSubevent: 0x01) == 0x1)
        #expect(HCILESetEventMask.bit(forSubevent: 0x0D) == 0x1000)
        #expect(HCILESetEventMask.bit(forSubevent: 0x29) == 1 << 40)
        #expect(HCILESetEventMask.bit(forSubevent: 0) == 0)
        #expect(packet(HCILESetEventMask.hostDefault) == hex("01 0120 08 4712020000010000"))
    }

    @Test func parameterlessCommands() {
        #expect(packet(HCIReadLocalVersionInformation()) == hex("01 0110 00"))
        #expect(packet(HCIReadLocalSupportedCommands()) == hex("01 0210 00"))
        #expect(packet(HCIReadLocalSupportedFeatures()) == hex("01 0310 00"))
        #expect(packet(HCIReadBufferSize()) == hex("01 0510 00"))
        #expect(packet(HCIReadBDADDR()) == hex("01 0910 00"))
        #expect(packet(HCILEReadBufferSize()) == hex("01 0220 00"))
        #expect(packet(HCILEReadBufferSizeV2()) == hex("01 6020 00"))  // capture
        #expect(packet(HCILEReadLocalSupportedFeatures()) == hex("01 0320 00"))  // capture
        #expect(packet(HCILERand()) == hex("01 1820 00"))
        #expect(packet(HCILEReadMaximumDataLength()) == hex("01 2f20 00"))
        #expect(packet(HCILEReadSuggestedDefaultDataLength()) == hex("01 2320 00"))  // capture
        #expect(packet(HCILECreateConnectionCancel()) == hex("01 0e20 00"))
        #expect(packet(ZephyrReadVersionInformation()) == hex("01 01fc 00"))
        #expect(packet(ZephyrReadSupportedCommands()) == hex("01 02fc 00"))
        #expect(packet(ZephyrReadStaticAddresses()) == hex("01 09fc 00"))
    }

    @Test func connectionCommands() {
        #expect(packet(HCIDisconnect(handle: 0x0001, reason: .remoteUserTerminated)) == hex("01 0604 03 0100 13"))  // capture
        #expect(packet(HCIReadRSSI(handle: 0x0ABC)) == hex("01 0514 02 bc0a"))
        #expect(
            packet(HCILEConnectionUpdate(
                handle: 0x0040, connectionIntervalMin: 0x0006, connectionIntervalMax: 0x0C80, maxLatency: 0x01F3,
                supervisionTimeout: 0x0C80, minCELength: 0x0002, maxCELength: 0x0010))
                == hex("01 1320 0e 4000 0600 800c f301 800c 0200 1000"))
        #expect(packet(HCILESetDataLength(handle: 0x0002, txOctets: 251, txTime: 2120)) == hex("01 2220 06 0200 fb00 4808"))
        #expect(packet(HCILEWriteSuggestedDefaultDataLength(txOctets: 251, txTime: 2120)) == hex("01 2420 04 fb00 4808"))  // capture
    }

    @Test func addressAndCryptoCommands() {
        let random = BDAddress(displayOrder: 0xC0, 0xC1, 0xC2, 0xC3, 0xC4, 0xC5)
        #expect(packet(HCILESetRandomAddress(address: random)) == hex("01 0520 06 c5c4c3c2c1c0"))  // capture
        #expect(packet(ZephyrWriteBDADDR(address: random)) == hex("01 06fc 06 c5c4c3c2c1c0"))
        var key = InlineArray<16, UInt8>(repeating: 0)
        var plaintext = InlineArray<16, UInt8>(repeating: 0)
        for i in 0..<16 {
            key[i] = UInt8(i)
            plaintext[i] = 0xF0 | UInt8(i)
        }
        #expect(
            packet(HCILEEncrypt(key: key, plaintext: plaintext))
                == hex("01 1720 20 000102030405060708090a0b0c0d0e0f f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff"))
    }

    @Test func advertisingCommands() {
        // capture (herald-phone-receives-signal-writes): 1 s interval, ADV_IND, random own address.
        let params = HCILESetAdvertisingParameters(
            intervalMin: 0x0640, intervalMax: 0x0640, advertisingType: .connectableUndirected, ownAddressType: .randomAddress)
        #expect(packet(params) == hex("01 0620 0f 4006 4006 00 01 00 000000000000 07 00"))
        let directed = HCILESetAdvertisingParameters(
            intervalMin: 0x0020, intervalMax: 0x4000, advertisingType: .connectableDirectedLowDuty,
            ownAddressType: .resolvableOrRandom, peerAddressType: .randomDevice, peerAddress: peer, channelMap: 0x05,
            filterPolicy: .filterBoth)
        #expect(packet(directed) == hex("01 0620 0f 2000 0040 04 03 01 f5f4f3f2f1f0 05 03"))
        #expect(packet(HCILESetAdvertisingParameters()) == hex("01 0620 0f 0008 0008 00 00 00 000000000000 07 00"))
        #expect(packet(HCILESetAdvertisingEnable(true)) == hex("01 0a20 01 01"))  // capture
        #expect(packet(HCILESetAdvertisingEnable(false)) == hex("01 0a20 01 00"))
    }

    @Test func advertisingDataIsAlwaysThirtyOneOctets() throws {
        // capture: flags, Herald's 128-bit service UUID, manufacturer 0xFFFA with a pseudo address.
        let ad = hex("02010611079bfd5bd672451e80d3424647af32814209fffaff365cf1ddea9c")
        let command = try HCILESetAdvertisingData(ad.span)
        #expect(packet(command) == hex("01 0820 20 1f") + ad)
        #expect(packet(HCILESetScanResponseData()) == hex("01 0920 20 00") + [UInt8](repeating: 0, count: 31))  // capture
        let short = try HCILESetScanResponseData(hex("03097a7a").span)
        #expect(packet(short) == hex("01 0920 20 04 03097a7a") + [UInt8](repeating: 0, count: 27))
        #expect(throws: AdvertisingDataError.doesNotFit) {
            _ = try HCILESetAdvertisingData([UInt8](repeating: 1, count: 32).span)
        }
    }

    @Test func scanningCommands() {
        let active = HCILESetScanParameters(scanType: .active, interval: 0x0060, window: 0x0060, ownAddressType: .randomAddress)
        #expect(packet(active) == hex("01 0b20 07 01 6000 6000 01 00"))  // capture
        let passive = HCILESetScanParameters(
            scanType: .passive, interval: 0x4000, window: 0x0004, ownAddressType: .resolvableOrPublic,
            filterPolicy: .filterAcceptListAndUnresolvedDirected)
        #expect(packet(passive) == hex("01 0b20 07 00 0040 0400 02 03"))
        #expect(packet(HCILESetScanEnable(enable: true, filterDuplicates: false)) == hex("01 0c20 02 01 00"))  // capture
        #expect(packet(HCILESetScanEnable(enable: false)) == hex("01 0c20 02 00 00"))  // capture
        #expect(packet(HCILESetScanEnable(enable: true, filterDuplicates: true)) == hex("01 0c20 02 01 01"))
    }

    @Test func createConnection() {
        // capture (herald-central-reads-phone).
        let c = HCILECreateConnection(
            scanInterval: 0x0060, scanWindow: 0x0060, peerAddressType: .randomDevice, peerAddress: peer,
            ownAddressType: .randomAddress, connectionIntervalMin: 0x000C, connectionIntervalMax: 0x0018,
            maxLatency: 0, supervisionTimeout: 0x0048)
        #expect(packet(c) == hex("01 0d20 19 6000 6000 00 01 f5f4f3f2f1f0 01 0c00 1800 0000 4800 0000 0000"))
        let all = HCILECreateConnection(
            scanInterval: 0x0010, scanWindow: 0x0008, useFilterAcceptList: true, peerAddressType: .publicIdentity,
            peerAddress: peer, ownAddressType: .publicAddress, connectionIntervalMin: 0x0006,
            connectionIntervalMax: 0x0C80, maxLatency: 0x0003, supervisionTimeout: 0x0C80, minCELength: 0x0001,
            maxCELength: 0x0002)
        #expect(packet(all) == hex("01 0d20 19 1000 0800 01 02 f5f4f3f2f1f0 00 0600 800c 0300 800c 0100 0200"))
        let fromReport = HCILECreateConnection(peer: DeviceAddress(type: .randomDevice, address: peer))
        #expect(packet(fromReport) == hex("01 0d20 19 6000 6000 00 01 f5f4f3f2f1f0 00 1800 2800 0000 f401 0000 0000"))
    }

    @Test func zephyrTxPowerCommands() {
        #expect(packet(ZephyrWriteTxPower(handleType: .advertising, txPowerLevel: -8)) == hex("01 0efc 04 00 0000 f8"))
        #expect(packet(ZephyrWriteTxPower(handleType: .connection, handle: 0x0102, txPowerLevel: 4)) == hex("01 0efc 04 02 0201 04"))
        #expect(packet(ZephyrReadTxPower(handleType: .scanning)) == hex("01 0ffc 03 01 0000"))
    }

    @Test func parameterLengthMatchesWrittenBytes() {
        #expect(HCILECreateConnection(peer: DeviceAddress(type: .publicDevice, address: peer)).parameterLength == 25)
        #expect(HCILESetAdvertisingData(data: FixedBytes()).parameterLength == 32)
        #expect(HCIReset().parameterLength == 0)
    }
}

@Suite struct HCIReturnParameterTests {
    @Test func localVersionFromCapture() throws {
        let v = try complete("0e0c 01 0110 00 09 0000 09 ffff 0000", as: HCIReadLocalVersionInformation.self)
        #expect(v == HCILocalVersionInformation(hciVersion: 9, hciRevision: 0, lmpVersion: 9, manufacturer: 0xFFFF, lmpSubversion: 0))
        let nordic = try returnParameters("0d 3412 0d 5900 7856", as: HCIReadLocalVersionInformation.self)
        #expect(nordic.hciRevision == 0x1234 && nordic.manufacturer == 0x0059 && nordic.lmpSubversion == 0x5678)
        #expect(throws: DecodeError.truncated(needed: 8, available: 7)) {
            _ = try returnParameters("0d 3412 0d 5900 78", as: HCIReadLocalVersionInformation.self)
        }
        #expect(throws: DecodeError.trailingBytes(count: 1)) {
            _ = try returnParameters("0d 3412 0d 5900 7856 00", as: HCIReadLocalVersionInformation.self)
        }
    }

    @Test func supportedCommandsFromCapture() throws {
        let c = try complete(
            "0e44 01 0210 00 2000800300c000000000e4000000a822000000000000040000f7ffff7f00000030f0f9ff01008004002000000000000000000000000000000000000000000000",
            as: HCIReadLocalSupportedCommands.self)
        #expect(c.supports(octet: 0, bit: 5))  // Disconnect
        #expect(!c.supports(octet: 0, bit: 4))
        #expect(c.supports(octet: 5, bit: 6) && c.supports(octet: 5, bit: 7))  // Set Event Mask, Reset
        #expect(c.leRand && c.leEncrypt && c.leReadBufferSizeV2 && c.leSetDataLength && c.leReadMaximumDataLength)
        #expect(!c.supports(octet: 64, bit: 0) && !c.supports(octet: 0, bit: 8) && !c.supports(octet: -1, bit: 0))
        #expect(throws: DecodeError.badLength(field: "Supported_Commands", declared: 63, limit: 64)) {
            _ = try returnParameters(String(repeating: "00", count: 63), as: HCIReadLocalSupportedCommands.self)
        }
    }

    @Test func lmpFeaturesFromCapture() throws {
        let f = try complete("0e0c 01 0310 00 0000000060000080", as: HCIReadLocalSupportedFeatures.self)
        #expect(f.rawValue == 0x8000_0060_0000_0000)
        #expect(f.leSupported && f.brEDRNotSupported)
        #expect(f.contains(bit: 63) && !f.contains(bit: 0) && !f.contains(bit: 64))
    }

    @Test func bufferSizesFromCapture() throws {
        let b = try complete("0e0b 01 0510 00 1b00 00 4000 0000", as: HCIReadBufferSize.self)
        #expect(b.aclDataPacketLength == 27 && b.syncDataPacketLength == 0)
        #expect(b.totalNumACLDataPackets == 64 && b.totalNumSyncDataPackets == 0)
        let v2 = try complete("0e0a 01 6020 00 1b00 40 c003 40", as: HCILEReadBufferSizeV2.self)
        #expect(v2.leACLDataPacketLength == 27 && v2.totalNumLEACLDataPackets == 64)
        #expect(v2.isoDataPacketLength == 960 && v2.totalNumISODataPackets == 64)
        let v1 = try returnParameters("fb00 0a", as: HCILEReadBufferSize.self)
        #expect(v1.leACLDataPacketLength == 251 && v1.totalNumLEACLDataPackets == 10)
        #expect(throws: DecodeError.trailingBytes(count: 3)) {
            _ = try returnParameters("1b00 40 c003 40", as: HCILEReadBufferSize.self)
        }
    }

    @Test func leFeaturesFromCaptureAndNames() throws {
        let f = try complete("0e0c 01 0320 00 ff79010000000000", as: HCILEReadLocalSupportedFeatures.self)
        #expect(f.rawValue == 0x0001_79FF)
        #expect(f.encryption && f.dataPacketLengthExtension && f.llPrivacy && f.le2MPHY && f.extendedAdvertising)
        #expect(!f.contains(bit: 9) && f.contains(bit: 11) && f.contains(bit: 16) && !f.contains(bit: 17))
        var seen: [Int] = []
        var names: [String] = []
        f.forEachSupported { bit, name in
            seen.append(bit)
            if let name { names.append(name.description) }
        }
        #expect(seen == [0, 1, 2, 3, 4, 5, 6, 7, 8, 11, 12, 13, 14, 16])
        #expect(names.count == seen.count)
        #expect(names[5] == "LE Data Packet Length Extension")
        #expect(LEFeatures.name(ofBit: 12)?.description == "LE Extended Advertising")
        #expect(LEFeatures.name(ofBit: 42) == nil && LEFeatures.name(ofBit: 64) == nil)
    }

    @Test func dataLengthAndAddress() throws {
        let s = try complete("0e08 01 2320 00 1b00 4801", as: HCILEReadSuggestedDefaultDataLength.self)  // capture
        #expect(s.suggestedMaxTxOctets == 27 && s.suggestedMaxTxTime == 328)
        let m = try returnParameters("fb00 4808 fb00 4808", as: HCILEReadMaximumDataLength.self)
        #expect(m.supportedMaxTxOctets == 251 && m.supportedMaxTxTime == 2120)
        #expect(m.supportedMaxRxOctets == 251 && m.supportedMaxRxTime == 2120)
        let d = try returnParameters("0200", as: HCILESetDataLength.self)
        #expect(d.handle == 2)
        let a = try complete("0e0a 01 0910 00 000000000000", as: HCIReadBDADDR.self)  // capture: Bumble's zero address
        #expect(a.isZero)
        let b = try returnParameters("665544332211", as: HCIReadBDADDR.self)
        #expect(b == BDAddress(displayOrder: 0x11, 0x22, 0x33, 0x44, 0x55, 0x66))
        #expect(throws: DecodeError.truncated(needed: 6, available: 5)) { _ = try returnParameters("6655443322", as: HCIReadBDADDR.self) }
    }

    @Test func rssiRandAndEncrypt() throws {
        let r = try returnParameters("0100 d6", as: HCIReadRSSI.self)
        #expect(r.handle == 1 && r.rssi == -42)
        let n = try returnParameters("0807060504030201", as: HCILERand.self)
        #expect(n == 0x0102_0304_0506_0708)
        #expect(throws: DecodeError.trailingBytes(count: 1)) { _ = try returnParameters("080706050403020100", as: HCILERand.self) }
        let e = try returnParameters("00112233445566778899aabbccddeeff", as: HCILEEncrypt.self)
        #expect(e.encryptedData[0] == 0x00 && e.encryptedData[15] == 0xFF && e.encryptedData[7] == 0x77)
        #expect(throws: DecodeError.badLength(field: "Encrypted_Data", declared: 15, limit: 16)) {
            _ = try returnParameters("00112233445566778899aabbccddee", as: HCILEEncrypt.self)
        }
    }

    @Test func commandCompleteErrors() throws {
        // Failure status: the return parameters are not parsed.
        #expect(throws: HCICommandError.failed(.unknownCommand)) {
            _ = try complete("0e04 01 01fc 01", as: ZephyrReadVersionInformation.self)
        }
        // Another command's completion (capture: LE Set Extended Advertising Parameters).
        #expect(throws: HCICommandError.wrongOpcode) {
            _ = try complete("0e05 01 3620 00 00", as: HCILESetAdvertisingParameters.self)
        }
        #expect(throws: HCICommandError.malformed(.trailingBytes(count: 2))) {
            _ = try complete("0e09 01 0220 00 1b00 40 c003", as: HCILEReadBufferSize.self)
        }
        #expect(throws: HCICommandError.wrongOpcode) { _ = try complete("0e03 01 0000", as: HCIReset.self) }
        // Plain success with no return parameters (capture: Reset).
        let ok = try complete("0e04 01 030c 00", as: HCIReset.self)
        #expect(ok == HCINoReturnParameters())
    }
}

@Suite struct ZephyrVendorCommandTests {
    @Test func versionInformation() throws {
        let v = try returnParameters("0200 0200 01 03 0400 78563412", as: ZephyrReadVersionInformation.self)
        #expect(v.hardwarePlatform == ZephyrReadVersionInformation.ReturnParameters.nordicPlatform)
        #expect(v.hardwareVariant == ZephyrReadVersionInformation.ReturnParameters.nrf52Variant)
        #expect(v.firmwareVariant == 1 && v.firmwareVersion == 3 && v.firmwareRevision == 4 && v.firmwareBuild == 0x1234_5678)
        // Another vendor's 0xFC01 reply of a different size must not be misread.
        #expect(throws: DecodeError.badLength(field: "Zephyr version information", declared: 13, limit: 12)) {
            _ = try returnParameters("0200 0200 01 03 0400 78563412 00", as: ZephyrReadVersionInformation.self)
        }
        #expect(throws: DecodeError.badLength(field: "Zephyr version information", declared: 4, limit: 12)) {
            _ = try returnParameters("01020304", as: ZephyrReadVersionInformation.self)
        }
    }

    @Test func supportedCommands() throws {
        // Version, supported commands, supported features, event mask, reset, write BD_ADDR, build info;
        // static addresses, key roots; write and read Tx power.
        let c = try returnParameters("bf 63" + String(repeating: "00", count: 62), as: ZephyrReadSupportedCommands.self)
        #expect(c.readVersionInformation && c.readSupportedCommands && c.writeBDADDR)
        #expect(c.readStaticAddresses && c.writeTxPower && c.readTxPower)
        #expect(!c.supports(octet: 0, bit: 6) && c.supports(octet: 0, bit: 7))
        let none = try returnParameters(String(repeating: "00", count: 64), as: ZephyrReadSupportedCommands.self)
        #expect(!none.readStaticAddresses && !none.writeBDADDR)
        #expect(throws: DecodeError.badLength(field: "Zephyr supported commands", declared: 8, limit: 64)) {
            _ = try returnParameters("ff00000000000000", as: ZephyrReadSupportedCommands.self)
        }
    }

    @Test func staticAddresses() throws {
        let ir = "000102030405060708090a0b0c0d0e0f"
        let one = try returnParameters("01 2211ffeeddcc" + ir, as: ZephyrReadStaticAddresses.self)
        #expect(one.count == 1 && one.storedCount == 1)
        let first = try #require(one.first)
        #expect(first.address == BDAddress(displayOrder: 0xCC, 0xDD, 0xEE, 0xFF, 0x11, 0x22))
        #expect(first.address.randomSubtype == .staticAddress)
        #expect(first.identityRoot[0] == 0x00 && first.identityRoot[15] == 0x0F)
        let two = try returnParameters("02 2211ffeeddcc" + ir + "0102030405c6" + ir, as: ZephyrReadStaticAddresses.self)
        #expect(two.count == 2 && two[1].address.bytes[5] == 0xC6)
        let zero = try returnParameters("00", as: ZephyrReadStaticAddresses.self)
        #expect(zero.count == 0 && zero.first == nil)
        // The count must agree with the length exactly.
        #expect(throws: DecodeError.badLength(field: "Zephyr static addresses", declared: 23, limit: 45)) {
            _ = try returnParameters("02 2211ffeeddcc" + ir, as: ZephyrReadStaticAddresses.self)
        }
        #expect(throws: DecodeError.badLength(field: "Zephyr static addresses", declared: 24, limit: 23)) {
            _ = try returnParameters("01 2211ffeeddcc" + ir + "00", as: ZephyrReadStaticAddresses.self)
        }
        #expect(throws: DecodeError.truncated(needed: 1, available: 0)) { _ = try returnParameters("", as: ZephyrReadStaticAddresses.self) }
    }

    /// Bring-up's reader of the first address alone agrees with the whole parser, errors included.
    @Test func staticAddressesFirstOnly() throws {
        typealias R = ZephyrReadStaticAddresses.ReturnParameters
        let ir = "000102030405060708090a0b0c0d0e0f"
        for valid in ["01 2211ffeeddcc" + ir, "02 2211ffeeddcc" + ir + "0102030405c6" + ir, "00"] {
            let bytes = hex(valid)
            #expect(try R.firstAddress(parsing: bytes.span) == R(parsing: bytes.span).first?.address)
        }
        #expect(try R.firstAddress(parsing: hex("01 2211ffeeddcc" + ir).span) == BDAddress(displayOrder: 0xCC, 0xDD, 0xEE, 0xFF, 0x11, 0x22))
        #expect(throws: DecodeError.badLength(field: "Zephyr static addresses", declared: 23, limit: 45)) {
            _ = try R.firstAddress(parsing: hex("02 2211ffeeddcc" + ir).span)
        }
        #expect(throws: DecodeError.badLength(field: "Zephyr static addresses", declared: 24, limit: 23)) {
            _ = try R.firstAddress(parsing: hex("01 2211ffeeddcc" + ir + "00").span)
        }
        #expect(throws: DecodeError.truncated(needed: 1, available: 0)) { _ = try R.firstAddress(parsing: hex("").span) }
    }

    @Test func txPower() throws {
        let w = try complete("0e08 01 0efc 00 00 0000 fc", as: ZephyrWriteTxPower.self)
        #expect(w.handleType == .advertising && w.handle == 0 && w.txPowerLevel == -4)
        let r = try returnParameters("02 0300 08", as: ZephyrReadTxPower.self)
        #expect(r.handleType == .connection && r.handle == 3 && r.txPowerLevel == 8)
        #expect(throws: DecodeError.invalidValue(field: "Zephyr Tx power handle type", value: 7)) {
            _ = try returnParameters("07 0300 08", as: ZephyrReadTxPower.self)
        }
        #expect(throws: DecodeError.badLength(field: "Zephyr Tx power", declared: 5, limit: 4)) {
            _ = try returnParameters("02 0300 08 00", as: ZephyrReadTxPower.self)
        }
    }
}
