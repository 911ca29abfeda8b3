import Foundation
import Testing
@testable import HeraldRuntime

/// One voice for errors (`herald <command>: <what> (<why>)`), the reason in words and never a raw
/// NSError dump, one exit status table; and the wearable's secret kept out of its log directory.
@Suite struct CommandErrorsTests {
    @Test func lineNamesTheCommandThenWhatThenWhy() {
        #expect(CommandMessage.line(command: "scan", what: "cannot write r.html", why: "permission denied")
            == "herald scan: cannot write r.html (permission denied)")
        #expect(CommandMessage.line(command: "keys derive", what: "bad time") == "herald keys derive: bad time")
        #expect(CommandMessage.line(command: "", what: "unexpected argument 'frob'") == "herald: unexpected argument 'frob'")
    }

    @Test func foundationFileErrorsBecomeTheirReasonNotADump() throws {
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("herald-no-such-\(UUID().uuidString)/x")
        // Foundation's own error, as createDirectory and Data(contentsOf:) throw it.
        var caught: Error?
        do { _ = try Data(contentsOf: missing) } catch { caught = error }
        let reason = CommandMessage.reason(try #require(caught))
        #expect(reason == "no such file or directory")
        #expect(!reason.contains("NSCocoaErrorDomain") && !reason.contains("Domain="))
        #expect(CommandMessage.reason(CocoaError(.fileReadNoPermission)) == "permission denied")
        #expect(CommandMessage.reason(POSIXError(.ENOSPC)) == "no space left on device")
    }

    @Test func readTextSaysWhichFileAndWhy() {
        #expect(throws: FileProblem(path: "emptyA/contacts.csv", action: "read", why: "no such file or directory")) {
            _ = try CommandMessage.readText("emptyA/contacts.csv")
        }
        let problem = FileProblem(path: "k.csv", action: "read", what: "matching keys file", why: "permission denied")
        #expect(problem.description == "cannot read matching keys file k.csv (permission denied)")
    }

    @Test func exitStatusTableIsOneNumberPerMeaning() {
        let codes = ExitStatus.allCases.map(\.rawValue)
        #expect(Set(codes).count == codes.count)
        #expect(ExitStatus.usage.rawValue == 2 && ExitStatus.noController.rawValue == 3 && ExitStatus.noAnswer.rawValue == 5)
        #expect(ExitStatus.allCases.allSatisfy { !$0.meaning.isEmpty })
    }

    @Test func readmeListsEveryExitStatus() throws {
        let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("README.md")
        let text = try String(contentsOf: readme, encoding: .utf8)
        for status in ExitStatus.allCases {
            #expect(text.contains("| \(status.rawValue) | \(status.meaning) |"), "README's exit status table lacks \(status)")
        }
    }

    // MARK: The wearable's secret key

    @Test func defaultKeyDirectoryIsOutsideTheLogsAndChoosable() {
        #expect(WearableSecret.defaultDirectory(environment: ["HERALD_KEYS_DIR": "/k", "HOME": "/h"]) == "/k")
        #expect(WearableSecret.defaultDirectory(environment: ["XDG_DATA_HOME": "/d", "HOME": "/h"]) == "/d/herald/keys")
        #expect(WearableSecret.defaultDirectory(environment: ["HOME": "/h"]) == "/h/.local/share/herald/keys")
    }

    @Test func oneKeyPerLogDirectoryKeptOutsideIt() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("herald-secret-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let keys = root + "/keys"
        let a = try WearableSecret.resolve(logDirectory: root + "/logs-a", keysDirectory: keys)
        #expect(a.source == .created)
        #expect(a.path.hasPrefix(keys + "/logs-a-"))
        #expect(!FileManager.default.fileExists(atPath: root + "/logs-a/" + WearableSecret.legacyName))
        let again = try WearableSecret.resolve(logDirectory: root + "/logs-a", keysDirectory: keys)
        #expect(again.path == a.path && again.source == .existing)
        let b = try WearableSecret.resolve(logDirectory: root + "/logs-b", keysDirectory: keys)
        #expect(b.path != a.path)
        let mode = try FileManager.default.attributesOfItem(atPath: keys)[.posixPermissions] as? Int
        #expect(mode == 0o700)
        #expect(try SecretKeyFile.loadSecretKey(a.path).count == 2048)
    }

    @Test func aKeyLeftInTheLogDirectoryByAnEarlierVersionKeepsWorking() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("herald-secret-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root + "/logs", withIntermediateDirectories: true)
        try SecretKeyFile.create(at: root + "/logs/" + WearableSecret.legacyName)
        let found = try WearableSecret.resolve(logDirectory: root + "/logs", keysDirectory: root + "/keys")
        #expect(found.source == .legacyInLogDirectory)
        #expect(found.path == root + "/logs/" + WearableSecret.legacyName)
    }
}
