import BluetoothHost
import Foundation
import Herald

/// Gathers `CheckObservations` about one device for `herald check`, as one `LEApplication`:
/// scan (the device's adverts), connect and dump its GATT database at ATT_MTU 23 (`GATTDumper`, so a
/// payload over 22 octets needs Read Blob), with `--active` write its signal characteristic, end the
/// link and listen for its next advert, and with `--active` connect again and read its payload
/// (`BenchPayloadReader`). It judges nothing: `HeraldCheck.judge` does, from what this collects.
public struct CheckRunner: LEApplication {
    public enum Phase: Equatable {
        case observing, dumping, writing, ending, releasing, reconnecting, done
    }

    /// A check's links carry a discovery and a few reads and writes, as a phone's do: the LE 2M PHY gains
    /// nothing there, and on Zephyr's controller a switch on a busy peripheral (a wearable advertising
    /// and scanning beside the link) can lose the link midway, which would be judged as the device's
    /// fault (GATT-2, GATT-3 failed on our own wearable).
    public static var asksForLE2MPHY: Bool { false }

    /// Links a dump may take: when the device ends one before the discovery on it finished, the check
    /// dumps again from the start on the next, once the device advertises again.
    public static let dumpLinks = 3

    /// The device asked for; nil: the first Herald device heard.
    public let wanted: DeviceAddress?
    public let observeMilliseconds: UInt64
    public let active: Bool
    public let payloadPeriod: Double
    public private(set) var phase = Phase.observing
    /// The device under test, once heard.
    public private(set) var target: DeviceAddress?
    public private(set) var observations: CheckObservations?
    /// Every advertiser heard while observing (the HTML report's scan table).
    public var summary: ScanSummary
    /// Why the run stopped short of judging anything (no device heard).
    public private(set) var failure: String?
    var info: ControllerInfo?
    var started: UInt64 = 0
    var deadline: UInt64?
    var dumper: GATTDumper?
    var reader: BenchPayloadReader?
    var linkHandle: UInt16?
    /// When the link being dumped came up (the length of a link the device cuts).
    var linkUpAt: UInt64 = 0
    var linkEndedAt: UInt64?
    var firstHeard: UInt64 = 0
    var writer = SignalWriteSequence()

    /// Byte order of the codes in the payloads `--active` writes (`SignalWriteSequence.messages`).
    let byteOrder: PayloadCodeByteOrder

    public init(address: DeviceAddress?, observeSeconds: Double, active: Bool, payloadPeriod: Double = 360,
                byteOrder: PayloadCodeByteOrder = .bigEndian, start: UInt64) {
        wanted = address
        self.byteOrder = byteOrder
        observeMilliseconds = UInt64(observeSeconds * 1000)
        self.active = active
        self.payloadPeriod = payloadPeriod
        summary = ScanSummary(start: start)
        summary.byteOrder = byteOrder
    }

    public var isDone: Bool { phase == .done }

    public mutating func stackDidBecomeReady(_ info: ControllerInfo, now: UInt64, control: inout StackControl) {
        self.info = info
        started = now
        summary = ScanSummary(start: now)
        summary.byteOrder = byteOrder
        // Up to 30 s (or the duration, if longer) to hear the device; then the duration from its first advert.
        deadline = now &+ max(observeMilliseconds, 30_000)
        // Active: the scan response is part of what a Herald phone sees (our UUID may be there).
        control.startScanning(active: true)
    }

    public mutating func stackDidReceive(advertisingReport r: borrowing AdvertisingReport, now: UInt64, control: inout StackControl) {
        switch phase {
        case .observing:
            summary.add(r, now: now)
            if target == nil {
                let match = wanted.map { $0.address == r.address.address } ?? summary.isHerald(r.address)
                if match {
                    target = r.address
                    var o = CheckObservations(address: r.address.address.description, addressType: r.address.type.name,
                                              observedSeconds: 0, active: active)
                    o.payloadPeriod = payloadPeriod
                    observations = o
                    firstHeard = now
                    deadline = now &+ observeMilliseconds
                }
            }
            guard let target, r.address.address == target.address else { return }
            var data: [UInt8] = []
            for i in r.data.indices { data.append(r.data[i]) }
            observations?.adverts.append(.init(time: now &- started, connectable: r.kind.isConnectable,
                                               scanResponse: r.kind.isScanResponse, data: data))
        case .releasing:
            guard let target, r.address.address == target.address, r.kind.isConnectable, !r.kind.isScanResponse,
                  let ended = linkEndedAt else { return }
            observations?.readvertisedAfter = now &- ended
            if dumpWasCut, let cut = observations?.cutLinks.count, cut < Self.dumpLinks {
                control.stopScanning()
                startDump(now: now, control: &control)
            } else if active {
                phase = .reconnecting
                var rd = BenchPayloadReader(activeScanning: false)
                rd.maxAttempts = 1
                rd.consider(target, isHerald: true, connectable: true, now: now, control: &control)
                reader = rd
                deadline = now &+ 20_000
            } else {
                finish(control: &control)
            }
        default:
            break
        }
    }

