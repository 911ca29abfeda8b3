import ArgumentParser
import BluetoothHost
import Foundation
import HeraldRuntime

struct InfoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Bring up the controller and print what it is: versions, manufacturer, address, buffers, LE features."
    )

    @OptionGroup var controller: ControllerOptions
    @Flag(name: .long, help: "Print JSON.") var json = false

    func run() throws {
        try runReportingErrors {
            let stack = BluetoothStack(configuration: StackSession<NoApplication, 1, 16, 128>.defaultConfiguration(),
                                       database: try minimalDatabase(), app: NoApplication())
            let session = try controller.openSession(stack)
            defer { session.close() }
            let info = try session.bringUp()
            let report = ControllerReport(info: info, transport: session.transport.name)
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                print(String(decoding: try encoder.encode(report), as: UTF8.self))
            } else {
                print(report.text)
            }
        }
    }
}

/// `herald info`'s findings, as JSON and as text.
struct ControllerReport: Encodable {
    struct Manufacturer: Encodable { var id: UInt16; var name: String }
    struct Zephyr: Encodable { var hardwarePlatform: UInt16; var hardwareVariant: UInt16; var firmwareVariant: UInt8; var firmwareVersion: String; var firmwareBuild: UInt32 }
    struct Buffers: Encodable { var length: UInt16; var count: UInt16; var shared: Bool }
    struct DataLength: Encodable { var maxTxOctets: UInt16; var maxTxTime: UInt16; var maxRxOctets: UInt16; var maxRxTime: UInt16 }

    var transport: String
    var hciVersion: String
    var hciRevision: UInt16
    var lmpVersion: String
    var lmpSubversion: UInt16
    var manufacturer: Manufacturer
    var zephyr: Zephyr?
    var address: String
    var addressType: String
    var addressSource: String
    var publicAddress: String?
    var aclBuffers: Buffers
    var leFeatures: [String]
    var maximumDataLength: DataLength?
    /// The PHYs the controller supports for links ("1M" always, "2M" with the LE 2M PHY feature, "Coded"),
    /// and the one new links are moved to ("2M" once LE Set Default PHY was accepted, else "1M").
    var phys: [String]
    var linkPHY: String

    init(info: ControllerInfo, transport: String) {
        self.transport = transport
        let v = info.localVersion
        hciVersion = v.map { ControllerDescriptions.coreVersionName($0.hciVersion) } ?? "unknown"
        hciRevision = v?.hciRevision ?? 0
        lmpVersion = v.map { ControllerDescriptions.coreVersionName($0.lmpVersion) } ?? "unknown"
        lmpSubversion = v?.lmpSubversion ?? 0
        let m = v?.manufacturer ?? 0xFFFF
        manufacturer = Manufacturer(id: m, name: ControllerDescriptions.manufacturerName(m))
        zephyr = info.zephyrVersion.map {
            Zephyr(hardwarePlatform: $0.hardwarePlatform, hardwareVariant: $0.hardwareVariant,
                   firmwareVariant: $0.firmwareVariant,
                   firmwareVersion: "\($0.firmwareVersion).\($0.firmwareRevision)", firmwareBuild: $0.firmwareBuild)
        }
        address = info.address.description
        addressType = info.addressType.name
        addressSource = ControllerDescriptions.addressSourceName(info.addressSource)
        publicAddress = info.publicAddress.map(\.description)
        aclBuffers = Buffers(length: info.aclDataPacketLength, count: info.aclDataPacketCount, shared: info.aclBuffersShared)
        leFeatures = info.leFeatures.map(Self.featureNames) ?? []
        phys = ["1M"] + (info.leFeatures?.le2MPHY == true ? ["2M"] : []) + (info.leFeatures?.leCodedPHY == true ? ["Coded"] : [])
        linkPHY = info.prefers2MPHY ? "2M" : "1M"
        maximumDataLength = info.maximumDataLength.map {
            DataLength(maxTxOctets: $0.supportedMaxTxOctets, maxTxTime: $0.supportedMaxTxTime,
                       maxRxOctets: $0.supportedMaxRxOctets, maxRxTime: $0.supportedMaxRxTime)
        }
    }

    static func featureNames(_ f: LEFeatures) -> [String] {
        (0..<64).compactMap { bit in
            guard f.contains(bit: bit) else { return nil }
            guard let name = LEFeatures.name(ofBit: bit) else { return "bit \(bit)" }
            return name.withUTF8Buffer { String(decoding: $0, as: UTF8.self) }
        }
    }

    var text: String {
        var lines = [
            "transport:        \(transport)",
            "HCI version:      \(hciVersion) (revision 0x\(hex(hciRevision)))",
            "LMP version:      \(lmpVersion) (subversion 0x\(hex(lmpSubversion)))",
            "manufacturer:     \(manufacturer.name) (0x\(hex(manufacturer.id)))",
        ]
        if let z = zephyr {
            lines.append("Zephyr firmware:  \(z.firmwareVersion) build \(z.firmwareBuild), hw platform 0x\(hex(z.hardwarePlatform)) variant 0x\(hex(z.hardwareVariant))")
        }
        lines.append("address:          \(address) (\(addressType), \(addressSource))")
        lines.append("LE ACL buffers:   \(aclBuffers.count) × \(aclBuffers.length) bytes\(aclBuffers.shared ? " (shared with BR/EDR)" : "")")
        if let d = maximumDataLength {
            lines.append("max data length:  tx \(d.maxTxOctets) B / \(d.maxTxTime) µs, rx \(d.maxRxOctets) B / \(d.maxRxTime) µs")
        }
        lines.append("PHYs:             \(phys.joined(separator: ", ")); new links ask for \(linkPHY)")
        lines.append("LE features:      \(leFeatures.isEmpty ? "none" : leFeatures.joined(separator: ", "))")
        return lines.joined(separator: "\n")
    }
}
