import Foundation
import Testing
@testable import HeraldRuntime

/// Inputs the file-reader fuzz targets (Fuzz/DFUPackage.swift, Fuzz/DFUInitPacket.swift) found, kept
/// as tests; the inputs themselves are in Fuzz/Corpus/<target>/regression-*.
@Suite struct FuzzRegressionFileReaderTests {
    /// The fixture package with the uncompressed size of its central directory entry `name` set to `size`.
    func declaring(_ size: UInt32, for name: String, in source: [UInt8]? = nil) throws -> [UInt8] {
        var bytes = try source ?? DFUFixtures.bytes("app.zip")
        var at = 0
        while at + 46 <= bytes.count {
            if bytes[at] == 0x50, bytes[at + 1] == 0x4B, bytes[at + 2] == 0x01, bytes[at + 3] == 0x02 {
                let nameLength = Int(bytes[at + 28]) | Int(bytes[at + 29]) << 8
                if String(decoding: bytes[(at + 46)..<(at + 46 + nameLength)], as: UTF8.self) == name {
                    for k in 0..<4 { bytes[at + 24 + k] = UInt8(truncatingIfNeeded: size >> (8 * UInt32(k))) }
                    return bytes
                }
            }
            at += 1
        }
        Issue.record("no entry \(name) in the fixture")
        return bytes
    }

    /// Finding: a 667-byte package whose manifest.json declared 33,554,529 bytes made the reader
    /// allocate and zero 32 MB and take 14 s (under the fuzzer) to say the stream was damaged; 4 GB
    /// would have been asked for as readily. Sizes past a DFU image's, or past what DEFLATE can
    /// expand the stored bytes to, are refused before anything is allocated.
    @Test(arguments: [UInt32(33_554_529), 0xFFFF_FFF0])
    func aDeclaredSizeNoImageCanHaveIsRefusedUpFront(size: UInt32) throws {
        let zip = try ZipArchive(bytes: try declaring(size, for: "manifest.json"))
        #expect(throws: ZipArchive.Failure.corrupt("manifest.json declares \(size) bytes, more than a DFU image can be (16 MB)")) {
            try zip.read("manifest.json")
        }
    }

    @Test func aDeflatedEntryCannotDeclareMoreThanDeflateCanExpandTo() throws {
        // nrfutil's fixture stores its entries; Fuzz/make_file_seeds.py's deflated seed deflates them.
        let seed = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fuzz/Corpus/DFUPackage/seed-deflated")
        let bytes = try declaring(1_000_000, for: "app.dat", in: [UInt8](try Data(contentsOf: seed)))
        let zip = try ZipArchive(bytes: bytes)
        let entry = try #require(zip.entry(named: "app.dat"))
        try #require(entry.method == 8)
        #expect(throws: ZipArchive.Failure.corrupt("app.dat declares 1000000 bytes, more than its \(entry.compressedSize) compressed bytes can hold")) {
            try zip.read(entry)
        }
        #expect(throws: DFUError.self) { try DFUPackage(zip: bytes) }
    }

    /// Finding: an init packet whose hash message held a digest but no hash type re-encoded without
    /// the digest. The encoder now writes whatever the decoder read.
    @Test func aHashWithoutItsTypeSurvivesReEncoding() throws {
        let input: [UInt8] = [
            0x0a, 0x43, 0x08, 0x01, 0x12, 0x3f, 0x08, 0x01, 0x28, 0x34, 0x1a, 0x00, 0x45, 0x20, 0x00, 0x28,
            0x00, 0x30, 0x00, 0x38, 0xa0, 0xb7, 0x01, 0x42, 0x24, 0x30, 0x03, 0x12, 0x20, 0xdd, 0xdc, 0x51,
            0x31, 0x91, 0xd6, 0x06, 0x71, 0x4b, 0x54, 0xba, 0xeb, 0x46, 0x92, 0x73, 0xec, 0xbb, 0xd5, 0xd8,
            0xf6, 0xf0, 0xa5, 0x29, 0x0c, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x24, 0x48, 0x00, 0x52,
            0x04, 0x08, 0x01, 0x12, 0x00,
        ]
        let decoded = try DFUInitPacket(decoding: input)
        #expect(decoded.hashType == nil && decoded.hash.count == 32)
        #expect(try DFUInitPacket(decoding: decoded.encoded()) == decoded)
    }
}

/// A file with no usable line is refused, one with some damaged lines read (MalformedFile).
@Suite struct MalformedFileTests {
    func directory(_ files: [String: String]) throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("malformed-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        for (name, text) in files { try text.write(toFile: dir + "/" + name, atomically: true, encoding: .utf8) }
        return dir
    }

    let header = "time,sensor,id,detect,read,measure,share,visit,detectHerald,delete,data\n"
    let row = "2026-11-21 10:00:00.000+0000,BLE,T1,,,3,,,,,RSSI:-40.0\n"

    @Test func aContactsLogWithNoUsableLineIsRefusedNamingItsFirstProblem() throws {
        let dir = try directory(["detection.csv": "a,Linux,6.1,AADsmp\n", "contacts.csv": header + "garbage\nmore,garbage\n"])
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(throws: AnalysisError.self) { try DeviceLogReader.load(dir) }
        do { _ = try DeviceLogReader.load(dir) } catch {
            #expect(error.description == "\(dir)/contacts.csv: not a Herald contacts log (line 2: expected 11 columns, found 1; 2 malformed lines)")
        }
    }

    @Test func aDamagedLastLineIsSkippedAndTheRestRead() throws {
        let dir = try directory(["detection.csv": "a,Linux,6.1,AADsmp\n", "contacts.csv": header + row + row + "2026-11-21 10:0"])
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (log, bad) = try DeviceLogReader.load(dir)
        #expect(log.rows == 2)
        #expect(bad.map(\.description) == ["\(dir)/contacts.csv:4: expected 11 columns, found 1"])
    }

    @Test func aHeaderOnlyOrEmptyLogIsNotMalformed() throws {
        let dir = try directory(["detection.csv": "\n", "contacts.csv": header])
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (log, _) = try DeviceLogReader.load(dir)
        #expect(log.rows == 0)
    }

    @Test func aGarbageDetectionLogIsRefused() throws {
        let dir = try directory(["detection.csv": "\u{1}\u{2}binary\n", "contacts.csv": header + row])
        defer { try? FileManager.default.removeItem(atPath: dir) }
        do {
            _ = try DeviceLogReader.load(dir)
            Issue.record("a detection.csv of one unusable line was accepted")
        } catch {
            #expect(error.description.hasPrefix("\(dir)/detection.csv: not a Herald detection log (line 1: expected name,OS,version,shortName"))
        }
    }
}
