import Foundation

/// What `herald check` saw of one device under test: the facts the rules judge, and nothing of how
/// they were gathered, so the judging (`HeraldCheck.judge`) is a pure function a unit test can feed.
public struct CheckObservations {
    /// One advertising report of the device (advert or scan response).
    public struct Advert: Sendable, Equatable {
        /// Milliseconds since the observation started.
        public var time: UInt64
        public var connectable: Bool
        public var scanResponse: Bool
        /// The AD structures as sent.
        public var data: [UInt8]

        public init(time: UInt64, connectable: Bool, scanResponse: Bool, data: [UInt8]) {
            self.time = time; self.connectable = connectable; self.scanResponse = scanResponse; self.data = data
        }
    }

    /// One payload read over GATT.
    public struct PayloadRead: Sendable, Equatable {
        /// Unix seconds of the read, for the payload period it fell in.
        public var unixSeconds: Double
        public var bytes: [UInt8]
        /// The ATT_MTU of the link it was read on (Read Blob is needed past ATT_MTU-1 octets).
        public var mtu: Int
        /// 1: the first link (after discovery); 2: the second (`--active`).
        public var link: Int

        public init(unixSeconds: Double, bytes: [UInt8], mtu: Int, link: Int = 1) {
            self.unixSeconds = unixSeconds; self.bytes = bytes; self.mtu = mtu; self.link = link
        }
    }

    /// A write to the signal characteristic (`--active`).
    public struct SignalWrite: Sendable, Equatable {
        public enum Kind: String, Sendable, Equatable { case rssi, payload, fragmented }
        public var kind: Kind
        /// The message's length and how many Write Requests carried it.
        public var octets: Int
        public var fragments: Int
        /// nil: every request got its Write Response; else what went wrong.
        public var error: String?

        public init(kind: Kind, octets: Int, fragments: Int, error: String?) {
            self.kind = kind; self.octets = octets; self.fragments = fragments; self.error = error
        }
    }

    /// `AA:BB:CC:DD:EE:FF` and `random`/`public`.
    public var address: String
    public var addressType: String
    /// Seconds the adverts were observed for.
    public var observedSeconds: Double
    public var adverts: [Advert] = []
    /// Why no connection was made (nil: connected, or not tried).
    public var connectionError: String?
    /// The database as discovered (nil: no connection).
    public var gatt: GATTDump?
    public var payloadReads: [PayloadRead] = []
    /// Why the payload could not be read, when the payload characteristic was there.
    public var payloadReadError: String?
    /// Whether the run wrote the signal characteristic and reconnected (`--active`).
    public var active: Bool
    public var writes: [SignalWrite] = []
    /// Milliseconds from the end of our first link to the device's next connectable advert; nil when
    /// none came within `releaseWindow` (or the link never ended).
    public var readvertisedAfter: UInt64?
    /// Whether our first link ended (we asked; the controller confirmed).
    public var firstLinkEnded = false
    /// Links the device (or the radio) ended before our discovery on them finished, in order. After
    /// each, `herald check` waits for the device's next connectable advert and dumps again on a new
    /// link, up to `CheckRunner.dumpLinks` links: the herald-for-cpp wearable ends every link at each
    /// restart of its scanning and advertising, now and then mid-discovery.
    public var cutLinks: [CutLink] = []

    public struct CutLink: Sendable, Equatable {
        /// From the link's LE Connection Complete to its Disconnection Complete.
        public var milliseconds: UInt64
        /// The Disconnection Complete's reason: 0x13 the device ended it, 0x08 supervision timeout.
        public var reason: UInt8

        public init(milliseconds: UInt64, reason: UInt8) {
            self.milliseconds = milliseconds; self.reason = reason
        }
    }
    /// Seconds we waited for an advert after the link ended.
    public var releaseWindow: Double = 5
    /// `--active`: nil when the reconnection was not tried, else its outcome (nil error: connected).
    public var reconnected: Bool?
    public var reconnectionError: String?
    /// The Simple payload period the device is judged against (360 s; shorter for tests).
    public var payloadPeriod: Double = 360

    public init(address: String, addressType: String, observedSeconds: Double, active: Bool) {
        self.address = address; self.addressType = addressType; self.observedSeconds = observedSeconds; self.active = active
    }
}

/// A rule's verdict. `warn`: allowed, but not as the specification says (e.g. the reference apps'
/// little-endian codes); `skip`: not observable in this run, with the reason as evidence.
public enum CheckStatus: String, Sendable, Equatable, Codable, Comparable {
    case pass, warn, fail, skip

    public var word: String { rawValue.uppercased() }

    public static func < (a: CheckStatus, b: CheckStatus) -> Bool { a.rank < b.rank }
    var rank: Int {
        switch self {
        case .pass: 0
        case .skip: 1
        case .warn: 2
        case .fail: 3
        }
    }
}

/// One rule's result, as text, JSON and the HTML report show it.
public struct CheckVerdict: Sendable, Equatable, Codable {
    /// Stable identifier (`ADV-1`, `PAY-3`, ...): tests and users refer to rules by it.
    public var rule: String
    public var status: CheckStatus
    /// The rule in one line.
    public var statement: String
    /// The Herald (or Bluetooth Core) document and section it comes from.
    public var source: String
    /// What was observed, or why it could not be.
    public var evidence: String

    public init(rule: String, status: CheckStatus, statement: String, source: String, evidence: String) {
        self.rule = rule; self.status = status; self.statement = statement; self.source = source; self.evidence = evidence
    }
}
