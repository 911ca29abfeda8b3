import Testing
@testable import BluetoothHost

private func meta(_ subevent: UInt8, _ paramsHex: String) -> [UInt8] {
    let p = hex(paramsHex)
    return [0x3E, UInt8(p.count + 1), subevent] + p
}

/// A report copied out of its borrowed view, so tests can compare it.
private struct Seen: Equatable {
    var kind: AdvertisingReportKind
    var address: DeviceAddress
    var rssi: Int8?
    var txPower: Int8?
    var sid: UInt8?
    var data: [UInt8]
}

private func copy(_ r: borrowing AdvertisingReport) -> Seen {
    var data: [UInt8] = []
    for i in r.data.indices { data.append(r.data[i]) }
    return Seen(kind: r.kind, address: r.address, rssi: r.rssi, txPower: r.txPower, sid: r.advertisingSID, data: data)
}

/// Everything a report event yields: the reports before any error, the error, and whether the
/// iterator stayed finished after it.
private struct Outcome {
    var reports: [Seen] = []
    var error: DecodeError?
    var yieldedAfterError = false
}

private func legacy(_ event: [UInt8]) -> Outcome {
    var out = Outcome()
    do {
        let m = try HCILEMetaEvent(try HCIEventPacket(parsing: event.span))
        var it = try HCILEAdvertisingReportEvent(m)
        do {
            while let r = try it.next() { out.reports.append(copy(r)) }
        } catch {
            out.error = error
            do { if let r = try it.next() { _ = r.kind; out.yieldedAfterError = true } } catch { out.yieldedAfterError = true }
        }
    } catch {
        out.error = error
    }
    return out
}

private func extended(_ event: [UInt8]) -> Outcome {
    var out = Outcome()
    do {
        let m = try HCILEMetaEvent(try HCIEventPacket(parsing: event.span))
        var it = try HCILEExtendedAdvertisingReportEvent(m)
        do {
            while let r = try it.next() { out.reports.append(copy(r)) }
        } catch {
            out.error = error
            do { if let r = try it.next() { _ = r.kind; out.yieldedAfterError = true } } catch { out.yieldedAfterError = true }
        }
    } catch {
        out.error = error
    }
    return out
}

private let phone = DeviceAddress(type: .randomDevice, address: BDAddress(displayOrder: 0xF0, 0xF1, 0xF2, 0xF3, 0xF4, 0xF5))
/// Herald's advertising data from the captures: flags, Herald service UUID, manufacturer 0xFFFA.
private let heraldAD = "02010611079bfd5bd672451e80d3424647af32814209fffaff47bc67741cca"
/// One extended report as Bumble sends it (capture: herald-central-reads-phone), without Num_Reports.
private func bumbleReport(eventType: String) -> String {
    "\(eventType) 01 f5f4f3f2f1f0 01 01 00 00 ce 0000 00 000000000000 1f \(heraldAD)"
}

@Suite struct HCIAdvertisingReportTests {
    @Test func legacyKindsMapToExtendedBits() throws {
        let advInd = try AdvertisingReportKind(legacyEventType: 0)
        #expect(advInd.isConnectable && advInd.isScannable && advInd.isLegacy && !advInd.isDirected && !advInd.isScanResponse)
        let direct = try AdvertisingReportKind(legacyEventType: 1)
        #expect(direct.isConnectable && direct.isDirected && !direct.isScannable)
        let scanInd = try AdvertisingReportKind(legacyEventType: 2)
        #expect(scanInd.isScannable && !scanInd.isConnectable)
        let nonconn = try AdvertisingReportKind(legacyEventType: 3)
        #expect(nonconn == .legacy)
        let scanRsp = try AdvertisingReportKind(legacyEventType: 4)
        #expect(scanRsp.isScanResponse && scanRsp.isLegacy && !scanRsp.isConnectable)
        #expect(throws: DecodeError.invalidValue(field: "Event_Type", value: 5)) { _ = try AdvertisingReportKind(legacyEventType: 5) }
        let incomplete = AdvertisingReportKind(rawValue: 0x0021)
        #expect(incomplete.dataStatus == 1 && !incomplete.isDataComplete && incomplete.isConnectable)
    }

    @Test func legacyReportsTwoInOneEvent() {
        let event = meta(
            0x02,
            "02" + "00 01 f5f4f3f2f1f0 07 02010603 03aafe c4" + "04 00 665544332211 05 0409414243 7f")
        let out = legacy(event)
        #expect(out.error == nil)
        #expect(out.reports.count == 2)
        guard out.reports.count == 2 else { return }
        #expect(out.reports[0] == Seen(kind: try! AdvertisingReportKind(legacyEventType: 0), address: phone, rssi: -60, txPower: nil, sid: nil, data: hex("02010603 03aafe")))
        #expect(out.reports[1].kind.isScanResponse)
        #expect(out.reports[1].address == DeviceAddress(type: .publicDevice, address: BDAddress(displayOrder: 0x11, 0x22, 0x33, 0x44, 0x55, 0x66)))
        #expect(out.reports[1].rssi == nil)  // 0x7F: not available
        #expect(out.reports[1].data == hex("0409414243"))
    }

