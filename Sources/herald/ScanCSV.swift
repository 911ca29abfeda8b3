import Foundation
import HeraldRuntime

/// `herald scan --csv FILE`: one row per advertising report shown, written as it arrives (a bench run
/// killed midway keeps what it saw). Columns: time (UTC, milliseconds), address, address type, kind
/// (as known at that report), RSSI (dBm, empty when the controller gave none), type (`advert` or
/// `scan-response`), payload (the report's AD data in hex), herald payload (decoded, once read).
final class ScanCSV {
    static let header = "time,address,addressType,kind,rssi,type,payload,heraldPayload\n"
    let handle: FileHandle

    init(path: String) throws {
        guard FileManager.default.createFile(atPath: path, contents: Data(Self.header.utf8)),
              let h = FileHandle(forWritingAtPath: path) else {
            throw CLIError(.usage, FileProblem(path: path, action: "write", why: CommandMessage.strerrorText(errno)).description)
        }
        h.seekToEndOfFile()
        handle = h
    }

    func write(_ r: AdvertisementRecord, kind: DeviceKind, heraldPayload: String?) {
        let time = iso8601Timestamp(r.time, fractionalSeconds: true)
        let fields = [time, r.address, r.addressType, kind.rawValue, r.rssi.map(String.init) ?? "",
                      r.scanResponse ? "scan-response" : "advert", r.data, heraldPayload ?? ""]
        handle.write(Data((fields.map(Self.quoted).joined(separator: ",") + "\n").utf8))
    }

    /// RFC 4180: a field with a comma, quote or line break is quoted, its quotes doubled.
    static func quoted(_ s: String) -> String {
        s.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) ? "\"" + s.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : s
    }
}

/// Key presses on a terminal's standard input, one at a time and without waiting (the live table's
/// sort keys): non-canonical, no echo, non-blocking, restored at the end.
final class KeyboardInput {
    var saved = termios()
    let active: Bool

    init() {
        guard isatty(STDIN_FILENO) != 0, tcgetattr(STDIN_FILENO, &saved) == 0 else { active = false; return }
        var raw = saved
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 0
            cc[Int(VTIME)] = 0
        }
        active = tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0
    }

    func read() -> Character? {
        guard active else { return nil }
        var c: UInt8 = 0
        guard Foundation.read(STDIN_FILENO, &c, 1) == 1 else { return nil }
        return Character(UnicodeScalar(c))
    }

    func restore() {
        if active { _ = tcsetattr(STDIN_FILENO, TCSANOW, &saved) }
    }
}
