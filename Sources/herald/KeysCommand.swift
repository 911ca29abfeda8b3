import ArgumentParser
import Foundation
import Herald
import HeraldRuntime

/// `herald keys …`: the Simple payload secret key, derivation and export of matching keys.
struct KeysCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys",
        abstract: "Create a secret key, derive keys and payloads, export matching keys.",
        subcommands: [KeysNewCommand.self, KeysDeriveCommand.self, KeysExportCommand.self]
    )
}

struct KeysNewCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "new",
        abstract: "Create a 2048-byte secret key (and its 16-byte IRK in FILE.irk), mode 0600, from /dev/urandom."
    )
    @Option(name: .long, help: "Where to write the secret key; must not exist.") var out: String

    func run() throws {
        try SecretKeyFile.create(at: out)
        print("wrote \(out) (secret key, 2048 bytes) and \(SecretKeyFile.irkPath(for: out)) (IRK, 16 bytes), mode 0600")
    }
}

struct KeysDeriveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "derive",
        abstract: "Print one period's keys (Base64) and Simple payload (hex)."
    )
    @Option(name: .long, help: "Secret key file (mode 0600).") var secretKeyFile: String
    @Option(name: .long, help: "ISO 8601 time; chooses day and period.") var time: String?
    @Option(name: .long, parsing: .unconditional, help: "Day since the epoch (with --period).") var day: Int?
    @Option(name: .long, parsing: .unconditional, help: "Period of the day, 0...240 (with --day).") var period: Int?
    @Option(name: .long, help: "Key schedule epoch (default 2026-01-01T00:00:00Z).") var epoch: String?
    @OptionGroup var payloadPeriod: PayloadPeriodOption
    @Option(name: .long, parsing: .unconditional, help: "Payload protocol/version byte, 16...23 (0x10...0x17).") var payloadVersion: Int = 0x10
    @Option(name: .long, parsing: .unconditional, help: "ISO 3166-1 numeric country code for the payload (as wearable --country).") var country: Int?
    @Option(name: .long, parsing: .unconditional, help: "State code for the payload (as wearable --state).") var state: Int?
    /// The old spellings, kept working.
    @Option(name: .customLong("country-code"), parsing: .unconditional, help: .hidden) var countryCodeAlias: Int?
    @Option(name: .customLong("state-code"), parsing: .unconditional, help: .hidden) var stateCodeAlias: Int?
    var countryCode: Int { country ?? countryCodeAlias ?? 0 }
    var stateCode: Int { state ?? stateCodeAlias ?? 0 }
    @Flag(name: .long, help: "Write country/state little-endian, as the reference apps do.") var littleEndianCodes = false
    @Flag(name: .long, help: "Print JSON.") var json = false

    func validate() throws {
        if (time == nil) == (day == nil) { throw ValidationError("give either --time or --day with --period") }
        if day != nil && period == nil { throw ValidationError("--day needs --period") }
        if time != nil && period != nil { throw ValidationError("--period goes with --day, not --time") }
        guard (0x10...0x17).contains(payloadVersion) else { throw ValidationError("--payload-version must be 16...23") }
        guard (0...0xFFFF).contains(countryCode), (0...0xFFFF).contains(stateCode) else {
            throw ValidationError("country and state codes are 16-bit")
        }
    }

    func run() throws {
        do { // KeyToolError prints as "Error: <sentence>", exit status 1
            let e = try payloadPeriod.epoch(epoch)
            var d = day ?? 0, p = period ?? 0
            if let time {
                let t = try KeyTools.parseTime(time)
                guard let dd = e.day(at: t), let pp = e.period(at: t) else {
                    throw KeyToolError("\(time) is before the epoch \(KeyTools.iso8601(e.unixSeconds))")
                }
                d = dd; p = pp
            }
            if let warning = try KeyTools.checkHorizon(day: d, epoch: e) { FileHandle.standardError.write(Data((warning + "\n").utf8)) }
            let secret = try SecretKeyFile.loadSecretKey(secretKeyFile)
            let header = PayloadHeader(protocolAndVersion: UInt8(payloadVersion), countryCode: UInt16(countryCode), stateCode: UInt16(stateCode))
            let r = try KeyTools.derive(secretKey: secret, day: d, period: p, header: header,
                                        order: littleEndianCodes ? .littleEndian : .bigEndian)
            if json {
                let enc = JSONEncoder()
                enc.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
                print(String(decoding: try enc.encode(r), as: UTF8.self))
            } else {
                print("day,period,matchingKeySeed,matchingKey,contactKeySeed,contactKey,contactIdentifier,payload")
                print("\(r.day),\(r.period),\(r.matchingKeySeed),\(r.matchingKey),\(r.contactKeySeed),\(r.contactKey),\(r.contactIdentifier),\(r.payload)")
            }
        }
    }
}

struct KeysExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Print day,date,matchingKey for every day from --from to --to (CSV)."
    )
    @Option(name: .long, help: "Secret key file (mode 0600).") var secretKeyFile: String
    @Option(name: .long, help: "First date (ISO 8601 date or time).") var from: String
    @Option(name: .long, help: "Last date (ISO 8601 date or time).") var to: String
    @Option(name: .long, help: "Key schedule epoch (default 2026-01-01T00:00:00Z).") var epoch: String?
    @OptionGroup var payloadPeriod: PayloadPeriodOption

    func run() throws {
        do { // KeyToolError prints as "Error: <sentence>", exit status 1
            let e = try payloadPeriod.epoch(epoch)
            let fromTime = try KeyTools.parseTime(from), toTime = try KeyTools.parseTime(to)
            let secret = try SecretKeyFile.loadSecretKey(secretKeyFile)
            let (csv, warning) = try KeyTools.exportMatchingKeys(secretKey: secret, epoch: e, from: fromTime, to: toTime)
            if let warning { FileHandle.standardError.write(Data((warning + "\n").utf8)) }
            print(csv, terminator: "")
        }
    }
}
