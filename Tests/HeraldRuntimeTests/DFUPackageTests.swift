import Foundation
import Testing
@testable import HeraldRuntime

/// Fixtures copied from ../shared/fixtures/dfu (see its README): nrfutil 6.1.7's package and its hex.
enum DFUFixtures {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/dfu")
    static func bytes(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: directory.appendingPathComponent(name)))
    }
    static func text(_ name: String) throws -> String {
        try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
    }
    static var zipPath: String { directory.appendingPathComponent("app.zip").path }
    static var hexPath: String { directory.appendingPathComponent("app.hex").path }
    /// From the fixture README.
    static let imageSHA256 = "24f4fbcd095420e2c729a5f0f6d8d5bbec739246ebba544b7106d6913151dcdd"
}

private func hex(_ b: [UInt8]) -> String { b.map { String(format: "%02x", $0) }.joined() }

@Suite struct DFUChecksumTests {
    @Test func sha256KnownVectors() {
        #expect(hex(DFUSHA256.hash([UInt8]())) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(hex(DFUSHA256.hash(Array("abc".utf8))) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        // Two-block message (FIPS 180-2 appendix B.2).
        #expect(hex(DFUSHA256.hash(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }

    @Test func sha256IncrementalMatchesOneShot() {
        let data = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        var s = DFUSHA256()
        s.update(data[0..<63]); s.update(data[63..<64]); s.update(data[64..<700]); s.update(data[700...])
        #expect(s.finalize() == DFUSHA256.hash(data))
    }

    @Test func crc32MatchesZlibVectorAndChains() {
        #expect(DFUCRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
        let a = Array("hello ".utf8), b = Array("world".utf8)
        #expect(DFUCRC32.checksum(b, crc: DFUCRC32.checksum(a)) == DFUCRC32.checksum(a + b))
    }
}

@Suite struct DFUSLIPTests {
    @Test func encodeEscapesEndAndEscape() {
        #expect(SLIP.encode([0x01, 0xC0, 0xDB, 0x02]) == [0x01, 0xDB, 0xDC, 0xDB, 0xDD, 0x02, 0xC0])
    }

    @Test func decoderRoundTripsAcrossArbitrarySplits() {
        let packets: [[UInt8]] = [[0x60, 0x09, 0x01, 0xC0], [0xDB, 0xDB], Array(0...255)]
        let wire = packets.flatMap(SLIP.encode)
        var d = SLIPDecoder()
        var got: [[UInt8]] = []
        var i = 0
        while i < wire.count {
            let n = min(7, wire.count - i)
            got += d.feed(wire[i..<(i + n)])
            i += n
        }
        #expect(got == packets)
    }

    @Test func decoderDropsBadEscapeAndRecovers() {
        var d = SLIPDecoder()
        var errors: [SLIPDecoder.Failure] = []
        let got = d.feed([0x01, 0xDB, 0x55, 0x02, 0xC0, 0x03, 0xC0], errors: &errors)
        #expect(got == [[0x03]])
        #expect(errors == [.invalidEscape(0x55)])
    }

    @Test func decoderLimitsFrameLength() {
        var d = SLIPDecoder(maxFrame: 4)
        var errors: [SLIPDecoder.Failure] = []
        let got = d.feed([1, 2, 3, 4, 5, 6, 0xC0, 9, 0xC0], errors: &errors)
        #expect(got == [[9]])
        #expect(errors == [.frameTooLong(5)])
    }

    @Test func mtuIsTheEncodedSize() {
        // nRF5 SDK: UART MTU 131 = 2 * (64 + 1) + 1, USB MTU 2051 = 2 * (1024 + 1) + 1.
        #expect(SLIP.maxPacketSize(forEncodedMTU: 131) == 65)
        #expect(SLIP.maxPacketSize(forEncodedMTU: 2051) == 1025)
    }
}

@Suite struct DFUPackageTests {
    @Test func zipReaderReadsNrfutilPackage() throws {
        let zip = try ZipArchive(bytes: try DFUFixtures.bytes("app.zip"))
        #expect(zip.entries.map(\.name).sorted() == ["app.bin", "app.dat", "manifest.json"])
        let bin = try zip.read("app.bin")
        #expect(bin.count == 23456)
        #expect(hex(DFUSHA256.hash(bin)) == DFUFixtures.imageSHA256)
    }

