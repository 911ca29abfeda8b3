import BluetoothHost
import Foundation
import Herald

extension HeraldCheck {
    static let serviceTexts = [HeraldIdentifiers.serviceUUID.text, HeraldIdentifiers.registeredServiceUUID.text]
    static let payloadText = HeraldIdentifiers.payloadCharacteristicUUID.text
    static let androidSignalText = HeraldIdentifiers.androidSignalCharacteristicUUID.text
    static let iosSignalText = HeraldIdentifiers.iosSignalCharacteristicUUID.text

    /// The Herald service of a dump, if it has one.
    static func heraldService(_ d: GATTDump) -> GATTDump.Service? {
        d.services.first { serviceTexts.contains($0.uuid) }
    }

    static func has(_ c: GATTDump.Characteristic, _ p: GATTCharacteristicProperties) -> Bool {
        GATTCharacteristicProperties(rawValue: c.properties).contains(p)
    }

    /// The links the device ended mid-discovery, for GATT-1's evidence ("" when none): not a rule of
    /// the Herald documents, but a phone pays a new link for each, so the report names them.
    static func cutNote(_ o: CheckObservations) -> String {
        guard !o.cutLinks.isEmpty else { return "" }
        let cuts = o.cutLinks.enumerated().map {
            String(format: "link %d after %.2f s (reason 0x%02x)", $0.offset + 1, Double($0.element.milliseconds) / 1000, $0.element.reason)
        }
        let last = o.gatt?.error == nil ? "; discovered on link \(o.cutLinks.count + 1)" : ""
        return "; the device ended \(cuts.joined(separator: ", ")) before the discovery finished\(last)"
    }

    static func judgeGATT(_ o: CheckObservations) -> [CheckVerdict] {
        guard let dump = o.gatt else {
            let why = "no link" + (o.connectionError.map { ": \($0)" } ?? "")
            return ["GATT-1", "GATT-2", "GATT-3", "GATT-4"].map { verdict($0, .skip, why) }
        }
        var out: [CheckVerdict] = []
        guard let service = heraldService(dump) else {
            let found = dump.services.map(\.uuid).joined(separator: ", ")
            out.append(verdict("GATT-1", .fail, (dump.error.map { "discovery failed: \($0)" } ?? "services found: \(found.isEmpty ? "none" : found)") + cutNote(o)))
            return out + ["GATT-2", "GATT-3", "GATT-4"].map { verdict($0, .skip, "no Herald service") }
        }
        out.append(verdict("GATT-1", .pass, "service \(service.uuid) [0x\(hex(service.start))-0x\(hex(service.end))]" + cutNote(o)))
        func describe(_ c: GATTDump.Characteristic) -> String { "\(c.uuid) (\(c.propertyNames.joined(separator: ",")))" }

        let payload = service.characteristics.first { $0.uuid == payloadText }
        switch payload {
        case nil: out.append(verdict("GATT-2", .fail, "no payload characteristic among \(service.characteristics.count)"))
        case let c? where !has(c, .read): out.append(verdict("GATT-2", .fail, describe(c) + ": not readable"))
        case let c?: out.append(verdict("GATT-2", .pass, describe(c)))
        }

        let android = service.characteristics.first { $0.uuid == androidSignalText }
        let ios = service.characteristics.first { $0.uuid == iosSignalText }
        var problems: [String] = [], good: [String] = []
        if let a = android { if has(a, .write) { good.append("Android " + describe(a)) } else { problems.append("Android signal " + describe(a) + " lacks write") } }
        if let i = ios {
            if has(i, .write) && has(i, .notify) { good.append("iOS " + describe(i)) } else { problems.append("iOS signal " + describe(i) + " lacks write or notify") }
        }
        if !problems.isEmpty {
            out.append(verdict("GATT-3", .fail, (problems + good).joined(separator: "; ")))
        } else if good.isEmpty {
            out.append(verdict("GATT-3", .fail, "no signal characteristic: phones cannot write their payload or RSSI"))
        } else {
            out.append(verdict("GATT-3", .pass, good.joined(separator: "; ")))
        }

        // GATT-4: whether the read needed Read Blob, and got the whole value.
        if let first = o.payloadReads.first {
            let single = first.mtu - 1
            if first.bytes.count > single {
                let blobs = (first.bytes.count - single) / single + 1
                out.append(verdict("GATT-4", .pass, "\(first.bytes.count) octets at ATT_MTU \(first.mtu): Read + \(blobs) Read Blob"))
            } else {
                out.append(verdict("GATT-4", .skip, "the payload (\(first.bytes.count) octets) fits one Read Response at ATT_MTU \(first.mtu)"))
            }
        } else if let partial = payload?.partialLength, partial > 0 {
            out.append(verdict("GATT-4", .fail, "Read Blob failed after \(partial) octets: \(payload?.error ?? o.payloadReadError ?? "?")"))
        } else {
            out.append(verdict("GATT-4", .skip, "payload not read" + (o.payloadReadError.map { ": \($0)" } ?? "")))
        }
        return out
    }

    static func judgeSignal(_ o: CheckObservations) -> [CheckVerdict] {
        let rules: [(String, CheckObservations.SignalWrite.Kind)] = [("SIG-1", .rssi), ("SIG-2", .payload), ("SIG-3", .fragmented)]
        guard o.active else { return rules.map { verdict($0.0, .skip, "needs --active") } }
        return rules.map { id, kind in
            guard let w = o.writes.first(where: { $0.kind == kind }) else {
                let signal = o.gatt.flatMap(heraldService)?.characteristics.contains { $0.uuid == androidSignalText || $0.uuid == iosSignalText } ?? false
                return verdict(id, .skip, signal ? "not written (the link ended first)" : "no signal characteristic to write")
            }
            let what = "\(w.octets) octets in \(w.fragments) Write Request(s)"
            if let e = w.error { return verdict(id, .fail, what + ": " + e) }
            return verdict(id, .pass, what + ", each answered by a Write Response")
        }
    }
}
