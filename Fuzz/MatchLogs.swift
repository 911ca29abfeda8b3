// libFuzzer target: the files `herald match` reads (HeraldRuntime/Keys/ContactMatcher): a matching
// keys file (`herald keys export` CSV or Base64 lines), and a log directory's payloads.csv and
// contacts.csv, written to a scratch directory and read as the command reads them, then matched and
// printed as CSV. Input: the three files' bytes separated by NUL octets; an empty contacts.csv
// section leaves that file out. At most 4 keys are indexed (241 identifiers each).
// Invariants: nothing traps or over-reads; every malformed line names its file and a line inside it;
// each match belongs to a key that was loaded and counts at least one payload row.
// fuzz: max_len=8192
// FoundationEssentials' readBytesFromFile leaks its 4 KB buffer when the file is empty (found by
// Fuzz/SecretKey.swift; swift-foundation's, not ours): leak detection off, empty files still fuzzed.
// fuzz: flags=-detect_leaks=0
import Foundation
import HeraldRuntime

func check(_ condition: Bool, _ message: StaticString) {
    if !condition { fatalError("invariant: \(message)") }
}

let scratch: String = {
    let dir = NSTemporaryDirectory() + "herald-fuzz-match-\(getpid())"
    try? FileManager.default.createDirectory(atPath: dir + "/logs", withIntermediateDirectories: true)
    atexit { try? FileManager.default.removeItem(atPath: NSTemporaryDirectory() + "herald-fuzz-match-\(getpid())") }
    return dir
}()

func fuzzOne(_ bytes: [UInt8]) {
    let sections = bytes.split(separator: 0, maxSplits: 2, omittingEmptySubsequences: false)
    func section(_ i: Int) -> Data { i < sections.count ? Data(sections[i]) : Data() }
    let keysPath = scratch + "/keys.csv", payloads = scratch + "/logs/payloads.csv", contacts = scratch + "/logs/contacts.csv"
    _ = FileManager.default.createFile(atPath: keysPath, contents: section(0))
    _ = FileManager.default.createFile(atPath: payloads, contents: section(1))
    if section(2).isEmpty { unlink(contacts) } else { _ = FileManager.default.createFile(atPath: contacts, contents: section(2)) }
    let lines = [keysPath: section(0), payloads: section(1), contacts: section(2)]
        .mapValues { $0.split(separator: 10, omittingEmptySubsequences: false).count }
    func checkMalformed(_ bad: [MalformedLine]) {
        for b in bad {
            check(lines[b.file] != nil, "malformed line names one of the files")
            check(b.line >= 1 && b.line <= lines[b.file]!, "malformed line number within its file")
        }
    }
    guard let (allKeys, badKeys) = try? MatchingKeysFile.load(keysPath) else { return }
    checkMalformed(badKeys)
    let keys = Array(allKeys.prefix(4))
    for k in keys { check(k.key.count == 32, "a matching key is 32 bytes") }
    let index = ContactIdentifierIndex(keys: keys)
    guard let (matches, malformed, rows) = try? ContactMatcher.match(index: index, keys: keys, logDirectories: [scratch + "/logs"]) else { return }
    checkMalformed(malformed)
    for m in matches {
        check(m.keyIndex >= 0 && m.keyIndex < keys.count, "match of a loaded key")
        check(m.count >= 1 && m.count <= rows, "match counts payload rows")
        check(m.firstSeen <= m.lastSeen, "first seen before last seen")
    }
    _ = ContactMatcher.csv(matches)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    fuzzOne(size > 0 ? Array(UnsafeBufferPointer(start: data, count: size)) : [])
    return 0
}