    @Test func zipReaderRejectsGarbageAndTruncation() throws {
        #expect(throws: ZipArchive.Failure.notAZip) { try ZipArchive(bytes: Array(repeating: 0x41, count: 100)) }
        let zip = try DFUFixtures.bytes("app.zip")
        // Cutting the file loses the end-of-central-directory record.
        #expect(throws: ZipArchive.Failure.notAZip) { try ZipArchive(bytes: Array(zip[0..<1000])) }
        // Corrupting a stored byte is caught by the entry CRC.
        let archive = try ZipArchive(bytes: zip)
        let entry = try #require(archive.entry(named: "app.bin"))
        var bad = zip
        bad[entry.localHeaderOffset + 30 + "app.bin".utf8.count + 100] ^= 0xFF
        #expect(throws: ZipArchive.Failure.corrupt("CRC-32 mismatch in app.bin")) { try ZipArchive(bytes: bad).read("app.bin") }
        #expect(throws: ZipArchive.Failure.missing("nope")) { try archive.read("nope") }
    }

    @Test func zipReaderInflatesDeflatedEntries() throws {
        // A deflated ZIP made by Python's zipfile (method 8), so the inflate path is exercised.
        let tmp = FileManager.default.temporaryDirectory.appendingPathComponent("dfu-deflate-\(getpid()).zip")
        let fixture = DFUFixtures.zipPath
        let script = """
        import zipfile,sys
        src=zipfile.ZipFile(sys.argv[1]); dst=zipfile.ZipFile(sys.argv[2],'w',zipfile.ZIP_DEFLATED)
        [dst.writestr(i.filename, src.read(i.filename)) for i in src.infolist()]; dst.close()
        """
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["python3", "-c", script, fixture, tmp.path]
        try p.run(); p.waitUntilExit()
        try #require(p.terminationStatus == 0)
        defer { try? FileManager.default.removeItem(at: tmp) }
        let deflated = try DFUPackage(zip: [UInt8](try Data(contentsOf: tmp)))
        let stored = try DFUFlasher.loadPackage(zipPath: fixture)
        #expect(try ZipArchive(bytes: [UInt8](try Data(contentsOf: tmp))).entry(named: "app.bin")?.method == 8)
        #expect(deflated.firmware == stored.firmware)
        #expect(deflated.initPacket == stored.initPacket)
    }

    @Test func intelHexMatchesPackageImage() throws {
        let image = try IntelHexImage(text: try DFUFixtures.text("app.hex"))
        let pkg = try DFUFlasher.loadPackage(zipPath: DFUFixtures.zipPath)
        #expect(image.startAddress == 0x1000)
        #expect(image.bytes == pkg.firmware)
    }

    @Test func intelHexHandlesExtendedAddressAndGaps() throws {
        // 0x00010000 + 0x0000: 2 bytes, then 0x00010004: 1 byte → gap of two 0xFF.
        let text = ":020000040001F9\n:02000000AABB99\n:01000400CC2F\n:00000001FF\n"
        let image = try IntelHexImage(text: text)
        #expect(image.startAddress == 0x10000)
        #expect(image.bytes == [0xAA, 0xBB, 0xFF, 0xFF, 0xCC])
    }

    @Test func intelHexErrorsAreNamed() {
        #expect(throws: IntelHexImage.Failure.checksum(line: 1)) { try IntelHexImage(text: ":02000000AABB98\n:00000001FF\n") }
        #expect(throws: IntelHexImage.Failure.noEndRecord) { try IntelHexImage(text: ":02000000AABB99\n") }
        #expect(throws: IntelHexImage.Failure.badRecord(line: 1, why: "does not start with ':'")) { try IntelHexImage(text: "02000000AABB99\n") }
        #expect(throws: IntelHexImage.Failure.overlap(address: 0)) {
            try IntelHexImage(text: ":02000000AABB99\n:01000000CC33\n:00000001FF\n")
        }
    }

