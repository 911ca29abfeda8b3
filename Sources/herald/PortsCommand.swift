import ArgumentParser
import Foundation
import HeraldRuntime

/// `herald ports [--json]`: every serial port, with the board it belongs to (by USB VID:PID) and
/// whether that board is running its HCI firmware or its bootloader.
struct PortsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ports",
        abstract: "List serial ports and the boards attached to them."
    )

    @Flag(name: .long, help: "Print a JSON array instead of a table.")
    var json = false

    @Option(name: .long, help: "Directory of board profiles (default: $HERALD_BOARDS_DIR or Boards/).")
    var boardsDir: String?

    func run() throws {
        let directory = boardsDir.map { URL(fileURLWithPath: $0, isDirectory: true) } ?? BoardProfile.defaultDirectory()
        var boards: [BoardProfile] = []
        do {
            boards = try BoardProfile.loadAll(from: directory)
        } catch {
            // Still list the ports: a broken board file should not hide what is attached.
            FileHandle.standardError.write(Data("herald: warning: \(error)\n".utf8))
        }
        let ports = listSerialPorts(boards: boards)
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            let data = try encoder.encode(ports.map(PortJSON.init))
            print(String(decoding: data, as: UTF8.self))
        } else {
            print(PortsCommand.table(ports))
        }
    }

    static func table(_ ports: [SerialPortInfo]) -> String {
        if ports.isEmpty { return "no serial ports found" }
        let header = ["PORT", "TYPE", "USB ID", "BOARD", "ROLE", "PRODUCT", "SERIAL"]
        let rows = ports.map { port in
            [port.path, port.kind.rawValue, port.usbID?.description ?? "-", port.board ?? "-",
             port.role?.rawValue ?? "-", port.product ?? port.portDescription ?? "-", port.serialNumber ?? "-"]
        }
        let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        return ([header] + rows).map { row in
            row.enumerated().map { column, cell in
                column == row.count - 1 ? cell : cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }
}

/// The JSON shape of one port: USB IDs as "VVVV:PPPP" strings like the board files, nulls explicit.
private struct PortJSON: Encodable {
    var path: String
    var type: String
    var description: String?
    var usb: String?
    var manufacturer: String?
    var product: String?
    var serialNumber: String?
    var board: String?
    var role: String?

    init(_ port: SerialPortInfo) {
        path = port.path
        type = port.kind.rawValue
        description = port.portDescription
        usb = port.usbID?.description
        manufacturer = port.manufacturer
        product = port.product
        serialNumber = port.serialNumber
        board = port.board
        role = port.role?.rawValue
    }

    func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(path, forKey: .path)
        try c.encode(type, forKey: .type)
        try c.encode(description, forKey: .description)
        try c.encode(usb, forKey: .usb)
        try c.encode(manufacturer, forKey: .manufacturer)
        try c.encode(product, forKey: .product)
        try c.encode(serialNumber, forKey: .serialNumber)
        try c.encode(board, forKey: .board)
        try c.encode(role, forKey: .role)
    }

    enum CodingKeys: String, CodingKey {
        case path, type, description, usb, manufacturer, product, serialNumber, board, role
    }
}
