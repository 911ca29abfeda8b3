import Foundation
import Testing
@testable import HeraldRuntime

/// The nRF52840 Dongle profile as the board files spell it (fixture; the real files live in Boards/).
let dongleJSON = """
{ "name": "nrf52840dongle", "title": "Nordic nRF52840 Dongle (PCA10059)", "soc": "nRF52840",
  "flashKB": 1024, "ramKB": 256, "hciLink": "usb-cdc-acm",
  "usb": { "application": "2FE3:0100", "bootloader": "1915:521F" },
  "serial": { "baud": 1000000, "flowControl": "rtscts" },
  "zephyrBoard": "nrf52840dongle/nrf52840",
  "flash": { "method": "nordic-dfu", "notes": "press the side button to enter the bootloader" },
  "kconfig": ["CONFIG_BT_BUF_ACL_TX_SIZE=251"] }
"""

/// A board on a plain UART (no USB identity of its own), e.g. behind an external USB-serial adapter.
let uartBoardJSON = """
{ "name": "nrf52dk", "title": "Nordic nRF52 DK (PCA10040)", "soc": "nRF52832",
  "flashKB": 512, "ramKB": 64, "hciLink": "uart",
  "usb": { "application": null },
  "serial": { "baud": 115200, "flowControl": "none" },
  "zephyrBoard": "nrf52dk/nrf52832",
  "flash": { "method": "jlink" },
  "kconfig": [] }
"""

/// A temporary directory of board files, removed at deinit.
final class BoardDirectory {
    let url: URL

    init(_ files: [String: String]) throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("herald-boards-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        for (name, text) in files {
            try Data(text.utf8).write(to: url.appendingPathComponent(name))
        }
    }

    deinit { try? FileManager.default.removeItem(at: url) }
}

