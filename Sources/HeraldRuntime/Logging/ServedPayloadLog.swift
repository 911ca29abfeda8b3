import Foundation

/// `served-payloads.csv`: every payload this device served, one row each time it changed
/// (`time,shortName,payload`). Not a file of the Herald reference apps: their `detection.csv` names
/// one payload, the first, so after a rotation (every 360 s for the Simple payload) the analysis could
/// no longer tell whose readings the new payload's were. With this file every payload a device served
/// is attributable to it.
public struct ServedPayloadLog: Sendable {
    public static let fileName = "served-payloads.csv"
    public static let header = "time,shortName,payload"

    /// The payload of the last row written.
    public private(set) var last: [UInt8]?

    public init() {}

    /// The row for serving `payload` at `time`, nil when it is the payload of the last row.
    public mutating func line(serving payload: [UInt8], at time: Date) -> String? {
        guard !payload.isEmpty, payload != last else { return nil }
        last = payload
        let hex = payload.map { String(format: "%02x", $0) }.joined()
        return "\(logTimestamp(time)),\(heraldCSV(payloadShortName(payload))),\(hex)"
    }
}
