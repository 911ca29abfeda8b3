import Foundation

/// Set by SIGINT or SIGTERM, so a run loop can stop cleanly (flush logs, disable the radio).
public final class SignalFlag: @unchecked Sendable {
    nonisolated(unsafe) private static var raised: sig_atomic_t = 0
    private init() {}

    /// Installs handlers for SIGINT and SIGTERM; safe to call more than once.
    public static func install() -> SignalFlag {
        signal(SIGINT) { _ in SignalFlag.raised = 1 }
        signal(SIGTERM) { _ in SignalFlag.raised = 1 }
        return SignalFlag()
    }

    public var isSet: Bool { SignalFlag.raised != 0 }
}