    public var applicationDeadline: UInt64? {
        [deadline, dumper?.applicationDeadline, reader?.nextDeadline, phase == .writing ? writer.client.nextDeadline : nil]
            .compactMap { $0 }.min()
    }

    public mutating func stackTimerFired(now: UInt64, control: inout StackControl) {
        switch phase {
        case .observing:
            guard let d = deadline, now >= d else { return }
            guard target != nil, info != nil else {
                failure = wanted.map { "\($0.address.description) not heard" } ?? "no Herald device heard"
                failure! += " in \(max(observeMilliseconds, 30_000) / 1000) s"
                return finish(control: &control)
            }
            observations?.observedSeconds = Double(now &- firstHeard) / 1000
            control.stopScanning()
            startDump(now: now, control: &control)
        case .dumping:
            dumper?.stackTimerFired(now: now, control: &control)
            afterDumper(now: now, control: &control)
            if phase == .dumping, let d = deadline, now >= d { endLink(now: now, control: &control) }
        case .writing:
            if writer.tick(now: now, control: &control) { writesDone(now: now, control: &control) }
        case .ending:
            // The controller never confirmed the end of the link.
            if let d = deadline, now >= d { finish(control: &control) }
        case .releasing:
            if let d = deadline, now >= d {
                control.stopScanning()
                finish(control: &control)
            }
        case .reconnecting:
            reader?.timerFired(now: now, control: &control)
            collectReread(control: &control)
            if phase == .reconnecting, let d = deadline, now >= d { finish(control: &control) }
        case .done:
            break
        }
    }

    public mutating func stackDidConnect(_ link: ConnectionSummary, now: UInt64, control: inout StackControl) {
        switch phase {
        case .dumping:
            dumper?.stackDidConnect(link, now: now, control: &control)
            if link.role == .central { linkHandle = link.handle; linkUpAt = now }
            afterDumper(now: now, control: &control)
        case .reconnecting:
            observations?.reconnected = true
            reader?.didConnect(link, now: now, control: &control)
        default:
            break
        }
    }

    public mutating func stackDidFailToConnect(to peer: DeviceAddress, status: HCIStatus, now: UInt64, control: inout StackControl) {
        switch phase {
        case .dumping:
            dumper?.stackDidFailToConnect(to: peer, status: status, now: now, control: &control)
            afterDumper(now: now, control: &control)
        case .reconnecting:
            observations?.reconnected = false
            observations?.reconnectionError = "status 0x\(hex(status.rawValue))"
            reader?.didFailToConnect(to: peer, status: status, control: &control)
            control.stopScanning()
            finish(control: &control)
        default:
            break
        }
    }

    public mutating func stackDidDisconnect(handle: UInt16, reason: HCIStatus, now: UInt64, control: inout StackControl) {
        switch phase {
        case .dumping, .writing, .ending:
            guard handle == linkHandle else { return }
            if phase == .dumping {
                dumper?.stackDidDisconnect(handle: handle, reason: reason, now: now, control: &control)
                collectDump()
                if dumpWasCut { observations?.cutLinks.append(.init(milliseconds: now &- linkUpAt, reason: reason.rawValue)) }
            }
            if phase == .writing { writer.linkLost(reason) ; observations?.writes = writer.results }
            linkHandle = nil
            observations?.firstLinkEnded = true
            linkEndedAt = now
            phase = .releasing
            deadline = now &+ UInt64((observations?.releaseWindow ?? 5) * 1000)
            control.startScanning(active: false)
        case .reconnecting:
            reader?.didDisconnect(handle: handle, reason: reason, control: &control)
            collectReread(control: &control)
            if reader?.isIdle ?? true {
                control.stopScanning()
                finish(control: &control)
            }
        default:
            break
        }
    }

    public mutating func stackDidReceiveATT(handle: UInt16, pdu: Span<UInt8>, now: UInt64, control: inout StackControl) {
        switch phase {
        case .dumping:
            dumper?.stackDidReceiveATT(handle: handle, pdu: pdu, now: now, control: &control)
            afterDumper(now: now, control: &control)
        case .writing:
            guard handle == linkHandle else { return }
            if writer.handle(pdu: pdu, now: now, control: &control) { writesDone(now: now, control: &control) }
        case .reconnecting:
            reader?.didReceiveATT(handle: handle, pdu: pdu, now: now, control: &control)
            collectReread(control: &control)
        default:
            break
        }
    }

    // MARK: Steps

