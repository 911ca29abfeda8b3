import BluetoothHost
import Foundation
import Testing
@testable import HeraldRuntime

/// `HeraldCheck.judge` from observations made by hand: each rule passes on a conformant device and
/// fails (or warns, or skips) on the one fault it names, and no other rule changes with it.
private let heraldAdvert: [UInt8] = [0x02, 0x01, 0x06, 0x03, 0x03, 0xF6, 0xFC]
private let simple: [UInt8] = [0x10, 0x03, 0x3A, 0x00, 0x04] + [UInt8](repeating: 0xAB, count: 16)

private func gatt(payloadProperties: UInt8 = 0x02, signal: Bool = true) -> GATTDump {
    var d = GATTDump(address: "C0:11:22:33:44:55")
    var s = GATTDump.Service(uuid: HeraldCheck.serviceTexts[0], start: 0x0E, end: 0x12)
    if signal {
        s.characteristics.append(.init(uuid: HeraldCheck.androidSignalText, declaration: 0x0F, handle: 0x10, properties: 0x08,
                                       propertyNames: ["write"]))
    }
    s.characteristics.append(.init(uuid: HeraldCheck.payloadText, declaration: 0x11, handle: 0x12, properties: payloadProperties,
                                   propertyNames: ["read"], value: simple.map { String(format: "%02x", $0) }.joined()))
    d.services = [s]
    return d
}

/// A device that passes every rule this run can observe.
private func conformant(payload: [UInt8] = simple, interval: UInt64 = 200) -> CheckObservations {
    var o = CheckObservations(address: "C0:11:22:33:44:55", addressType: "random", observedSeconds: 5, active: true)
    o.adverts = (0..<10).map { .init(time: UInt64($0) * interval, connectable: true, scanResponse: false, data: heraldAdvert) }
    o.gatt = gatt()
    o.payloadReads = [.init(unixSeconds: 3600 + 10, bytes: payload, mtu: 23), .init(unixSeconds: 3600 + 20, bytes: payload, mtu: 23, link: 2)]
    o.writes = [.init(kind: .rssi, octets: 3, fragments: 1, error: nil), .init(kind: .payload, octets: 16, fragments: 1, error: nil),
                .init(kind: .fragmented, octets: 24, fragments: 2, error: nil)]
    o.firstLinkEnded = true
    o.readvertisedAfter = 300
    o.reconnected = true
    return o
}

private func statuses(_ o: CheckObservations) -> [String: CheckStatus] {
    Dictionary(uniqueKeysWithValues: HeraldCheck.judge(o).map { ($0.rule, $0.status) })
}

/// The rules whose status differs from the conformant device's.
private func changed(_ o: CheckObservations) -> [String: CheckStatus] {
    let base = statuses(conformant()), now = statuses(o)
    return now.filter { base[$0.key] != $0.value }
}

@Suite struct HeraldCheckTests {
    @Test func conformantDevicePassesAndEveryRuleIsReportedOnce() {
        let verdicts = HeraldCheck.judge(conformant())
        #expect(verdicts.map(\.rule) == HeraldCheck.rules.map(\.id))
        #expect(verdicts.filter { $0.status == .fail || $0.status == .warn }.isEmpty)
        // Short Simple payload, one period, no extended data: only these cannot be observed.
        #expect(Set(verdicts.filter { $0.status == .skip }.map(\.rule)) == ["GATT-4", "PAY-4", "PAY-6"])
        #expect(HeraldCheck.exitStatus(verdicts) == 0)
        #expect(verdicts.allSatisfy { !$0.statement.isEmpty && !$0.source.isEmpty && !$0.evidence.isEmpty })
    }

    @Test func advertFaults() {
        var o = conformant()
        o.adverts = o.adverts.map { var a = $0; a.data = [0x02, 0x01, 0x06]; return a }
        #expect(changed(o) == ["ADV-1": .fail])
        o = conformant()
        o.adverts = o.adverts.map { var a = $0; a.connectable = false; return a }
        #expect(changed(o) == ["ADV-2": .fail])
        #expect(changed(conformant(interval: 1_500)) == ["ADV-3": .warn])
        #expect(changed(conformant(interval: 3_000)) == ["ADV-3": .fail])
        // A 1,000 ms advertiser measures a little more (advDelay, up to 10 ms per event): still a pass.
        #expect(changed(conformant(interval: 1_008)) == [:])
        // A 900 ms advertiser of which the scanner missed 2 of 10 adverts: gaps of 1,800 ms pull the mean
        // to 1,157 ms, the median stays 900.
        o = conformant(interval: 900)
        o.adverts.remove(at: 7)
        o.adverts.remove(at: 3)
        #expect(changed(o) == [:])
        o = conformant()
        o.adverts[9].time += 4_000  // a 4.2 s pause
        #expect(changed(o)["ADV-4"] == .fail)
    }

    @Test func databaseFaults() {
        var o = conformant()
        o.gatt?.services[0].uuid = "180f"
        let c = changed(o)
        #expect(c["GATT-1"] == .fail && c.values.filter { $0 == .fail }.count == 1)
        o = conformant()
        o.gatt = gatt(payloadProperties: 0x08)
        #expect(changed(o) == ["GATT-2": .fail])
        o = conformant()
        o.gatt = gatt(signal: false)
        #expect(changed(o) == ["GATT-3": .fail])
    }

