import Testing
import Foundation
import Herald
@testable import HeraldRuntime

func temporaryDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("herald-keys-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

func mode(_ path: String) throws -> Int {
    (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as! NSNumber).intValue
}

@Suite struct KeysTests {
    @Test func newKeyFilesAreOwnerOnlyAndRandom() throws {
        let dir = try temporaryDirectory()
        let a = dir.appendingPathComponent("a.key").path, b = dir.appendingPathComponent("b.key").path
        try SecretKeyFile.create(at: a)
        try SecretKeyFile.create(at: b)
        #expect(try mode(a) == 0o600)
        #expect(try mode(SecretKeyFile.irkPath(for: a)) == 0o600)
        let ka = try SecretKeyFile.loadSecretKey(a), kb = try SecretKeyFile.loadSecretKey(b)
        #expect(ka.count == 2048 && kb.count == 2048)
        #expect(ka != kb)
        #expect(Set(ka).count > 200) // 2048 random bytes use most byte values
        let irk = try SecretKeyFile.loadIRK(forSecretKey: a)
        #expect((0..<16).contains { irk[$0] != 0 })
        #expect(throws: KeyToolError("\(a) already exists; refusing to overwrite a key")) { try SecretKeyFile.create(at: a) }
    }

    @Test func readersRefuseFilesOthersCanRead() throws {
        let dir = try temporaryDirectory()
        let path = dir.appendingPathComponent("s.key").path
        try SecretKeyFile.create(at: path)
        chmod(path, 0o644)
        #expect(throws: KeyToolError("refusing secret key file \(path): mode 0644 lets others read it; run chmod 600 \(path)")) {
            try SecretKeyFile.loadSecretKey(path)
        }
        chmod(path, 0o604)
        #expect(throws: KeyToolError.self) { try SecretKeyFile.loadSecretKey(path) }
        chmod(path, 0o400)
        #expect(try SecretKeyFile.loadSecretKey(path).count == 2048)
        let irkPath = SecretKeyFile.irkPath(for: path)
        chmod(irkPath, 0o660)
        #expect(throws: KeyToolError.self) { try SecretKeyFile.loadIRK(forSecretKey: path) }
        // Wrong size.
        let short = dir.appendingPathComponent("short.key").path
        try SecretKeyFile.writePrivate([1, 2, 3], to: short)
        #expect(throws: KeyToolError("secret key file \(short) has 3 bytes, expected 2048")) { try SecretKeyFile.loadSecretKey(short) }
    }

    /// `keys derive` on the vectors' secret key (2048 zeros) with the reference epoch reproduces a row.
    @Test func deriveReproducesVectorRow() throws {
        let zero = [UInt8](repeating: 0, count: 2048)
        let epoch = try KeyTools.epoch("2020-09-24T00:00:00Z")
        #expect(epoch == .reference)
        let t = try KeyTools.parseTime("2020-09-27T01:42:00Z") // day 3, 6120 s = period 17
        #expect(epoch.day(at: t) == 3 && epoch.period(at: t) == 17)
        let r = try KeyTools.derive(secretKey: zero, day: 3, period: 17,
                                    header: PayloadHeader(protocolAndVersion: 0x10, countryCode: 826, stateCode: 1), order: .bigEndian)
        // contactIdentifier.csv row "3,17,…"
        #expect(r.matchingKeySeed == "sucU1xsbWDsSDHl6jCGd7kWhLnImzW6sPj4N6UXEPO4=")
        #expect(r.matchingKey == "jCSAlXe4z5epFs5FY96JgkXIKGSdN9ZrRfGyJkRNXEg=")
        #expect(r.contactKeySeed == "fumEYhmCEsuPcm2sLwmMTykqQAmvhFCRV1Gkt7/HMBA=")
        #expect(r.contactKey == "HrovHc2nqmUXNT68pFFSyBQhgQKh2jI9Tpf8Qt2Qw/c=")
        #expect(r.contactIdentifier == "HrovHc2nqmUXNT68pFFSyA==")
        #expect(r.payload == "10033a00011eba2f1dcda7aa6517353ebca45152c8")
        let le = try KeyTools.derive(secretKey: zero, day: 3, period: 17,
                                     header: PayloadHeader(protocolAndVersion: 0x10, countryCode: 826, stateCode: 1), order: .littleEndian)
        #expect(le.payload.hasPrefix("103a030100"))
        #expect(throws: KeyToolError.self) {
            try KeyTools.derive(secretKey: zero, day: 3, period: 241, header: .init(protocolAndVersion: 0x10, countryCode: 0, stateCode: 0), order: .bigEndian)
        }
    }

    @Test func horizonWarnsAndRefuses() throws {
        #expect(try KeyTools.checkHorizon(day: 1970, epoch: .standard) == nil)
        #expect(try KeyTools.checkHorizon(day: 1971, epoch: .standard)?.contains("29 day(s)") == true)
        #expect(try KeyTools.checkHorizon(day: 2000, epoch: .standard) != nil)
        #expect(throws: KeyToolError.self) { try KeyTools.checkHorizon(day: 2001, epoch: .standard) }
        #expect(throws: KeyToolError.self) { try KeyTools.checkHorizon(day: -1, epoch: .standard) }
        // The reference epoch has run out for today's dates.
        let zero = [UInt8](repeating: 0, count: 2048)
        #expect(throws: KeyToolError.self) {
            try KeyTools.exportMatchingKeys(secretKey: zero, epoch: .reference, from: try KeyTools.parseTime("2026-11-20"),
                                            to: try KeyTools.parseTime("2026-11-21"))
        }
    }

    @Test func timesWithoutAZoneAreRefusedNotReadAsMidnight() throws {
        // Once read as its date alone: period 0, whatever the time said.
        #expect(throws: KeyToolError.self) { try KeyTools.parseTime("2020-09-27T01:42:00") }
        #expect(throws: KeyToolError.self) { try KeyTools.parseTime("2020-09-27 01:42") }
        #expect(throws: KeyToolError.self) { try KeyTools.parseTime("2020-09-27junk") }
        #expect(try KeyTools.parseTime("2020-09-27T01:42:00+01:00") == (try KeyTools.parseTime("2020-09-27T00:42:00Z")))
        #expect(try KeyTools.parseTime("2020-09-27") == (try KeyTools.parseTime("2020-09-27T00:00:00Z")))
    }

    @Test func exportMatchesVectorMatchingKeys() throws {
        let zero = [UInt8](repeating: 0, count: 2048)
        let (csv, warning) = try KeyTools.exportMatchingKeys(secretKey: zero, epoch: .reference,
                                                             from: try KeyTools.parseTime("2020-09-24"),
                                                             to: try KeyTools.parseTime("2020-09-26T23:59:59Z"))
        #expect(warning == nil)
        let lines = csv.split(separator: "\n").map(String.init)
        #expect(lines.count == 4)
        #expect(lines[0] == "day,date,matchingKey")
        // matchingKey.csv day 0 and contactIdentifier.csv day 0 agree on this key.
        #expect(lines[1] == "0,2020-09-24,OPwualimIIyzduefRrbc1kao7vSSwHvezN5jRIrqS1E=")
        #expect(lines[3].hasPrefix("2,2020-09-26,"))
        let near = try KeyTools.exportMatchingKeys(secretKey: zero, epoch: .standard,
                                                   from: KeyTools.parseTime("2031-06-01"), to: KeyTools.parseTime("2031-06-02"))
        #expect(near.warning != nil) // day 1977/1978 of the 2026 epoch
    }

    @Test func timeParsing() throws {
        #expect(try KeyTools.parseTime("2026-01-01T00:00:00Z") == 1_767_225_600)
        #expect(try KeyTools.parseTime("2026-01-01T01:00:00+01:00") == 1_767_225_600)
        #expect(try KeyTools.parseTime("2026-01-01") == 1_767_225_600)
        #expect(try KeyTools.parseTime("2026-01-01T00:00:00.750Z") == 1_767_225_600)
        #expect(throws: KeyToolError.self) { try KeyTools.parseTime("yesterday") }
    }
}
