import Foundation
import Testing
@testable import HeraldRuntime

/// The repository root (…/Tests/HeraldRuntimeTests/BTSnoopTests.swift → …).
let repoRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
/// Shared captures live beside the repo (CI clones shared/ next to it); from a nested git worktree
/// the nearest `shared/captures` further up is used.
let capturesDir: URL = {
    var dir = (repoRoot.path as NSString).deletingLastPathComponent
    while dir.count > 1 {
        let candidate = (dir as NSString).appendingPathComponent("shared/captures")
        if FileManager.default.fileExists(atPath: candidate) { return URL(fileURLWithPath: candidate) }
        dir = (dir as NSString).deletingLastPathComponent
    }
    return repoRoot.deletingLastPathComponent().appendingPathComponent("shared/captures")
}()
let phoneCapture = capturesDir.appendingPathComponent("herald-phone-peripheral.btsnoop").path
let haveCaptures = FileManager.default.fileExists(atPath: phoneCapture)

func temporaryFile(_ name: String) -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("herald-\(UUID().uuidString)-\(name)").path
}

/// Real HCI traffic for round trips: Reset, its Command Complete, LE Set Advertising Enable, an LE
/// Connection Complete, and an ACL packet carrying an ATT Exchange MTU Request (Core 5.4 Vol 3 Part F 3.4.2.1).
let samplePackets: [([UInt8], BTSnoopDirection)] = [
    ([0x01, 0x03, 0x0c, 0x00], .sent),
    ([0x04, 0x0e, 0x04, 0x01, 0x03, 0x0c, 0x00], .received),
    ([0x01, 0x0a, 0x20, 0x01, 0x01], .sent),
    ([0x04, 0x3e, 0x13, 0x01, 0x00, 0x40, 0x00, 0x01, 0x01, 0x11, 0x22, 0x33, 0x44, 0x55, 0xc6,
      0x18, 0x00, 0x00, 0x00, 0x48, 0x00, 0x00], .received),
    ([0x02, 0x40, 0x20, 0x07, 0x00, 0x03, 0x00, 0x04, 0x00, 0x02, 0xf7, 0x00], .received),
]

@Suite struct BTSnoopTests {
    @Test func writesHeaderAndRecordsThatReadBack() throws {
        let path = temporaryFile("roundtrip.btsnoop")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try BTSnoopWriter(path: path)
        let start = Date(timeIntervalSince1970: 1_790_000_000.123456)
        for (index, (packet, direction)) in samplePackets.enumerated() {
            writer.write(packet: packet, direction: direction, at: start.addingTimeInterval(Double(index) * 0.001))
        }
        writer.close()
        #expect(writer.recordCount == samplePackets.count)
        #expect(writer.lastError == nil)

        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(Array(bytes[0..<16]) == Array("btsnoop\0".utf8) + [0, 0, 0, 1, 0, 0, 0x03, 0xea])

        let file = try BTSnoopReader(path: path, strict: true)
        #expect(file.datalink == 1002)
        #expect(file.records.count == samplePackets.count)
        for (index, record) in file.records.enumerated() {
            let (packet, direction) = samplePackets[index]
            #expect(record.packet == packet)
            #expect(record.direction == direction)
            #expect(record.originalLength == UInt32(packet.count))
            #expect(record.cumulativeDrops == 0)
            #expect(record.isCommandOrEvent == (packet[0] == 0x01 || packet[0] == 0x04))
            let expected = start.addingTimeInterval(Double(index) * 0.001).timeIntervalSince1970
            #expect(abs(record.date.timeIntervalSince1970 - expected) < 0.000002)
        }
    }

    @Test func flagsFollowTheSpec() {
        func flags(_ packet: [UInt8], _ direction: BTSnoopDirection) -> UInt32 {
            packet.withUnsafeBytes { BTSnoop.flags(packet: $0, direction: direction) }
        }
        #expect(flags([0x01, 0x03, 0x0c, 0x00], .sent) == 2)   // command, host → controller
        #expect(flags([0x04, 0x0e], .received) == 3)           // event, controller → host
        #expect(flags([0x02, 0x40, 0x20], .sent) == 0)         // ACL out
        #expect(flags([0x02, 0x40, 0x20], .received) == 1)     // ACL in
        #expect(flags([0x05, 0x00], .received) == 1)           // ISO is data
        #expect(flags([], .received) == 1)
    }

    @Test func timestampsCountMicrosecondsFromYearZero() {
        #expect(BTSnoop.timestamp(Date(timeIntervalSince1970: 0)) == 0x00dc_ddb3_0f2f_8000)
        #expect(BTSnoop.timestamp(Date(timeIntervalSince1970: 1.5)) == 0x00dc_ddb3_0f2f_8000 + 1_500_000)
        // 2026-01-01T00:00:00Z.
        let date = Date(timeIntervalSince1970: 1_767_225_600)
        #expect(BTSnoop.date(timestamp: BTSnoop.timestamp(date)) == date)
    }