    @Test func readBlob() {
        let long = [0x30, 0x03, 0x3A, 0x00, 0x04, 0, 1, 0xE2, 0x40, 0x10, 20] + [UInt8](repeating: 0x41, count: 20)
        #expect(statuses(conformant(payload: long))["GATT-4"] == .pass)
        var o = conformant()
        o.payloadReads = []
        o.gatt?.services[0].characteristics[1].value = nil
        o.gatt?.services[0].characteristics[1].partialLength = 22
        o.gatt?.services[0].characteristics[1].error = "ATT error 0x07 on handle 0x0012"
        #expect(statuses(o)["GATT-4"] == .fail)
    }

    @Test func payloadTypesLengthsAndByteOrder() {
        #expect(changed(conformant(payload: [0x50] + simple.dropFirst()))["PAY-1"] == .fail)
        #expect(changed(conformant(payload: Array(simple.prefix(15)))) == ["PAY-2": .fail])
        // 826 little-endian (3a 03), as the reference apps write it.
        let le: [UInt8] = [0x10, 0x3A, 0x03, 0x04, 0x00] + simple.dropFirst(5)
        let v = HeraldCheck.judge(conformant(payload: le)).first { $0.rule == "PAY-3" }
        #expect(v?.status == .warn && v?.evidence.contains("country 826, state 4") == true)
        // The reference's fixed test payload: known, flagged, its codes little-endian.
        let fixed: [UInt8] = [0x08, 0x3A, 0x03, 0x00, 0x00, 0xD2, 0x02, 0x96, 0x49, 0, 0, 0, 0]
        let s = statuses(conformant(payload: fixed))
        #expect(s["PAY-1"] == .warn && s["PAY-2"] == .pass && s["PAY-3"] == .warn && s["PAY-4"] == .skip && s["PAY-6"] == .skip)
    }

    @Test func extendedData() {
        let good = simple + [0x10, 0x03, 0x41, 0x42, 0x43]
        #expect(statuses(conformant(payload: good))["PAY-4"] == .pass)
        let truncated = simple + [0x10, 0x09, 0x41]
        // 24 octets: also read with Read Blob (GATT-4 passes); nothing else changes.
        #expect(changed(conformant(payload: truncated)).filter { $0.value != .pass } == ["PAY-4": .fail])
    }

    @Test func payloadPeriods() {
        var o = conformant()
        o.payloadReads[1].bytes[10] ^= 1
        #expect(changed(o) == ["PAY-5": .fail])
        o = conformant()
        o.payloadReads[1].unixSeconds = 3600 + 400  // the next 360 s period
        #expect(statuses(o)["PAY-6"] == .fail)      // ...serving the same payload
        o.payloadReads[1].bytes[10] ^= 1
        #expect(statuses(o)["PAY-6"] == .pass)
    }

    @Test func signalAndLinkFaults() {
        var o = conformant()
        o.writes[2].error = "fragment 2 of 2: ATT error 0x0d on handle 0x0010"
        #expect(changed(o) == ["SIG-3": .fail])
        o = conformant()
        o.readvertisedAfter = nil
        o.reconnected = nil
        #expect(changed(o) == ["LINK-1": .fail, "LINK-2": .skip])
        o = conformant()
        o.active = false
        o.reconnected = nil
        o.writes = []
        o.payloadReads.removeLast()
        #expect(Set(changed(o).keys) == ["SIG-1", "SIG-2", "SIG-3", "LINK-2", "PAY-5"])
        #expect(changed(o).values.allSatisfy { $0 == .skip })
    }

    @Test func noLinkSkipsWhatNeedsOne() {
        var o = conformant()
        o.gatt = nil
        o.payloadReads = []
        o.connectionError = "no connection within 8 s"
        o.reconnected = nil
        o.writes = []
        let v = HeraldCheck.judge(o)
        #expect(v.filter { $0.status == .fail }.isEmpty)
        #expect(v.filter { $0.rule.hasPrefix("GATT") }.allSatisfy { $0.status == .skip && $0.evidence.contains("8 s") })
    }

    /// A connection that never came to a resolvable private address says that the address may have
    /// changed (a Herald device's does every payload period); to a static one, just the timeout.
    @Test func aTimeoutToAResolvablePrivateAddressSaysItMayHaveChanged() {
        let rpa = DeviceAddress(type: .randomDevice, address: BDAddress(displayOrder: 0x42, 0xE4, 0x6E, 0x5C, 0xF4, 0x0C))
        let beacon = DeviceAddress(type: .randomDevice, address: BDAddress(displayOrder: 0xCC, 0xD7, 0x9D, 0x3A, 0x55, 0x68))
        #expect(CheckRunner.connectionError(.connectionTimeout, peer: rpa).contains("run the check again"))
        #expect(CheckRunner.connectionError(.connectionTimeout, peer: beacon) == "no connection within 8 s")
        #expect(CheckRunner.connectionError(HCIStatus(rawValue: 0x3E), peer: rpa) == "connection failed (status 0x3E)")
    }

    @Test func textAndJSONRendering() throws {
        let v = HeraldCheck.judge(conformant())
        let text = CheckReport.text(v, device: "C0:11:22:33:44:55 (random)")
        #expect(text.split(separator: "\n").count == v.count + 2)
        #expect(text.contains("PASS ADV-1"))
        let lines = CheckReport.jsonLines(v, device: "d").split(separator: "\n")
        #expect(lines.count == v.count)
        let first = try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: String]
        #expect(first?["rule"] == "ADV-1" && first?["status"] == "pass" && first?["source"] != nil && first?["evidence"] != nil)
        let html = CheckReport.html(v, device: "d", title: "t", summary: nil, durationSeconds: 5)
        #expect(html.contains("<td class=\"s\">PASS</td>") && !html.contains("<script"))
    }
}
