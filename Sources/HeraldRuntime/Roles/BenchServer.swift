import BluetoothHost
import Foundation

public typealias BenchServerStack = BluetoothStack<BenchServer, 2, 24, 512>

/// The server behind `herald bench-serve`, for Tools/bench-uart: `TestProfile`'s 200-octet value and
/// notifying characteristic (same UUIDs, so the same Bumble central reads either server), but the
/// notifications are `size` octets (filling the ATT_MTU when 0) and are sent as fast as the ACL
/// queue takes them, so the link's byte rate is what limits them. A stream starts once its link is what
/// was asked for (LE 2M with `waitsForPHY`, the `interval`), or `configurationWait` after the
/// subscription: streaming at once measured the PHY Update and the interval change too (the Write
/// Command direction's figure at 7.5 ms went from 87.5–93.6 % to 98.0–99.6 % of the line's ideal when
/// `BenchWriter` waited; `docs/performance-issue-25.md`).
public struct BenchServer: LEApplication {
    public struct Handles: Equatable, Sendable {
        public var longValue: UInt16 = 0
        public var notifying: UInt16 = 0
    }

    public let name: String
    public let count: Int
    public let size: Int
    public let handles: Handles
    /// The connection interval (1.25 ms units) asked of the central once a client subscribes; 0
    /// leaves the central's. The controller's 7 buffers hold 18 ms of a 1 Mbaud line's notifications:
    /// at a longer interval they fill before the next connection event and the line stands idle.
    public var interval: UInt16 = 0
    var askedInterval: InlineArray<2, Bool> = [false, false]
    var subscribed: InlineArray<2, UInt16?> = [nil, nil]
    var sent: InlineArray<2, Int> = [0, 0]
    /// Each subscribed link's stream starts at the latest then (ms), configured or not.
    var startBy: InlineArray<2, UInt64?> = [nil, nil]
    /// Wait for each link's move to LE 2M (`herald bench-serve --phy 2m`).
    public var waitsForPHY = false
    public var configurationWait: UInt64 = 2_000
    public private(set) var address: String?
    /// When the last subscriber's last notification was queued (ms), for the command's summary.
    public private(set) var finishedSending: UInt64?

    public static func makeStack(name: String, count: Int, size: Int, configuration: HostConfiguration) throws -> BenchServerStack {
        var db = try GATTDatabase<24, 512, 2>(deviceName: Array(name.utf8).span)
        var h = Handles()
        try db.addPrimaryService(TestProfile.service)
        let long = (0..<TestProfile.longValueLength).map { UInt8(truncatingIfNeeded: $0) }
        h.longValue = try db.addCharacteristic(TestProfile.longValue, properties: .read, permissions: .read,
                                               value: .stored(long.span, maxLength: long.count)).value
        let initial: [UInt8] = [0, 0, 0, 0]
        h.notifying = try db.addCharacteristic(TestProfile.notifying, properties: GATTCharacteristicProperties.read | .notify,
                                               permissions: .read, value: .stored(initial.span, maxLength: 4)).value
        let app = BenchServer(name: name, count: count, size: size, handles: h)
        return BenchServerStack(configuration: configuration, database: db, app: app, maximumMTU: 247)
    }

    init(name: String, count: Int, size: Int, handles: Handles) {
        self.name = name
        self.count = count
        self.size = size
        self.handles = handles
    }

    public mutating func stackDidBecomeReady(_ info: ControllerInfo, now: UInt64, control: inout StackControl) {
        var adv = AdvertisingDataBuilder<31>()
        try? adv.addFlags(ADFlags.generalDiscoverableLEOnly)
        try? adv.addLocalNameFitting(Array(name.utf8).span)
        control.startAdvertising(AdvertisingIntent(parameters: HCILESetAdvertisingParameters(intervalMin: 0x00A0, intervalMax: 0x00A0),
                                                   data: adv.build(), restartAfterConnection: true))
        address = info.address.description
    }

    public mutating func stackDidDisconnect(handle: UInt16, reason: HCIStatus, now: UInt64, control: inout StackControl) {
        for i in 0..<2 where subscribed[i] == handle { subscribed[i] = nil; startBy[i] = nil }
    }

    /// The end of a wait for a link's configuration, so that the run loop turns then.
    public var applicationDeadline: UInt64? {
        var d: UInt64?
        for i in 0..<2 where subscribed[i] != nil && sent[i] == 0 {
            if let t = startBy[i] { d = min(d ?? t, t) }
        }
        return d
    }

    public mutating func clientConfigurationChanged(valueHandle: UInt16, link: UInt16, configuration: GATTClientConfiguration) {
        // The link's entry: the one it subscribed in, else any free one (links are named by handle).
        var entry: Int?
        for i in 0..<2 where subscribed[i] == link { entry = i }
        if entry == nil { for i in 0..<2 where subscribed[i] == nil && entry == nil { entry = i } }
        guard valueHandle == handles.notifying, let i = entry else { return }
        sent[i] = 0
        askedInterval[i] = false
        startBy[i] = nil
        subscribed[i] = configuration.contains(.notification) ? link : nil
    }

    /// Queues notifications while the ACL queue has room: call after every run-loop turn.
    public static func pump(_ le: inout LEStack<BenchServer, 2, 24, 512>, now: UInt64) {
        for i in 0..<2 {
            guard let handle = le.app.subscribed[i], le.connections.contains(handle: handle) else { continue }
            // The transfer starts now: the PHY Update too, not when the peripheral's wait for the
            // central to ask ends (a Bumble central never asks).
            le.requestPendingPHY(handle: handle)
            if le.app.interval > 0, !le.app.askedInterval[i], let timing = le.timing(handle: handle), timing.interval != le.app.interval {
                le.app.askedInterval[i] = true
                le.requestConnectionParameters(handle: handle, intervalMin: le.app.interval, intervalMax: le.app.interval,
                                               supervisionTimeout: 0x0190)
            }
            if le.app.sent[i] == 0 {
                let by = le.app.startBy[i] ?? now &+ le.app.configurationWait
                le.app.startBy[i] = by
                let phyReady = !le.app.waitsForPHY || le.phy(handle: handle)?.tx == .le2M
                let intervalReady = le.app.interval == 0 || le.timing(handle: handle)?.interval == le.app.interval
                guard phyReady && intervalReady || now >= by else { continue }
            }
            let mtu = le.mtu(handle: handle) ?? 23
            let length = le.app.size > 0 ? min(le.app.size, mtu - 3) : mtu - 3
            var value = [UInt8](repeating: 0, count: length)
            while le.app.sent[i] < le.app.count {
                let n = UInt32(truncatingIfNeeded: le.app.sent[i])
                for b in 0..<min(4, length) { value[b] = UInt8(truncatingIfNeeded: n >> (8 * UInt32(b))) }
                guard le.notify(handle: handle, attribute: le.app.handles.notifying, value: value.span) == .sent else { break }
                le.app.sent[i] += 1
                if le.app.sent[i] == le.app.count { le.app.finishedSending = now }
            }
        }
    }
}
