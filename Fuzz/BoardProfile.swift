// libFuzzer target: board profiles (`--board`, `herald ports`; HeraldRuntime/Boards): a JSON file in
// a scratch board directory, loaded by BoardProfile.load and loadAll as the commands load them,
// then what the commands ask of a profile (transport defaults, USB ID matching).
// Invariants: nothing traps; every error names the file; a loaded profile has a name that is one
// word and transport defaults with a positive baud rate.
// fuzz: max_len=4096
// FoundationEssentials' readBytesFromFile leaks its 4 KB buffer when the file is empty (found by
// Fuzz/SecretKey.swift; swift-foundation's, not ours): leak detection off, empty files still fuzzed.
// fuzz: flags=-detect_leaks=0
import Foundation
import HeraldRuntime

func check(_ condition: Bool, _ message: StaticString) {
    if !condition { fatalError("invariant: \(message)") }
}

let scratch: String = {
    let dir = NSTemporaryDirectory() + "herald-fuzz-boards-\(getpid())"
    try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    atexit { try? FileManager.default.removeItem(atPath: NSTemporaryDirectory() + "herald-fuzz-boards-\(getpid())") }
    return dir
}()

func fuzzOne(_ bytes: [UInt8]) {
    let file = URL(fileURLWithPath: scratch + "/board.json")
    _ = FileManager.default.createFile(atPath: file.path, contents: Data(bytes))
    do {
        let board = try BoardProfile.load(file: file)
        check(!board.name.isEmpty && !board.name.contains(where: { $0.isWhitespace || $0 == "/" }), "board name is a word")
        check(board.transportDefaults().baud > 0, "positive baud rate")
        _ = board.matches(vid: 0x1915, pid: 0x521F)
        let all = try BoardProfile.loadAll(from: URL(fileURLWithPath: scratch))
        check(all.count == 1 && all[0].name == board.name, "the directory holds the one board")
    } catch let error as BoardProfileError {
        check(error.file.hasPrefix(scratch), "error names the file")
    } catch {
        check(false, "board errors are BoardProfileError")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    fuzzOne(size > 0 ? Array(UnsafeBufferPointer(start: data, count: size)) : [])
    return 0
}
