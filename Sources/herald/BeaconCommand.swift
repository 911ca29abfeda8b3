import ArgumentParser
import BluetoothHost
import Foundation
import Herald
import HeraldRuntime

struct BeaconCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "beacon",
        abstract: "Be a Herald venue beacon: advertise and serve the beacon payload (0x30) over the Herald GATT service."
    )

    @OptionGroup var controller: ControllerOptions
    @Option(name: .long, parsing: .unconditional, help: "ISO 3166-1 numeric country code.") var country: Int
    @Option(name: .long, parsing: .unconditional, help: "State code.") var state: Int
    @Option(name: .long, parsing: .unconditional, help: "Location code (32-bit).") var locationCode: UInt32
    @Option(name: .long, help: "Extended data as hex: code, length, data sections (e.g. premises name 0x10).") var extended: String?
    @Option(name: .long, parsing: .unconditional, help: "Advertising interval in milliseconds (20...10240; 100 as the reference venue beacon).") var intervalMs: Int = 100
    @Flag(name: .long, help: "Advertise and serve the registered 16-bit service UUID 0xFCF6 instead of the 128-bit one.") var registeredUUID = false
    @Flag(name: .long, help: "One JSON object per event (JSON Lines) on standard output.") var json = false
    /// The old spelling, kept working.
    @Flag(name: .customLong("json-events"), help: .hidden) var jsonEventsAlias = false
    var jsonEvents: Bool { json || jsonEventsAlias }
    @Option(name: .long, parsing: .unconditional, help: "Seconds to run (default: until interrupted).") var duration: Double?
    @Option(name: .long, help: ByteOrderChoice.help) var byteOrder: ByteOrderChoice = .spec

    func validate() throws {
        guard (0...0xFFFF).contains(country), (0...0xFFFF).contains(state) else {
            throw ValidationError("--country and --state are 16-bit codes (0...65535)")
        }
        guard (20...10_240).contains(intervalMs) else { throw ValidationError("--interval-ms must be 20...10240") }
        if let duration, duration <= 0 { throw ValidationError("--duration must be positive") }
        if let extended, Self.parseHex(extended) == nil { throw ValidationError("--extended must be an even number of hex digits") }
    }

    static func parseHex(_ text: String) -> [UInt8]? {
        octets(hex: text.filter { !$0.isWhitespace })
    }

    func run() throws {
        try runReportingErrors {
            let extendedData = extended.flatMap(Self.parseHex) ?? []
            let header = PayloadHeader(protocolAndVersion: 0x30, countryCode: UInt16(country), stateCode: UInt16(state))
            let source: FixedPayloadSource<512>
            do {
                source = try .venueBeacon(header: header, locationCode: locationCode, extendedData: extendedData.span,
                                          order: byteOrder.order)
            } catch {
                throw CLIError(exitCode: 2, message: "invalid beacon payload (--extended): \(error)")
            }
            // A venue beacon is a fixed place with nothing to hide: it keeps its identity address.
            let advertising = HeraldAdvertisingConfiguration(
                identifiers: registeredUUID ? .registered : .specification, intervalMilliseconds: intervalMs)
            try runHeraldPeripheral(source: source, advertising: advertising, controller: controller,
                                    options: PeripheralRunOptions(role: "beacon", deviceName: "herald-beacon",
                                                                  json: jsonEvents, duration: duration,
                                                                  byteOrder: byteOrder.order,
                                                                  servedPayload: (0..<source.payload.count).map { source.payload[$0] }))
        }
    }
}