    @Test func legacyReportErrors() {
        // Data length runs past the event: the first report fails, iteration ends.
        let truncated = legacy(meta(0x02, "01 00 01 f5f4f3f2f1f0 07 0201060303"))
        #expect(truncated.reports.isEmpty && truncated.error == .truncated(needed: 17, available: 15))
        #expect(!truncated.yieldedAfterError)
        // The second report is cut short (no RSSI): the first one still arrives.
        let second = legacy(meta(0x02, "02 03 01 f5f4f3f2f1f0 00 c4 03 01 f5f4f3f2f1f0 00"))
        #expect(second.reports.count == 1 && second.error == .truncated(needed: 21, available: 20))
        // Legacy data is at most 31 octets.
        let long = legacy(meta(0x02, "01 00 01 f5f4f3f2f1f0 20" + String(repeating: "00", count: 32) + "c4"))
        #expect(long.error == .badLength(field: "Data_Length", declared: 32, limit: 31))
        // Bytes after the declared reports.
        let trailing = legacy(meta(0x02, "01 03 01 f5f4f3f2f1f0 00 c4 00"))
        #expect(trailing.reports.count == 1 && trailing.error == .trailingBytes(count: 1) && !trailing.yieldedAfterError)
        // Unknown event type, bad address type, no reports at all.
        #expect(legacy(meta(0x02, "01 07 01 f5f4f3f2f1f0 00 c4")).error == .invalidValue(field: "Event_Type", value: 7))
        #expect(legacy(meta(0x02, "01 00 ff f5f4f3f2f1f0 00 c4")).error == .invalidValue(field: "Address_Type", value: 0xFF))
        #expect(legacy(meta(0x02, "00")).error == .invalidValue(field: "Num_Reports", value: 0))
        // An extended report event is not a legacy one.
        #expect(legacy(meta(0x0D, "01" + bumbleReport(eventType: "0100"))).error == .unexpectedCode(field: "LE subevent code", value: 0x0D))
    }

    @Test func extendedReportsFromBumbleCapture() {
        // Bumble answers a legacy scan with extended reports: the advertisement, then the same data
        // flagged as a scan response (capture: herald-central-reads-phone, both events verbatim).
        let first = hex("3e390d01 0100 01 f5f4f3f2f1f0 01 01 00 00 ce 0000 00 000000000000 1f" + heraldAD)
        let second = hex("3e390d01 0800 01 f5f4f3f2f1f0 01 01 00 00 ce 0000 00 000000000000 1f" + heraldAD)
        let a = extended(first)
        let b = extended(second)
        #expect(a.error == nil && b.error == nil)
        #expect(a.reports == [Seen(kind: .connectable, address: phone, rssi: -50, txPower: 0, sid: 0, data: hex(heraldAD))])
        #expect(b.reports.count == 1 && b.reports.first?.kind.isScanResponse == true && b.reports.first?.kind.isLegacy == false)
        #expect(b.reports.first?.data == hex(heraldAD))
    }

    @Test func extendedReportsSeveralAndUnavailableFields() {
        // A legacy ADV_IND seen through the extended event (0x13), Tx power and RSSI unavailable,
        // no ADI (SID 0xFF); then an anonymous extended advertisement with 2 octets of data.
        let legacyInd = "1300 00 665544332211 01 00 ff 7f 7f 0000 00 000000000000 03 020106"
        let anonymous = "0000 ff 000000000000 01 02 05 f8 b0 0000 00 000000000000 02 abcd"
        let out = extended(meta(0x0D, "02" + legacyInd + anonymous))
        #expect(out.error == nil && out.reports.count == 2)
        guard out.reports.count == 2 else { return }
        let r0 = out.reports[0]
        #expect(r0.kind.isLegacy && r0.kind.isConnectable && r0.kind.isScannable && r0.rssi == nil && r0.txPower == nil && r0.sid == nil)
        #expect(r0.address.type == .publicDevice && r0.data == hex("020106"))
        let r1 = out.reports[1]
        #expect(r1.address.type == .anonymous && r1.txPower == -8 && r1.rssi == -80 && r1.sid == 5 && r1.data == hex("abcd"))
    }

    @Test func extendedReportErrors() {
        // Data length past the end of the event.
        let cut = extended(meta(0x0D, "01 0100 01 f5f4f3f2f1f0 01 01 00 00 ce 0000 00 000000000000 1f 0201"))
        #expect(cut.reports.isEmpty && cut.error == .truncated(needed: 56, available: 27) && !cut.yieldedAfterError)
        // Fixed part of the second report cut short.
        let half = extended(meta(0x0D, "02" + bumbleReport(eventType: "0100") + "0100 01 f5f4"))
        #expect(half.reports.count == 1 && half.error == .truncated(needed: 62, available: 61))
        // Count says one, two are present.
        let extra = extended(meta(0x0D, "01" + bumbleReport(eventType: "0100") + "00"))
        #expect(extra.reports.count == 1 && extra.error == .trailingBytes(count: 1))
        #expect(extended(meta(0x0D, "01 0100 04 f5f4f3f2f1f0 01 01 00 00 ce 0000 00 000000000000 00")).error
            == .invalidValue(field: "Address_Type", value: 4))
        #expect(extended(meta(0x0D, "00")).error == .invalidValue(field: "Num_Reports", value: 0))
    }

    @Test func reportDataFeedsTheADParser() throws {
        let event = hex("3e390d01 0100 01 f5f4f3f2f1f0 01 01 00 00 ce 0000 00 000000000000 1f" + heraldAD)
        let m = try HCILEMetaEvent(try HCIEventPacket(parsing: event.span))
        var it = try HCILEExtendedAdvertisingReportEvent(m)
        guard let r = try it.next() else {
            Issue.record("no report")
            return
        }
        let report = copy(r)
        let herald = try #require(BluetoothUUID("428132af-4746-42d3-801e-4572d65bfd9b"))
        let summary = try AdvertisingDataSummary(parsing: report.data.span)
        #expect(summary.containsServiceUUID(herald))
        #expect(summary.manufacturerCompanyID == 0xFFFA)
        let inRaw = AdvertisingDataParser.containsServiceUUID(herald, in: report.data.span)
        #expect(inRaw)
    }
}
