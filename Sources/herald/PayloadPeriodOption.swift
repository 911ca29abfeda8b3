import ArgumentParser
import Herald
import HeraldRuntime

/// `--payload-period SECONDS` (hidden) on `wearable` and `keys derive`/`export`: a Simple payload period
/// shorter than the specification's 360 s, so a test can watch payloads and addresses rotate in
/// seconds rather than minutes. Every tool that makes or derives payloads for one run must be given
/// the same period (`KeyEpoch.secondsPerPeriod` says what changes).
struct PayloadPeriodOption: ParsableArguments {
    @Option(name: .long, parsing: .unconditional,
            help: ArgumentHelp("Payload period in seconds, for tests (the Simple payload specification's is 360).",
                               visibility: .hidden))
    var payloadPeriod: Int?

    func validate() throws {
        guard let payloadPeriod else { return }
        let allowed = KeyEpoch.allowedSecondsPerPeriod
        guard allowed.contains(Int64(payloadPeriod)) else {
            throw ValidationError("--payload-period must be \(allowed.lowerBound)...\(allowed.upperBound) seconds "
                                  + "(the Simple payload period is 360 s; shorter ones are for tests), got \(payloadPeriod)")
        }
    }

    /// The key schedule epoch `text` (ISO 8601, default the standard one) on this option's period grid.
    func epoch(_ text: String?) throws -> KeyEpoch {
        try KeyTools.epoch(text, secondsPerPeriod: payloadPeriod.map(Int64.init))
    }
}