    /// Connects to the device and dumps its database (`GATTDumper`, at ATT_MTU 23), from the start.
    mutating func startDump(now: UInt64, control: inout StackControl) {
        guard let target, let info else { return finish(control: &control) }
        var d = GATTDumper(peer: target, connectTimeout: 8_000)
        d.exchangesMTU = false
        d.keepsLink = true
        d.stackDidBecomeReady(info, now: now, control: &control)
        dumper = d
        phase = .dumping
        deadline = now &+ 60_000
    }

    /// The link ended before the dump on it finished, by the device or the radio, not by us.
    var dumpWasCut: Bool {
        if case .disconnected? = dumper?.state { return true }
        return false
    }

    /// When the dump is over: keep what it found, then write (`--active`) or end the link.
    mutating func afterDumper(now: UInt64, control: inout StackControl) {
        guard phase == .dumping, let dumper, dumper.isDone else { return }
        if case .failedToConnect(let status) = dumper.state {
            observations?.connectionError = Self.connectionError(status, peer: dumper.peer)
            return finish(control: &control)
        }
        collectDump()
        guard dumper.state == .finished, let handle = linkHandle else { return }
        if active, let signal = signalHandle() {
            phase = .writing
            writer = SignalWriteSequence(handle: handle, valueHandle: signal, order: byteOrder)
            if writer.begin(now: now, control: &control) { writesDone(now: now, control: &control) }
        } else {
            endLink(now: now, control: &control)
        }
    }

    /// Why the check's connection failed, for LINK-1 and the rules that need a link. A resolvable
    /// private address that stops answering may simply have changed: a Herald device takes a new one
    /// at every payload period boundary (every 360 s by default), and the check, which heard the old
    /// one, cannot know the new. Said, so that a healthy wearable is not taken for a broken one.
    static func connectionError(_ status: HCIStatus, peer: DeviceAddress) -> String {
        guard status == .connectionTimeout else { return "connection failed (status 0x\(hex(status.rawValue)))" }
        let rotates = peer.type == .randomDevice && peer.address.randomSubtype == .resolvablePrivate
        return "no connection within 8 s" + (rotates ? "; a resolvable private address, which a Herald device changes "
            + "every payload period: if it changed during the check, run the check again" : "")
    }

    mutating func collectDump() {
        guard let dump = dumper?.dump else { return }
        observations?.gatt = dump
        guard let service = HeraldCheck.heraldService(dump),
              let payload = service.characteristics.first(where: { $0.uuid == HeraldCheck.payloadText }) else { return }
        // The dump's values are our own hex (GATTDumper), so they always decode.
        if let value = payload.value, let bytes = octets(hex: value) {
            observations?.payloadReads = [.init(unixSeconds: Date().timeIntervalSince1970, bytes: bytes, mtu: dump.mtu)]
            observations?.payloadReadError = nil  // a cut link's, when this dump is a later link's
            // The report's table of advertisers names the device by what it served (venue beacon, Herald
            // wearable), as `scan --read-payloads` does, not "Herald (not read)".
            if let address = observations?.address { summary.attach(.payload(bytes), to: address) }
        } else {
            observations?.payloadReadError = payload.error ?? (dump.error ?? "not read")
            if let address = observations?.address { summary.attach(.failed(observations?.payloadReadError ?? "not read"), to: address) }
        }
    }

    /// The Android signal characteristic (write with response) if there is one, else the iOS one.
    func signalHandle() -> UInt16? {
        guard let dump = dumper?.dump, let s = HeraldCheck.heraldService(dump) else { return nil }
        let c = s.characteristics.first { $0.uuid == HeraldCheck.androidSignalText && HeraldCheck.has($0, .write) }
            ?? s.characteristics.first { $0.uuid == HeraldCheck.iosSignalText && HeraldCheck.has($0, .write) }
        return c?.handle
    }

    mutating func writesDone(now: UInt64, control: inout StackControl) {
        observations?.writes = writer.results
        endLink(now: now, control: &control)
    }

    mutating func endLink(now: UInt64, control: inout StackControl) {
        guard let handle = linkHandle else { return finish(control: &control) }
        control.disconnect(handle: handle)
        phase = .ending
        deadline = now &+ 3_000
    }

    mutating func collectReread(control: inout StackControl) {
        guard let fresh = reader?.takeNewOutcomes() else { return }
        for (_, outcome) in fresh {
            switch outcome {
            case .payload(let bytes):
                observations?.payloadReads.append(.init(unixSeconds: Date().timeIntervalSince1970, bytes: bytes, mtu: 23, link: 2))
            case .failed(let why):
                if why.hasPrefix("connection failed") {
                    observations?.reconnected = false
                    observations?.reconnectionError = why
                } else {
                    observations?.payloadReadError = why
                }
            }
        }
    }

    mutating func finish(control: inout StackControl) {
        phase = .done
        deadline = nil
    }
}