@Suite struct BoardProfileTests {
    @Test func loadsEveryFieldOfTheFixture() throws {
        let dir = try BoardDirectory(["nrf52840dongle.json": dongleJSON, "nrf52dk.json": uartBoardJSON, "README.md": "not a board"])
        let boards = try BoardProfile.loadAll(from: dir.url)
        #expect(boards.map(\.name) == ["nrf52840dongle", "nrf52dk"])
        let dongle = try #require(boards.first)
        #expect(dongle == BoardProfile(
            name: "nrf52840dongle", title: "Nordic nRF52840 Dongle (PCA10059)", soc: "nRF52840",
            flashKB: 1024, ramKB: 256, hciLink: "usb-cdc-acm",
            usb: .init(application: "2FE3:0100", bootloader: "1915:521F"),
            serial: .init(baud: 1_000_000, flowControl: .rtscts),
            zephyrBoard: "nrf52840dongle/nrf52840",
            flash: .init(method: "nordic-dfu", notes: "press the side button to enter the bootloader"),
            kconfig: ["CONFIG_BT_BUF_ACL_TX_SIZE=251"]))
        let dk = boards[1]
        #expect(dk.usb?.application == nil && dk.usb?.bootloader == nil)
        #expect(dk.flash.notes == nil)
        #expect(dk.kconfig.isEmpty)
    }

    @Test func matchesApplicationAndBootloaderIDs() throws {
        let dir = try BoardDirectory(["a.json": dongleJSON, "b.json": uartBoardJSON])
        let boards = try BoardProfile.loadAll(from: dir.url)
        let dongle = boards[0]
        #expect(dongle.matches(vid: 0x2FE3, pid: 0x0100) == .application)
        #expect(dongle.matches(vid: 0x1915, pid: 0x521F) == .bootloader)
        #expect(dongle.matches(vid: 0x1915, pid: 0x0100) == nil)
        #expect(dongle.matches(vid: 0x2FE3, pid: 0x0101) == nil)
        #expect(boards[1].matches(vid: 0x2FE3, pid: 0x0100) == nil)
    }

    @Test func transportDefaultsComeFromTheSerialSection() throws {
        let dir = try BoardDirectory(["b.json": uartBoardJSON])
        let dk = try #require(try BoardProfile.loadAll(from: dir.url).first)
        let defaults = dk.transportDefaults()
        #expect(defaults.baud == 115_200)
        #expect(defaults.flow == FlowControl.none)
        let spec = try TransportSpec.parse("/dev/ttyUSB0").filling(baud: defaults.baud, flow: defaults.flow)
        #expect(spec.description == "/dev/ttyUSB0,baud=115200,flow=none")
    }

    @Test func roundTripsThroughJSON() throws {
        let dir = try BoardDirectory(["a.json": dongleJSON])
        let dongle = try #require(try BoardProfile.loadAll(from: dir.url).first)
        let again = try JSONDecoder().decode(BoardProfile.self, from: JSONEncoder().encode(dongle))
        #expect(again == dongle)
    }

    /// Each broken variant of the fixture must fail naming the file and the key.
    @Test(arguments: [
        ("\"soc\": \"nRF52840\",", "", "soc", "missing"),
        ("\"flashKB\": 1024", "\"flashKB\": \"1M\"", "flashKB", "integer"),
        ("\"2FE3:0100\"", "\"2FE3-0100\"", "usb.application", "VID:PID"),
        ("\"1915:521F\"", "\"1915:52\"", "usb.bootloader", "VID:PID"),
        ("\"rtscts\"", "\"xonxoff\"", "serial.flowControl", "rtscts"),
        ("\"baud\": 1000000", "\"baud\": 0", "serial.baud", "positive"),
        ("\"baud\": 1000000", "\"baud\": null", "serial.baud", "null"),
        ("\"method\": \"nordic-dfu\",", "", "flash.method", "missing"),
        ("[\"CONFIG_BT_BUF_ACL_TX_SIZE=251\"]", "[1]", "kconfig[0]", "string"),
        ("\"name\": \"nrf52840dongle\"", "\"name\": \"my board\"", "name", "without spaces"),
    ])
    func badFilesNameFileAndKey(find: String, replace: String, key: String, fragment: String) throws {
        let broken = dongleJSON.replacingOccurrences(of: find, with: replace)
        #expect(broken != dongleJSON)
        let dir = try BoardDirectory(["broken.json": broken])
        #expect {
            _ = try BoardProfile.loadAll(from: dir.url)
        } throws: { error in
            guard let error = error as? BoardProfileError else { return false }
            return error.file.hasSuffix("broken.json") && error.key == key && error.reason.contains(fragment)
                && error.description.contains("broken.json") && error.description.contains(key)
        }
    }

    @Test func invalidJSONNamesTheFile() throws {
        let dir = try BoardDirectory(["bad.json": "{ \"name\": "])
        #expect(throws: BoardProfileError(file: dir.url.appendingPathComponent("bad.json").path, key: "", reason: "not valid JSON")) {
            _ = try BoardProfile.loadAll(from: dir.url)
        }
    }

    @Test func duplicateNamesAreRejected() throws {
        let dir = try BoardDirectory(["a.json": dongleJSON, "b.json": dongleJSON])
        #expect {
            _ = try BoardProfile.loadAll(from: dir.url)
        } throws: { error in
            guard let error = error as? BoardProfileError else { return false }
            return error.key == "name" && error.reason.contains("duplicate") && error.reason.contains("a.json")
        }
    }

    @Test func missingDirectoryIsAnError() {
        #expect(throws: BoardProfileError.self) {
            _ = try BoardProfile.loadAll(from: URL(fileURLWithPath: "/nonexistent/herald/Boards"))
        }
    }

    @Test func usbIDParsingAndFormatting() {
        #expect(USBID("2fe3:0100") == USBID(vid: 0x2FE3, pid: 0x0100))
        #expect(USBID(vid: 0x1915, pid: 0x00AB).description == "1915:00AB")
        for bad in ["", "2FE3", "2FE3:", ":0100", "2FE3:01000", "GGGG:0000", "2FE3:0100:1", "+FE3:0100"] {
            #expect(USBID(bad) == nil, "\(bad)")
        }
    }
}

@Suite struct BoardDirectoryLookupTests {
    @Test func environmentOverrides() {
        let url = BoardProfile.defaultDirectory(environment: ["HERALD_BOARDS_DIR": "/opt/boards"], executable: nil,
                                                currentDirectory: URL(fileURLWithPath: "/"))
        #expect(url.path == "/opt/boards")
    }

