import ArgumentParser
import Foundation
import HeraldRuntime

/// `herald match`: which of the given matching keys were seen in Herald logs, when and how close.
struct MatchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "match",
        abstract: "Match payloads.csv in log directories against matching keys (CSV report on stdout)."
    )
    @Option(name: .long, help: "Matching keys: `herald keys export` CSV or one Base64 key per line.") var matchingKeys: String
    @Option(name: .long, parsing: .upToNextOption, help: "Log directories holding payloads.csv (and contacts.csv).") var logs: [String]
    @Flag(name: .long, help: "Also time contact identifier derivation alone and print the rate.") var benchmark = false

    func validate() throws { if logs.isEmpty { throw ValidationError("give at least one --logs DIR") } }

    func run() throws {
        func note(_ s: String) { FileHandle.standardError.write(Data((s + "\n").utf8)) }
        do { // KeyToolError prints as "Error: <sentence>", exit status 1
            let (keys, badKeys) = try MatchingKeysFile.load(matchingKeys)
            // A keys file with lines but no usable key is not a keys file: one line, exit 2 (MalformedFile).
            if let why = MalformedFile.refusal(path: matchingKeys, usable: keys.count, malformed: badKeys, format: "a matching keys file") {
                throw CLIError(.usage, why)
            }
            for b in badKeys { note("malformed: \(b)") }
            if keys.isEmpty { throw CLIError(.failed, "no matching keys in \(matchingKeys)") }
            if benchmark {
                let (n, s) = ContactIdentifierIndex.benchmarkDerivation(keys: keys)
                note(String(format: "derivation only: %d contact identifiers in %.3f s (%.0f per second)", n, s, Double(n) / s))
            }
            let index = ContactIdentifierIndex(keys: keys)
            let start = Date()
            // Matched before anything is printed: a damaged log stops the command with its one line.
            let (matches, malformed, rows) = try ContactMatcher.match(index: index, keys: keys, logDirectories: logs)
            note(String(format: "derived %d contact identifiers from %d matching keys in %.3f s (%.0f per second, including indexing)",
                        index.derived, keys.count, index.seconds, Double(index.derived) / max(index.seconds, 1e-9)))
            for m in malformed { note("malformed: \(m)") }
            print(ContactMatcher.csv(matches), terminator: "")
            note(String(format: "matched %d payload rows in %.3f s: %d match(es), %d malformed line(s)",
                        rows, Date().timeIntervalSince(start), matches.count, malformed.count + badKeys.count))
            if rows == 0 && !malformed.isEmpty {
                throw CLIError(.failed, "no usable payload rows in \(logs.joined(separator: ", ")) (\(malformed.count) malformed line(s))")
            }
        }
    }
}
