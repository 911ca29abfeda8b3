import Foundation

/// One supported controller board, loaded from `Boards/NAME.json`: how to recognise it on USB, how
/// to talk HCI to it, and how to build and flash its Zephyr `hci_uart` firmware.
public struct BoardProfile: Codable, Equatable, Sendable {
    /// Which firmware a matching USB device is running.
    public enum Role: String, Codable, Equatable, Sendable {
        /// The HCI controller firmware: usable as a transport.
        case application
        /// The board's bootloader (e.g. Nordic Open DFU): flashable, not an HCI controller.
        case bootloader
    }

    public struct USB: Codable, Equatable, Sendable {
        /// "VID:PID" in hex, e.g. "2FE3:0100"; nil when the board has no USB identity of its own.
        public var application: String?
        public var bootloader: String?

        public init(application: String? = nil, bootloader: String? = nil) {
            self.application = application
            self.bootloader = bootloader
        }
    }

    public struct Serial: Codable, Equatable, Sendable {
        public var baud: Int
        public var flowControl: FlowControl

        public init(baud: Int, flowControl: FlowControl) {
            self.baud = baud
            self.flowControl = flowControl
        }
    }

    public struct Flash: Codable, Equatable, Sendable {
        /// e.g. "nordic-dfu", "jlink", "uf2".
        public var method: String
        public var notes: String?

        public init(method: String, notes: String? = nil) {
            self.method = method
            self.notes = notes
        }
    }

    public var name: String
    public var title: String
    public var soc: String
    public var flashKB: Int
    public var ramKB: Int
    /// How HCI reaches the host, e.g. "usb-cdc-acm" or "uart".
    public var hciLink: String
    public var usb: USB?
    public var serial: Serial
    public var zephyrBoard: String
    public var flash: Flash
    public var kconfig: [String]

    public init(name: String, title: String, soc: String, flashKB: Int, ramKB: Int, hciLink: String,
                usb: USB?, serial: Serial, zephyrBoard: String, flash: Flash, kconfig: [String]) {
        self.name = name
        self.title = title
        self.soc = soc
        self.flashKB = flashKB
        self.ramKB = ramKB
        self.hciLink = hciLink
        self.usb = usb
        self.serial = serial
        self.zephyrBoard = zephyrBoard
        self.flash = flash
        self.kconfig = kconfig
    }

    /// The USB application (HCI firmware) identity, parsed.
    public var applicationID: USBID? { usb?.application.flatMap(USBID.init) }
    /// The USB bootloader identity, parsed.
    public var bootloaderID: USBID? { usb?.bootloader.flatMap(USBID.init) }

    /// Which of this board's firmwares a USB device with this VID:PID is running, if any.
    public func matches(vid: UInt16, pid: UInt16) -> Role? {
        let id = USBID(vid: vid, pid: pid)
        if applicationID == id { return .application }
        if bootloaderID == id { return .bootloader }
        return nil
    }

    /// The UART settings for `--board NAME`, to fill into a transport spec that leaves them out.
    public func transportDefaults() -> (baud: Int, flow: FlowControl) {
        (serial.baud, serial.flowControl)
    }
}

/// A USB vendor and product ID, written "VVVV:PPPP" in hex.
public struct USBID: Equatable, Hashable, Sendable, CustomStringConvertible {
    public var vid: UInt16
    public var pid: UInt16

    public init(vid: UInt16, pid: UInt16) {
        self.vid = vid
        self.pid = pid
    }

    public init?(_ text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ $0.count == 4 && $0.allSatisfy(\.isHexDigit) }),
              let vid = UInt16(parts[0], radix: 16), let pid = UInt16(parts[1], radix: 16) else { return nil }
        self.vid = vid
        self.pid = pid
    }

    public var description: String {
        let hex = { (value: UInt16) in
            let digits = String(value, radix: 16, uppercase: true)
            return String(repeating: "0", count: 4 - digits.count) + digits
        }
        return "\(hex(vid)):\(hex(pid))"
    }
}

/// A board file that could not be loaded; the message names the file and the offending key.
public struct BoardProfileError: Error, Equatable, CustomStringConvertible {
    public var file: String
    /// Dotted key path, e.g. "usb.application"; empty when the whole file is at fault.
    public var key: String
    public var reason: String

    public init(file: String, key: String, reason: String) {
        self.file = file
        self.key = key
        self.reason = reason
    }

    public var description: String {
        key.isEmpty ? "\(file): \(reason)" : "\(file): key '\(key)': \(reason)"
    }
}

