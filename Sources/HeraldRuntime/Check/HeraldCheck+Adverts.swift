import BluetoothHost
import Foundation
import Herald

extension HeraldCheck {
    static func judgeAdverts(_ o: CheckObservations) -> [CheckVerdict] {
        var out: [CheckVerdict] = []
        let adverts = o.adverts.filter { !$0.scanResponse }
        guard !o.adverts.isEmpty else {
            let why = "no advert heard from \(o.address) in \(String(format: "%.1f", o.observedSeconds)) s"
            return ["ADV-1", "ADV-2", "ADV-3", "ADV-4"].map { verdict($0, .skip, why) }
        }

        // ADV-1: the identifiers, in the advert proper or only in the scan response.
        func classify(_ reports: [CheckObservations.Advert]) -> HeraldAdvertClassification {
            var c = HeraldAdvertClassification()
            for r in reports { try? c.add(r.data.span) }
            return c
        }
        let inAdvert = classify(adverts), inAll = classify(o.adverts)
        func ids(_ c: HeraldAdvertClassification) -> [String] {
            var s: [String] = []
            if c.hasSpecificationServiceUUID { s.append("service 428132af-…") }
            if c.hasRegisteredServiceUUID { s.append("service 0xFCF6") }
            if c.pseudoDeviceAddress != nil { s.append("pseudo device address (manufacturer data)") }
            return s
        }
        if inAdvert.kind == .herald {
            var evidence = ids(inAdvert).joined(separator: ", ") + " in the advert"
            let more = ids(inAll).filter { !ids(inAdvert).contains($0) }
            if !more.isEmpty { evidence += "; " + more.joined(separator: ", ") + " in the scan response" }
            out.append(verdict("ADV-1", .pass, evidence))
        } else if inAll.kind == .herald {
            out.append(verdict("ADV-1", .warn, ids(inAll).joined(separator: ", ") + " only in the scan response: a passive scanner does not see it"))
        } else {
            out.append(verdict("ADV-1", .fail, "no Herald service UUID or manufacturer data in \(o.adverts.count) report(s)"))
        }

        // ADV-2
        let connectable = adverts.filter(\.connectable).count
        if adverts.isEmpty {
            out.append(verdict("ADV-2", .skip, "only scan responses heard"))
        } else if connectable == adverts.count {
            out.append(verdict("ADV-2", .pass, "\(connectable) of \(adverts.count) adverts connectable"))
        } else if connectable > 0 {
            out.append(verdict("ADV-2", .warn, "\(connectable) of \(adverts.count) adverts connectable"))
        } else {
            out.append(verdict("ADV-2", .fail, "none of \(adverts.count) adverts connectable"))
        }

        // ADV-3, ADV-4: from the gaps between adverts (scan responses follow their advert at once).
        var gaps: [Double] = []
        for (a, b) in zip(adverts, adverts.dropFirst()) where b.time >= a.time { gaps.append(Double(b.time - a.time)) }
        guard gaps.count >= 2 else {
            let why = "\(adverts.count) advert(s) heard; at least 3 are needed (a longer --duration)"
            out.append(verdict("ADV-3", .skip, why))
            out.append(verdict("ADV-4", .skip, why))
            return out
        }
        let mean = gaps.reduce(0, +) / Double(gaps.count)
        let sorted = gaps.sorted()
        let median = sorted[sorted.count / 2]
        let longest = sorted.last ?? 0
        let stats = String(format: "%d adverts: interval mean %.0f ms, median %.0f, min %.0f, max %.0f", adverts.count, mean, median, sorted[0], longest)
        // The median gap, not the mean: a scanner misses adverts (channel changes, a busy host) and each miss
        // doubles one gap, which pulls the mean up (a 900 ms advertiser heard 2 adverts in 3 has a mean gap of
        // 1,200 ms) and leaves the median alone while most are heard. Each advertising event may also come
        // up to 10 ms late (advDelay, Core 5.4 Vol 6 Part B 4.4.2.2.1): an advertiser set to 1,000 ms passes.
        let advDelay = 10.0
        out.append(verdict("ADV-3", median <= 1_000 + advDelay ? .pass : median <= 2_560 + advDelay ? .warn : .fail, stats))
        // Steadiness needs a few gaps to have a median worth the name.
        guard gaps.count >= 4 else {
            out.append(verdict("ADV-4", .skip, "\(adverts.count) adverts heard; at least 5 are needed (a longer --duration)"))
            return out
        }
        // A scanner misses adverts too (channel changes, a busy host): a few in a row are not a pause.
        let limit = max(3 * median, median + 2_500)
        out.append(verdict("ADV-4", longest <= limit ? .pass : .fail,
                           String(format: "longest gap %.0f ms, limit %.0f ms (median %.0f)", longest, limit, median)))
        return out
    }

    static func judgeLinks(_ o: CheckObservations) -> [CheckVerdict] {
        var out: [CheckVerdict] = []
        if o.gatt == nil {
            out.append(verdict("LINK-1", .skip, "no link was made" + (o.connectionError.map { " (\($0))" } ?? "")))
        } else if !o.firstLinkEnded {
            out.append(verdict("LINK-1", .fail, "the link did not end when the central asked"))
        } else if let ms = o.readvertisedAfter {
            out.append(verdict("LINK-1", .pass, "connectable advert \(ms) ms after the link ended"))
        } else {
            out.append(verdict("LINK-1", .fail, String(format: "no connectable advert within %.0f s of the link ending", o.releaseWindow)))
        }
        switch o.reconnected {
        case nil:
            out.append(verdict("LINK-2", .skip, !o.active ? "needs --active" : o.readvertisedAfter == nil ? "not tried: the device did not advertise again" : "not tried"))
        case true?:
            // The payload read again, unless it could not be read the first time either (GATT rules say why).
            let firstRead = o.payloadReads.contains { $0.link == 1 }, again = o.payloadReads.contains { $0.link == 2 }
            let status: CheckStatus = !firstRead || again ? .pass : .fail
            let evidence = again ? "reconnected and read the payload again"
                : firstRead ? "reconnected, but the payload could not be read again" + (o.payloadReadError.map { " (\($0))" } ?? "")
                : "reconnected (the payload was not readable on either link)"
            out.append(verdict("LINK-2", status, evidence))
        case false?:
            out.append(verdict("LINK-2", .fail, "second connection failed" + (o.reconnectionError.map { " (\($0))" } ?? "")))
        }
        return out
    }
}
