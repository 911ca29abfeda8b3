import BluetoothHost
import Foundation
import Herald

/// `herald check`'s rules: each with a stable ID, a one-line statement and the document it comes from,
/// judged from `CheckObservations` alone (no radio, no clock), so every verdict can be unit-tested.
///
/// Where the Herald documents leave a number open (how often to advertise, how steady), the figure is
/// the reference implementations' and the statement says so.
public enum HeraldCheck {
    public struct Rule: Sendable {
        public var id: String
        public var statement: String
        public var source: String
    }

    static let protocolDoc = "Herald Bluetooth protocol (herald-for-android/-ios BLESensorConfiguration)"
    static let simpleDoc = "Herald Simple Payload specification (heraldprox.io/specs/payload-simple)"
    static let beaconDoc = "Herald Beacon Payload specification (heraldprox.io/specs/payload-beacon)"
    static let extendedDoc = "Herald Payload Extended Data specification (heraldprox.io/specs/payload-extended)"

    /// Every rule, in the order they are reported.
    public static let rules: [Rule] = [
        Rule(id: "ADV-1", statement: "The advert carries the Herald service UUID (128-bit or 0xFCF6) or Herald manufacturer data (0xFFFA/0x05F1)",
             source: protocolDoc + ": serviceUUID, linuxFoundationServiceUUID, manufacturerIdForSensor"),
        Rule(id: "ADV-2", statement: "The device advertises connectable (ADV_IND), so a Herald central can read its payload",
             source: protocolDoc + ": BLETransmitter advertises connectable; Core 5.4 Vol 6 Part B 2.3.1.1"),
        Rule(id: "ADV-3", statement: "It advertises at least once a second (median interval ≤ 1,000 ms, plus the 10 ms advDelay; warn to 2,560 ms, fail beyond)",
             source: "herald-for-cpp Zephyr sample (~107 ms), Android ADVERTISE_MODE_LOW_LATENCY; Core 5.4 Vol 6 Part B 4.4.2.2.1"),
        Rule(id: "ADV-4", statement: "The advert interval is steady: no gap longer than 3× the median interval (or median + 2.5 s)",
             source: "Core 5.4 Vol 6 Part B 4.4.2.2.1 (advInterval + advDelay ≤ 10 ms); herald-for-cpp Zephyr sample"),
        Rule(id: "GATT-1", statement: "The GATT database has the Herald service (428132af-4746-42d3-801e-4572d65bfd9b or 0xFCF6)",
             source: protocolDoc + ": serviceUUID / linuxFoundationServiceUUID"),
        Rule(id: "GATT-2", statement: "The Herald service has the payload characteristic 3e98c0f8-… with the read property",
             source: protocolDoc + ": payloadCharacteristicUUID"),
        Rule(id: "GATT-3", statement: "It has a signal characteristic: f617b813-… with write (Android) or 0eb0d5f2-… with write and notify (iOS)",
             source: protocolDoc + ": androidSignalCharacteristicUUID, iosSignalCharacteristicUUID"),
        Rule(id: "GATT-4", statement: "A payload longer than ATT_MTU-1 octets is read whole with Read Blob",
             source: "Core 5.4 Vol 3 Part G 4.8.3; Herald payloads are up to 510 octets (" + simpleDoc + ")"),
        Rule(id: "PAY-1", statement: "The payload is a known type: Simple (0x10–0x17), venue beacon (0x30–0x37), or the reference's fixed test payload (0x08, warn)",
             source: simpleDoc + "; " + beaconDoc + "; herald-for-cpp ConcreteFixedPayloadDataSupplierV1"),
        Rule(id: "PAY-2", statement: "The payload's length is valid for its type (Simple ≥ 21, venue ≥ 9, at most 510; fixed test payload 13 octets)",
             source: simpleDoc + "; " + beaconDoc),
        Rule(id: "PAY-3", statement: "Country and state codes are big-endian (network order), as the specifications say; little-endian is flagged",
             source: simpleDoc + " (\"All numbers are Big Endian\"); the reference apps write little-endian"),
        Rule(id: "PAY-4", statement: "The extended data is well-formed sections (code, length, data; UTF-8 text, fixed sizes)",
             source: extendedDoc),
        Rule(id: "PAY-5", statement: "The payload stays the same within a payload period (a venue or test payload: always)",
             source: simpleDoc + ": the contact identifier changes every 86,400/240 = 360 s"),
        Rule(id: "PAY-6", statement: "A Simple payload changes at the payload period boundary",
             source: simpleDoc + ": contact identifier per period"),
        Rule(id: "SIG-1", statement: "A signal write of an RSSI message (02 + Int16) gets its Write Response",
             source: protocolDoc + ": SignalCharacteristicData.encodeWriteRssi"),
        Rule(id: "SIG-2", statement: "A signal write of a payload message (01 + Int16 length + payload) gets its Write Response",
             source: protocolDoc + ": SignalCharacteristicData.encodeWritePayload"),
        Rule(id: "SIG-3", statement: "A signal message written in 20-octet Write Requests is accepted fragment by fragment",
             source: protocolDoc + ": BLETransmitter reassembles signal writes (Android writes 20-octet chunks at ATT_MTU 23)"),
        Rule(id: "LINK-1", statement: "The device lets go of a link: after the central ends it, it advertises connectable again within 5 s",
             source: "Herald device lifecycle (a phone connects, reads, disconnects, and connects again later); Core 5.4 Vol 3 Part C 9.3.4"),
        Rule(id: "LINK-2", statement: "It accepts a second connection and serves its payload again",
             source: protocolDoc + ": phones read a device again (payloadDataUpdateTimeInterval)"),
    ]

    public static func rule(_ id: String) -> Rule {
        rules.first { $0.id == id } ?? Rule(id: id, statement: "", source: "")
    }

    static func verdict(_ id: String, _ status: CheckStatus, _ evidence: String) -> CheckVerdict {
        let r = rule(id)
        return CheckVerdict(rule: id, status: status, statement: r.statement, source: r.source, evidence: evidence)
    }

    /// Every rule's verdict, in `rules` order.
    public static func judge(_ o: CheckObservations) -> [CheckVerdict] {
        var out: [CheckVerdict] = []
        out += judgeAdverts(o)
        out += judgeGATT(o)
        out += judgePayload(o)
        out += judgeSignal(o)
        out += judgeLinks(o)
        return out
    }

    /// 0 when nothing failed, 1 when a rule failed (README "Errors and exit status").
    public static func exitStatus(_ verdicts: [CheckVerdict]) -> Int32 {
        verdicts.contains { $0.status == .fail } ? 1 : 0
    }
}