extension BoardProfile {
    /// Loads every `*.json` in `directory`, sorted by name. Throws `BoardProfileError` naming the file
    /// and key for malformed JSON, missing or mistyped keys, bad USB IDs, and duplicate names.
    public static func loadAll(from directory: URL) throws -> [BoardProfile] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw BoardProfileError(file: directory.path, key: "", reason: "board directory does not exist (set HERALD_BOARDS_DIR)")
        }
        let files: [URL]
        do {
            files = try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
                .filter { $0.pathExtension.lowercased() == "json" }
                .sorted { $0.lastPathComponent < $1.lastPathComponent }
        } catch {
            throw BoardProfileError(file: directory.path, key: "", reason: "cannot list board directory: \(CommandMessage.reason(error))")
        }
        var boards: [BoardProfile] = []
        var seen: [String: String] = [:]
        for file in files {
            let board = try load(file: file)
            if let other = seen[board.name] {
                throw BoardProfileError(file: file.path, key: "name", reason: "duplicate board name '\(board.name)' (also in \(other))")
            }
            seen[board.name] = file.lastPathComponent
            boards.append(board)
        }
        return boards.sorted { $0.name < $1.name }
    }

    /// The board called `name` (for `--board NAME`); the error lists the known names.
    public static func named(_ name: String, in boards: [BoardProfile]) throws -> BoardProfile {
        if let board = boards.first(where: { $0.name == name }) { return board }
        let known = boards.isEmpty ? "none loaded" : boards.map(\.name).joined(separator: ", ")
        throw BoardProfileError(file: name, key: "", reason: "unknown board; known boards: \(known)")
    }

    /// Loads and validates one board file.
    public static func load(file: URL) throws -> BoardProfile {
        let data: Data
        do {
            data = try Data(contentsOf: file)
        } catch {
            throw BoardProfileError(file: file.path, key: "", reason: "cannot read: \(CommandMessage.reason(error))")
        }
        let board: BoardProfile
        do {
            board = try JSONDecoder().decode(BoardProfile.self, from: data)
        } catch let error as DecodingError {
            throw describe(error, file: file.path)
        } catch {
            throw BoardProfileError(file: file.path, key: "", reason: "\(error)")
        }
        try board.validate(file: file.path)
        return board
    }

    func validate(file: String) throws {
        func fail(_ key: String, _ reason: String) -> BoardProfileError {
            BoardProfileError(file: file, key: key, reason: reason)
        }
        if name.isEmpty || name.contains(where: { $0.isWhitespace || $0 == "/" }) {
            throw fail("name", "must be a non-empty word without spaces or '/'")
        }
        if let text = usb?.application, USBID(text) == nil {
            throw fail("usb.application", "'\(text)' is not VID:PID in hex (e.g. 2FE3:0100)")
        }
        if let text = usb?.bootloader, USBID(text) == nil {
            throw fail("usb.bootloader", "'\(text)' is not VID:PID in hex (e.g. 1915:521F)")
        }
        if serial.baud <= 0 { throw fail("serial.baud", "must be positive") }
        if flashKB <= 0 { throw fail("flashKB", "must be positive") }
        if ramKB <= 0 { throw fail("ramKB", "must be positive") }
    }

    private static func describe(_ error: DecodingError, file: String) -> BoardProfileError {
        func path(_ codingPath: [CodingKey], _ last: CodingKey? = nil) -> String {
            (codingPath + (last.map { [$0] } ?? [])).map { key in
                key.intValue.map { "[\($0)]" } ?? key.stringValue
            }.joined(separator: ".").replacingOccurrences(of: ".[", with: "[")
        }
        switch error {
        case .keyNotFound(let key, let context):
            return BoardProfileError(file: file, key: path(context.codingPath, key), reason: "missing")
        case .typeMismatch(let type, let context):
            return BoardProfileError(file: file, key: path(context.codingPath), reason: "expected \(typeName(type))")
        case .valueNotFound(let type, let context):
            return BoardProfileError(file: file, key: path(context.codingPath), reason: "null where \(typeName(type)) is required")
        case .dataCorrupted(let context):
            let key = path(context.codingPath)
            if key.isEmpty {
                return BoardProfileError(file: file, key: "", reason: "not valid JSON")
            }
            // Enums land here: say which values are allowed.
            if key == "serial.flowControl" {
                return BoardProfileError(file: file, key: key, reason: "must be \"rtscts\" or \"none\"")
            }
            return BoardProfileError(file: file, key: key, reason: context.debugDescription)
        @unknown default:
            return BoardProfileError(file: file, key: "", reason: "\(error)")
        }
    }

    private static func typeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: return "a string"
        case is Int.Type: return "an integer"
        case is [String].Type: return "an array of strings"
        default: return "\(type)"
        }
    }

    /// Where the board files live: `$HERALD_BOARDS_DIR`, else the first `Boards/` folder holding JSON
    /// files found walking up from the executable, then from the current directory; else `./Boards`.
    public static func defaultDirectory() -> URL {
        defaultDirectory(
            environment: ProcessInfo.processInfo.environment,
            executable: Bundle.main.executableURL,
            currentDirectory: URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        )
    }

    static func defaultDirectory(environment: [String: String], executable: URL?, currentDirectory: URL) -> URL {
        if let override = environment["HERALD_BOARDS_DIR"], !override.isEmpty {
            return URL(fileURLWithPath: override, isDirectory: true)
        }
        var starts: [URL] = []
        if let executable { starts.append(executable.resolvingSymlinksInPath().deletingLastPathComponent()) }
        starts.append(currentDirectory)
        for start in starts {
            var dir = start.standardizedFileURL
            while true {
                let candidate = dir.appendingPathComponent("Boards", isDirectory: true)
                if containsJSON(candidate) { return candidate }
                let parent = dir.deletingLastPathComponent()
                if parent.path == dir.path { break }
                dir = parent
            }
        }
        return currentDirectory.appendingPathComponent("Boards", isDirectory: true)
    }

    private static func containsJSON(_ dir: URL) -> Bool {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: dir.path) else { return false }
        return names.contains { $0.lowercased().hasSuffix(".json") }
    }
}