    @Test func recordsAreOnDiskBeforeClose() throws {
        // A killed process must not lose what it already logged: each record reaches the file at once.
        let path = temporaryFile("live.btsnoop")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try BTSnoopWriter(path: path)
        defer { writer.close() }
        writer.write(packet: [0x01, 0x03, 0x0c, 0x00], direction: .sent)
        let file = try BTSnoopReader(path: path, strict: true)
        #expect(file.records.map(\.packet) == [[0x01, 0x03, 0x0c, 0x00]])
        writer.flush()
    }

    @Test func writingAfterCloseIsIgnored() throws {
        let path = temporaryFile("closed.btsnoop")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try BTSnoopWriter(path: path)
        writer.close()
        writer.write(packet: [0x01, 0x03, 0x0c, 0x00], direction: .sent)
        #expect(writer.recordCount == 0)
        #expect(try BTSnoopReader(path: path).records.isEmpty)
    }

    @Test func unwritablePathThrows() {
        #expect(throws: (any Error).self) { _ = try BTSnoopWriter(path: "/nonexistent-dir/x.btsnoop") }
    }

    @Test func concurrentWritersDoNotTearRecords() async throws {
        let path = temporaryFile("threads.btsnoop")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try BTSnoopWriter(path: path)
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<4 {
                group.addTask {
                    for i in 0..<250 {
                        writer.write(packet: [0x02, UInt8(task), UInt8(truncatingIfNeeded: i), 0x00, 0x00], direction: .received)
                    }
                }
            }
        }
        writer.close()
        let file = try BTSnoopReader(path: path, strict: true)
        #expect(file.records.count == 1000)
        #expect(file.records.allSatisfy { $0.packet.count == 5 && $0.packet[0] == 0x02 })
    }
}

@Suite struct BTSnoopReaderErrorTests {
    let header: [UInt8] = Array("btsnoop\0".utf8) + [0, 0, 0, 1, 0, 0, 0x03, 0xea]
    let record: [UInt8] = [0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0xdc, 0xdd, 0xb3, 0x0f, 0x2f, 0x80, 0x00,
                           0x01, 0x03, 0x0c, 0x00]

    @Test func parsesAHandBuiltFile() throws {
        let file = try BTSnoopReader(bytes: header + record + record)
        #expect(file.records.count == 2)
        #expect(file.records[0].packet == [0x01, 0x03, 0x0c, 0x00])
        #expect(file.records[0].date == Date(timeIntervalSince1970: 0))
        #expect(file.records[0].direction == .sent && file.records[0].isCommandOrEvent)
        #expect(!file.trailingPartialRecord)
    }

    @Test func rejectsBadHeaders() {
        #expect(throws: BTSnoopError.tooShortForHeader(size: 8)) { try BTSnoopReader(bytes: Array(header[0..<8])) }
        var magic = header
        magic[0] = 0x42
        #expect(throws: BTSnoopError.badMagic) { try BTSnoopReader(bytes: magic) }
        var version = header
        version[11] = 2
        #expect(throws: BTSnoopError.unsupportedVersion(2)) { try BTSnoopReader(bytes: version) }
        var datalink = header
        datalink[15] = 0xe9
        #expect(throws: BTSnoopError.unsupportedDatalink(1001)) { try BTSnoopReader(bytes: datalink) }
    }

    @Test func truncatedRecordsAreTypedErrorsOrFlagged() throws {
        let cut = header + record + record.dropLast(2)
        #expect(throws: BTSnoopError.truncatedRecord(index: 1, offset: 16 + 28)) { try BTSnoopReader(bytes: cut) }
        let lenient = try BTSnoopReader(bytes: cut, strict: false)
        #expect(lenient.records.count == 1 && lenient.trailingPartialRecord)
        let halfHeader = header + record.prefix(10)
        #expect(throws: BTSnoopError.truncatedRecord(index: 0, offset: 16)) { try BTSnoopReader(bytes: halfHeader) }
    }

    @Test func includedLongerThanOriginalIsRejected() {
        var bad = record
        bad[3] = 2  // original 2 < included 4
        #expect(throws: BTSnoopError.inconsistentLengths(index: 0, offset: 16)) { try BTSnoopReader(bytes: header + bad) }
    }

    @Test func hugeIncludedLengthDoesNotCrash() {
        var bad = record
        bad[0] = 0xff; bad[4] = 0xff  // 4 GiB claimed
        #expect(throws: BTSnoopError.truncatedRecord(index: 0, offset: 16)) { try BTSnoopReader(bytes: header + bad) }
    }

