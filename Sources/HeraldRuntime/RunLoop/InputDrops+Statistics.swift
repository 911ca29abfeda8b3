import BluetoothHost

/// `HCIHost.drops` as the runtime shows it with `--stats`: a count per kind, and the last few drops
/// named, each with its event code, subevent and reason.
extension HCIInputDropRecording {
    /// The counts, named as in `herald-stats`.
    public var statistics: [(String, Int)] {
        [("droppedEventPackets", count(of: .eventPacket)), ("droppedCommandCompletes", count(of: .commandComplete)),
         ("droppedCommandStatuses", count(of: .commandStatus)),
         ("droppedLEMetaWithoutSubevent", count(of: .leMetaWithoutSubevent)),
         ("droppedLinkEvents", count(of: .linkEvent)), ("droppedAdvertisingReports", count(of: .advertisingReport))]
    }

    /// The drops in the ring, oldest first, as sentences.
    public var recentDescriptions: [String] { (0..<recentCount).map { recent($0).description } }
}

extension HCIDrop: CustomStringConvertible {
    /// e.g. `event 0x3E subevent 0x02 (advertising report): Event_Type 7 is not a valid value`.
    public var description: String {
        var s = "event " + hex(eventCode)
        if let subevent { s += " subevent " + hex(subevent) }
        return s + " (\(kind.name)): \(reason.sentence)"
    }

    private func hex(_ v: UInt8) -> String { "0x" + (v < 0x10 ? "0" : "") + String(v, radix: 16, uppercase: true) }
}

extension HCIDropKind {
    var name: String {
        switch self {
        case .eventPacket: "event packet"
        case .commandComplete: "Command Complete"
        case .commandStatus: "Command Status"
        case .leMetaWithoutSubevent: "LE Meta without a subevent"
        case .linkEvent: "link event"
        case .advertisingReport: "advertising report"
        }
    }
}

extension DecodeError {
    /// What was wrong, in words, with the field the parser names.
    var sentence: String {
        switch self {
        case let .truncated(needed, available): "\(needed) octets needed, \(available) present"
        case let .badLength(field, declared, limit): "\(field) \(declared) exceeds \(limit)"
        case let .unexpectedCode(field, value): "unexpected \(field) \(value)"
        case let .invalidValue(field, value): "\(field) \(value) is not a valid value"
        case let .trailingBytes(count): "\(count) octets after the last field"
        }
    }
}