    @Test func fixtureInitPacketDecodesToNrfutilFields() throws {
        let pkg = try DFUFlasher.loadPackage(zipPath: DFUFixtures.zipPath)
        let ip = try DFUInitPacket(decoding: pkg.initPacket)
        #expect(ip.fwVersion == 1)
        #expect(ip.hwVersion == 52)
        #expect(ip.sdReq == [0x00])
        #expect(ip.type == .application)
        #expect(ip.sdSize == 0 && ip.blSize == 0)
        #expect(ip.appSize == 23456)
        #expect(ip.hashType == .sha256)
        #expect(ip.sha256Digest.map(hex) == DFUFixtures.imageSHA256)
        #expect(ip.isDebug == false)
        #expect(ip.bootValidation == [.init(type: .generatedCRC, bytes: [])])
        #expect(ip.isSigned == false)
        // Re-encoding what we decoded gives nrfutil's bytes back.
        #expect(ip.encoded() == pkg.initPacket)
    }

    @Test func hexBuildsTheSameInitPacketAsNrfutil() throws {
        let fromZip = try DFUFlasher.loadPackage(zipPath: DFUFixtures.zipPath)
        let fromHex = try DFUFlasher.loadPackage(hexPath: DFUFixtures.hexPath, fwVersion: 1, hwVersion: 52, sdReq: [0x00])
        let a = try DFUInitPacket(decoding: fromZip.initPacket), b = try DFUInitPacket(decoding: fromHex.initPacket)
        // Field by field first, so a difference names itself …
        #expect(b.fwVersion == a.fwVersion)
        #expect(b.hwVersion == a.hwVersion)
        #expect(b.sdReq == a.sdReq)
        #expect(b.type == a.type)
        #expect(b.appSize == a.appSize)
        #expect(b.hashType == a.hashType)
        #expect(b.hash == a.hash)
        #expect(b.isDebug == a.isDebug)
        #expect(b.bootValidation == a.bootValidation)
        // … then byte for byte.
        #expect(fromHex.initPacket == fromZip.initPacket)
        #expect(fromHex.firmware == fromZip.firmware)
    }

    @Test func hexOptionsChangeTheInitPacket() throws {
        let p = try DFUFlasher.loadPackage(hexPath: DFUFixtures.hexPath, fwVersion: 7, hwVersion: 53, sdReq: [0x00, 0x0100])
        let ip = try DFUInitPacket(decoding: p.initPacket)
        #expect(ip.fwVersion == 7 && ip.hwVersion == 53 && ip.sdReq == [0x00, 0x100])
    }

    @Test func hexAtWrongAddressIsRefused() throws {
        let text = ":020000000102FB\n:00000001FF\n" // data at 0x0000: a bare-metal build that would hit the MBR
        #expect(throws: DFUError.self) { try DFUPackage(hex: text) }
        do throws(DFUError) { _ = try DFUPackage(hex: text) } catch { #expect(error.description.contains("starts at 0x0")) }
    }

    @Test func inconsistentPackageIsRefused() throws {
        let good = try DFUFlasher.loadPackage(zipPath: DFUFixtures.zipPath)
        var shorter = good
        shorter.firmware.removeLast()
        #expect(throws: DFUError.badPackage("init packet says app_size 23456, image is 23455 bytes")) { try shorter.validate() }
        var altered = good
        altered.firmware[0] ^= 1
        #expect(throws: DFUError.badPackage("init packet SHA-256 does not match the image")) { try altered.validate() }
    }

    @Test func malformedInitPacketIsATypedError() {
        #expect(throws: DFUInitPacket.Failure.self) { try DFUInitPacket(decoding: [0x0A, 0x40, 0x08]) }
        #expect(throws: DFUInitPacket.Failure.notAnInitCommand) { try DFUInitPacket(decoding: []) }
        #expect(throws: DFUInitPacket.Failure.self) { try DFUInitPacket(decoding: [0x0A, 0x02, 0x08, 0xFF]) }
    }
}