    @Test func everyPrefixOfARealFileParsesOrFailsCleanly() throws {
        let bytes = header + record + [0, 0, 0, 7, 0, 0, 0, 7, 0, 0, 0, 3, 0, 0, 0, 0] + [UInt8](repeating: 1, count: 8)
            + [0x04, 0x0e, 0x04, 0x01, 0x03, 0x0c, 0x00]
        for length in 0...bytes.count {
            _ = try? BTSnoopReader(bytes: Array(bytes[0..<length]))
            if length >= 16 {
                let lenient = try BTSnoopReader(bytes: Array(bytes[0..<length]), strict: false)
                #expect(lenient.records.count <= 2)
            }
        }
        #expect(try BTSnoopReader(bytes: bytes).records.count == 2)
    }
}

@Suite(.enabled(if: haveCaptures, "../shared/captures is missing (clone shared/ beside the repo)"))
struct BTSnoopCaptureTests {
    @Test func readsTheBumblePhoneCapture() throws {
        let file = try BTSnoopReader(path: phoneCapture, strict: true)
        #expect(file.records.count == 64)
        // Bring-up starts with HCI_Reset (opcode 0x0C03) and its Command Complete.
        #expect(file.records[0].packet == [0x01, 0x03, 0x0c, 0x00])
        #expect(file.records[0].direction == .sent && file.records[0].isCommandOrEvent)
        #expect(file.records[1].packet == [0x04, 0x0e, 0x04, 0x01, 0x03, 0x0c, 0x00])
        #expect(file.records[1].direction == .received)
        // Directions and the command/event flag agree with each packet's H4 indicator.
        for record in file.records {
            let indicator = try #require(record.packet.first)
            #expect(record.isCommandOrEvent == (indicator == 0x01 || indicator == 0x04))
            if indicator == 0x01 { #expect(record.direction == .sent) }
            if indicator == 0x04 { #expect(record.direction == .received) }
            #expect(!record.isTruncated)
        }
        let dates = file.records.map(\.date)
        #expect(dates == dates.sorted())
        // Captured in 2026.
        #expect(dates[0] > Date(timeIntervalSince1970: 1_767_225_600))
    }

    @Test(arguments: ["herald-phone-peripheral.btsnoop", "herald-central-reads-phone.btsnoop",
                      "herald-phone-receives-signal-writes.btsnoop", "herald-writer-signal-messages.btsnoop"])
    func rewritingEveryCaptureIsByteIdentical(name: String) throws {
        let source = capturesDir.appendingPathComponent(name).path
        let original = try Data(contentsOf: URL(fileURLWithPath: source))
        let file = try BTSnoopReader(path: source, strict: true)
        let path = temporaryFile(name)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try BTSnoopWriter(path: path)
        for record in file.records {
            writer.write(packet: record.packet, direction: record.direction, at: record.date)
        }
        writer.close()
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == original)
    }
}

// MARK: - Wireshark interop

let tsharkPath = ["/usr/bin/tshark", "/usr/local/bin/tshark"].first { FileManager.default.isExecutableFile(atPath: $0) }

func tshark(_ arguments: [String]) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: try #require(tsharkPath))
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: data, as: UTF8.self)
}

@Suite(.enabled(if: tsharkPath != nil, "tshark is not installed (apt-get install -y tshark)"), .serialized)
struct BTSnoopWiresharkTests {
    @Test func tsharkDecodesOurFileWithoutMalformedPackets() throws {
        let path = temporaryFile("tshark.btsnoop")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try BTSnoopWriter(path: path)
        for (packet, direction) in samplePackets { writer.write(packet: packet, direction: direction) }
        writer.close()
        let output = try tshark(["-r", path, "-V"])
        #expect(!output.contains("Malformed"), "\(output)")
        #expect(output.contains("Reset"))
        #expect(output.contains("Exchange MTU Request"))
        #expect(output.contains("Host to Controller") || output.contains("Sent"))
        // One summary line per record (tshark may add a "running as root" warning line).
        let summary = try tshark(["-r", path]).split(separator: "\n").filter { $0.contains("host") }
        #expect(summary.count == samplePackets.count, "\(summary)")
        #expect(summary[0].contains("Sent Reset"))
        #expect(summary[1].contains("Rcvd Command Complete"))
    }

    @Test func tsharkFlagsABrokenPacketSoTheCheckAboveCanFail() throws {
        // Command Complete claiming 4 parameter bytes but carrying 1.
        let path = temporaryFile("broken.btsnoop")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try BTSnoopWriter(path: path)
        writer.write(packet: [0x04, 0x0e, 0x04, 0x01], direction: .received)
        writer.close()
        let output = try tshark(["-r", path, "-V"])
        #expect(output.contains("Malformed") || output.contains("Expert Info"), "\(output)")
    }
}