    @Test func walksUpFromTheExecutable() throws {
        // <root>/Boards/x.json and <root>/.build/debug/herald: the executable finds <root>/Boards.
        let root = try BoardDirectory([:])
        let boards = root.url.appendingPathComponent("Boards")
        let bin = root.url.appendingPathComponent(".build/debug")
        try FileManager.default.createDirectory(at: boards, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        try Data(dongleJSON.utf8).write(to: boards.appendingPathComponent("nrf52840dongle.json"))
        let found = BoardProfile.defaultDirectory(environment: [:], executable: bin.appendingPathComponent("herald"),
                                                  currentDirectory: URL(fileURLWithPath: "/"))
        #expect(found.standardizedFileURL.path == boards.standardizedFileURL.path)
    }

    @Test func skipsBoardsFoldersWithoutJSONAndFallsBackToCurrentDirectory() throws {
        let root = try BoardDirectory([:])
        let empty = root.url.appendingPathComponent("work/Boards")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        let cwd = root.url.appendingPathComponent("work")
        let found = BoardProfile.defaultDirectory(environment: [:], executable: nil, currentDirectory: cwd)
        // No Boards/ with JSON anywhere up the tree (assuming none at / or the temp dir's parents).
        #expect(found.path == cwd.appendingPathComponent("Boards").path)
    }

    @Test func findsBoardsFromTheCurrentDirectory() throws {
        let root = try BoardDirectory([:])
        let boards = root.url.appendingPathComponent("Boards")
        try FileManager.default.createDirectory(at: boards, withIntermediateDirectories: true)
        try Data(uartBoardJSON.utf8).write(to: boards.appendingPathComponent("nrf52dk.json"))
        let cwd = root.url.appendingPathComponent("Sources/herald")
        let found = BoardProfile.defaultDirectory(environment: [:], executable: URL(fileURLWithPath: "/usr/bin/herald"),
                                                  currentDirectory: cwd)
        #expect(found.standardizedFileURL.path == boards.standardizedFileURL.path)
    }
}

@Suite struct AutodetectTests {
    func boards() throws -> [BoardProfile] {
        let dir = try BoardDirectory(["a.json": dongleJSON, "b.json": uartBoardJSON])
        return try BoardProfile.loadAll(from: dir.url)
    }

    let ttyS0 = SerialPortInfo(path: "/dev/ttyS0", kind: .native, portDescription: "ttyS0")
    let dongleApp = SerialPortInfo(path: "/dev/ttyACM0", kind: .usb, vid: 0x2FE3, pid: 0x0100,
                                   product: "nRF52840 HCI", serialNumber: "E1A2B3C4")
    let dongleDFU = SerialPortInfo(path: "/dev/ttyACM1", kind: .usb, vid: 0x1915, pid: 0x521F, product: "Open DFU Bootloader")

    @Test func picksTheOneBoardWithItsDefaults() throws {
        let (spec, description) = try autodetectTransport(ports: [ttyS0, dongleApp], boards: boards(), board: nil)
        #expect(spec == TransportSpec(kind: .serial, path: "/dev/ttyACM0", baud: 1_000_000, flow: .rtscts))
        #expect(description.contains("nRF52840 Dongle") && description.contains("/dev/ttyACM0") && description.contains("E1A2B3C4"))
    }

    @Test func noBoardListsThePorts() throws {
        #expect(throws: TransportError.noBoardFound(ports: ["/dev/ttyS0"])) {
            _ = try autodetectTransport(ports: [ttyS0], boards: boards(), board: nil)
        }
        #expect(TransportError.noBoardFound(ports: []).description.contains("ports: none"))
    }

    @Test func boardInBootloaderIsExplained() throws {
        #expect {
            _ = try autodetectTransport(ports: [dongleDFU, ttyS0], boards: boards(), board: nil)
        } throws: { error in
            guard case .noBoardFound(let ports) = error as? TransportError else { return false }
            return ports.count == 2 && ports[0].contains("/dev/ttyACM1") && ports[0].contains("bootloader")
                && ports[1] == "/dev/ttyS0"
        }
    }

    @Test func severalBoardsAsksForTransport() throws {
        var second = dongleApp
        second.path = "/dev/ttyACM2"
        #expect {
            _ = try autodetectTransport(ports: [dongleApp, second], boards: boards(), board: nil)
        } throws: { error in
            guard case .severalBoards(let list) = error as? TransportError else { return false }
            return list == ["/dev/ttyACM0 (nrf52840dongle)", "/dev/ttyACM2 (nrf52840dongle)"]
                && (error as! TransportError).description.contains("pass --transport")
        }
    }

    @Test func boardOptionRestrictsTheSearch() throws {
        let all = try boards()
        let dk = try #require(all.first { $0.name == "nrf52dk" })
        #expect(throws: TransportError.self) {
            _ = try autodetectTransport(ports: [dongleApp], boards: all, board: dk)
        }
    }

    @Test func portSummaryAndIdentification() throws {
        var port = dongleDFU
        port.identify(with: try boards())
        #expect(port.board == "nrf52840dongle" && port.role == .bootloader)
        #expect(port.summary == "/dev/ttyACM1 (1915:521F, nrf52840dongle bootloader)")
        #expect(ttyS0.summary == "/dev/ttyS0")
    }

    @Test func listingPortsDoesNotCrashAndIsSorted() {
        // Whatever this machine has: paths are absolute and sorted; USB IDs only on USB ports.
        let ports = listSerialPorts(boards: [])
        #expect(ports.map(\.path) == ports.map(\.path).sorted())
        for port in ports {
            #expect(port.path.hasPrefix("/"))
            if port.kind != .usb { #expect(port.vid == nil) }
        }
    }
}
