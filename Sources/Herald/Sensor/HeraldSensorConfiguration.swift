import BluetoothHost

/// The sensor's timing (ms). Defaults follow the Herald reference apps.
public struct HeraldSensorConfiguration: Sendable {
    /// Our own connection timeout (`StackControl.connect` cancels the attempt then).
    public var connectionTimeout: UInt64 = 8_000
    /// A link we made on which the peer has sent no ATT PDU this long after it came up (our Exchange
    /// MTU unanswered) is closed as a failed attempt, rather than after the 30 s ATT transaction
    /// timeout: its host never saw the link. Bumble's virtual radio does this now and then (our
    /// capture: Connection Complete and our request; the Bumble phone's log: no connection at all).
    /// A peer that answered anything is left to the ATT timeout (Core 5.4 Vol 3 Part F 3.3.3).
    public var firstAnswerTimeout: UInt64 = 5_000
    /// A payload older than this is read again. Default: one Simple payload period (86 400 s / 240).
    public var payloadUpdateInterval: UInt64 = 360_000
    /// Read the payload by its characteristic UUID right after the MTU exchange (Core 5.4 Vol 3
    /// Part G 4.8.2), before any discovery, when nothing has to be written first; false walks the
    /// services and characteristics first, as the reference apps do (`HeraldCentralProcedure`).
    public var readsPayloadByUUID = true
    /// Payload sharing to one peer at most this often.
    public var sharingInterval: UInt64 = 15_000
    /// Payloads of devices seen within this window are shared.
    public var sharingWindow: UInt64 = 300_000
    /// Immediate send to all goes to Herald devices seen within this window.
    public var immediateSendWindow: UInt64 = 60_000
    /// Purge runs this often and removes devices out of range for `outOfRange`.
    public var purgeInterval: UInt64 = 60_000
    public var outOfRange: UInt64 = 3_600_000
    /// Consecutive connection failures before a device backs off (`HeraldDeviceDatabase.backOff`).
    public var maximumFailures = 5
    /// The failures in a row at which one more that is a link that failed to be established (0x3E)
    /// starts the back-off round; any other failure starts it at `maximumFailures`. The device was
    /// advertising a moment before, and in a crowd such failures come in runs from contention and
    /// busy controllers, not from a device gone (`HeraldCentral+Crowd`). Still bounded, for a device
    /// at the edge of range whose links fail the same way.
    public var maximumFailuresToEstablish = 10
    /// Only devices heard this recently are connected to (an old advert means the peer has gone).
    public var connectWindow: UInt64 = 10_000
    /// No connection attempt starts until this long after any link ended (ms): Zephyr 3.0.99's
    /// controller asserted in the central's connection setup (`ull_central.c:1027`) when LE Create
    /// Connection came 1 ms after a Disconnection Complete in a crowd (docs/crowd-issue-39.md); a
    /// few connection intervals let it finish with the link that ended.
    public var attemptDelayAfterDisconnection: UInt64 = 50
    /// Scanning duty cycle: nil scans continuously; otherwise scan `scanWindow` ms at the start of
    /// every `scanPeriod` (at most 30 s, so every device is heard at least once every 30 s).
    public var scanWindow: UInt64? = nil
    public var scanPeriod: UInt64 = 30_000
    /// Scan actively only until this long (ms) after the last scannable advert from an address that
    /// has not yet answered a scan request, passively otherwise (`HeraldCentral+Scanning` says why);
    /// nil scans actively throughout, as the reference apps do.
    public var activeScanHold: UInt64? = 1_000
    /// A device first heard is connected to after a random delay of up to this (ms), so that the
    /// centrals that heard the same advert answer different ones (`HeraldCentral+Crowd`).
    public var firstAttemptSpread: UInt64 = 400
    /// After a failed attempt or read the retry waits a random delay of up to this × 2^(failures in a
    /// row − 1), at most `retrySpreadLimit` (ms), besides an advert heard after the failure; after a
    /// link that failed to be established (0x3E, a lost race) of up to this, not doubled.
    public var retrySpread: UInt64 = 400
    public var retrySpreadLimit: UInt64 = 3_200
    public init() {}
}
