import BluetoothHost

/// Receives the sensor's events (Herald API `SensorDelegate`), and, being a `HeraldPeripheralDelegate`,
/// those of the sensor's peripheral half (links, payloads served, signal writes, address changes), so
/// an application sees both halves through one value and the sensor needs no wrapper around its
/// peripheral to observe them. Every method has a default that ignores it. Payload bytes are lent for
/// the call only.
///
/// The peripheral's events reach this delegate after the sensor has acted on them (a written payload
/// is filed, and reported as `didRead`, before `heraldPeripheral(didReceivePayload:from:)` arrives).
/// What the sensor's GATT server offers is its peripheral's (`HeraldServerOffer`), never a
/// delegate's, so delegates compose in any order (`SensorDelegatePair`).
public protocol SensorDelegate: HeraldPeripheralDelegate {
    /// A device was seen for the first time in this run.
    mutating func sensor(_ sensor: SensorType, didDetect target: TargetIdentifier)
    /// Each advert's RSSI (with Tx power as calibration when advertised).
    mutating func sensor(_ sensor: SensorType, didMeasure proximity: Proximity, fromTarget target: TargetIdentifier)
    /// The target's payload was read (or written to us by a receive-only device).
    mutating func sensor(_ sensor: SensorType, didRead payload: Span<UInt8>, fromTarget target: TargetIdentifier)
    /// The target shared payloads of devices it has seen (the "calling card").
    mutating func sensor(_ sensor: SensorType, didShare payloads: borrowing SharedPayloads, fromTarget target: TargetIdentifier)
    /// The target sent data with immediate send.
    mutating func sensor(_ sensor: SensorType, didReceive data: Span<UInt8>, fromTarget target: TargetIdentifier)
    /// A measurement of a target whose payload is known.
    mutating func sensor(_ sensor: SensorType, didMeasure proximity: Proximity, fromTarget target: TargetIdentifier,
                         withPayload payload: Span<UInt8>)
    mutating func sensor(_ sensor: SensorType, didUpdateState state: SensorState)
    /// `available` true: a new target; false: the target was deleted (expired, evicted or merged into
    /// another one that is the same device).
    mutating func sensor(_ sensor: SensorType, available: Bool, didDeleteOrDetect target: TargetIdentifier)
}

extension SensorDelegate {
    public mutating func sensor(_ sensor: SensorType, didDetect target: TargetIdentifier) {}
    public mutating func sensor(_ sensor: SensorType, didMeasure proximity: Proximity, fromTarget target: TargetIdentifier) {}
    public mutating func sensor(_ sensor: SensorType, didRead payload: Span<UInt8>, fromTarget target: TargetIdentifier) {}
    public mutating func sensor(_ sensor: SensorType, didShare payloads: borrowing SharedPayloads, fromTarget target: TargetIdentifier) {}
    public mutating func sensor(_ sensor: SensorType, didReceive data: Span<UInt8>, fromTarget target: TargetIdentifier) {}
    public mutating func sensor(_ sensor: SensorType, didMeasure proximity: Proximity, fromTarget target: TargetIdentifier,
                                withPayload payload: Span<UInt8>) {}
    public mutating func sensor(_ sensor: SensorType, didUpdateState state: SensorState) {}
    public mutating func sensor(_ sensor: SensorType, available: Bool, didDeleteOrDetect target: TargetIdentifier) {}
}

/// A delegate that ignores everything.
public struct NoSensorDelegate: SensorDelegate {
    public init() {}
}

/// Two delegates as one: nest pairs for more (`SensorDelegatePair(a, SensorDelegatePair(b, c))`).
/// Generic composition, so each call is specialised rather than dispatched through an existential.
/// Every event, of either half, reaches both, `first` first. `rotatesAddress` and `receivesSignals`
/// are `first`'s, `tracksPHYUpdates` and `recordsInputDrops` either's; what the server offers is the peripheral's (`HeraldServerOffer`), whatever the order.
public struct SensorDelegatePair<First: SensorDelegate, Second: SensorDelegate>: SensorDelegate {
    public var first: First
    public var second: Second
    public init(_ first: First, _ second: Second) { self.first = first; self.second = second }

    public static var rotatesAddress: Bool { First.rotatesAddress }
    public static var receivesSignals: Bool { First.receivesSignals }
    /// Followed or recorded when either wants them.
    public static var tracksPHYUpdates: Bool { First.tracksPHYUpdates || Second.tracksPHYUpdates }
    public static var recordsInputDrops: Bool { First.recordsInputDrops || Second.recordsInputDrops }
    /// Either may read them, so the pair keeps them.
    public typealias InputDrops = HCIInputDrops
    public typealias StackCounters = LEStackCounters
    public static var tracksDataLengthChanges: Bool { First.tracksDataLengthChanges || Second.tracksDataLengthChanges }
    /// Probed when either may set a liveness interval.
    public static var probesControllerLiveness: Bool { First.probesControllerLiveness || Second.probesControllerLiveness }

    public mutating func sensor(_ sensor: SensorType, didDetect target: TargetIdentifier) {
        first.sensor(sensor, didDetect: target)
        second.sensor(sensor, didDetect: target)
    }
    public mutating func sensor(_ sensor: SensorType, didMeasure proximity: Proximity, fromTarget target: TargetIdentifier) {
        first.sensor(sensor, didMeasure: proximity, fromTarget: target)
        second.sensor(sensor, didMeasure: proximity, fromTarget: target)
    }
    public mutating func sensor(_ sensor: SensorType, didRead payload: Span<UInt8>, fromTarget target: TargetIdentifier) {
        first.sensor(sensor, didRead: payload, fromTarget: target)
        second.sensor(sensor, didRead: payload, fromTarget: target)
    }
    public mutating func sensor(_ sensor: SensorType, didShare payloads: borrowing SharedPayloads, fromTarget target: TargetIdentifier) {
        first.sensor(sensor, didShare: payloads, fromTarget: target)
        second.sensor(sensor, didShare: payloads, fromTarget: target)
    }
    public mutating func sensor(_ sensor: SensorType, didReceive data: Span<UInt8>, fromTarget target: TargetIdentifier) {
        first.sensor(sensor, didReceive: data, fromTarget: target)
        second.sensor(sensor, didReceive: data, fromTarget: target)
    }
    public mutating func sensor(_ sensor: SensorType, didMeasure proximity: Proximity, fromTarget target: TargetIdentifier,
                                withPayload payload: Span<UInt8>) {
        first.sensor(sensor, didMeasure: proximity, fromTarget: target, withPayload: payload)
        second.sensor(sensor, didMeasure: proximity, fromTarget: target, withPayload: payload)
    }
    public mutating func sensor(_ sensor: SensorType, didUpdateState state: SensorState) {
        first.sensor(sensor, didUpdateState: state)
        second.sensor(sensor, didUpdateState: state)
    }
    public mutating func sensor(_ sensor: SensorType, available: Bool, didDeleteOrDetect target: TargetIdentifier) {
        first.sensor(sensor, available: available, didDeleteOrDetect: target)
        second.sensor(sensor, available: available, didDeleteOrDetect: target)
    }

    // MARK: The peripheral half's events

    public mutating func heraldPeripheral(didBecomeReady address: BDAddress, now: UInt64) {
        first.heraldPeripheral(didBecomeReady: address, now: now)
        second.heraldPeripheral(didBecomeReady: address, now: now)
    }
    public mutating func heraldPeripheral(didConnect link: HeraldLink) {
        first.heraldPeripheral(didConnect: link)
        second.heraldPeripheral(didConnect: link)
    }
    public mutating func heraldPeripheral(didDisconnect link: HeraldLink, reason: HCIStatus) {
        first.heraldPeripheral(didDisconnect: link, reason: reason)
        second.heraldPeripheral(didDisconnect: link, reason: reason)
    }
    public mutating func heraldPeripheral(didUpdatePHY phy: LinkPHY, on link: HeraldLink) {
        first.heraldPeripheral(didUpdatePHY: phy, on: link)
        second.heraldPeripheral(didUpdatePHY: phy, on: link)
    }
    public mutating func heraldPeripheral(didServePayload payload: Span<UInt8>, to link: HeraldLink) {
        first.heraldPeripheral(didServePayload: payload, to: link)
        second.heraldPeripheral(didServePayload: payload, to: link)
    }
    public mutating func heraldPeripheral(didReceivePayload payload: Span<UInt8>, from link: HeraldLink) {
        first.heraldPeripheral(didReceivePayload: payload, from: link)
        second.heraldPeripheral(didReceivePayload: payload, from: link)
    }
    public mutating func heraldPeripheral(didMeasureRSSI rssi: Int16, from link: HeraldLink) {
        first.heraldPeripheral(didMeasureRSSI: rssi, from: link)
        second.heraldPeripheral(didMeasureRSSI: rssi, from: link)
    }
    public mutating func heraldPeripheral(didShare payloads: SharedPayloadIterator, rssi: Int16, from link: HeraldLink) {
        first.heraldPeripheral(didShare: payloads, rssi: rssi, from: link)
        second.heraldPeripheral(didShare: payloads, rssi: rssi, from: link)
    }
    public mutating func heraldPeripheral(didReceiveImmediateSend data: Span<UInt8>, from link: HeraldLink) {
        first.heraldPeripheral(didReceiveImmediateSend: data, from: link)
        second.heraldPeripheral(didReceiveImmediateSend: data, from: link)
    }
    public mutating func heraldPeripheral(didKeepAwake link: HeraldLink) {
        first.heraldPeripheral(didKeepAwake: link)
        second.heraldPeripheral(didKeepAwake: link)
    }
    public mutating func heraldPeripheral(didRejectSignalWrite fragment: Span<UInt8>, from link: HeraldLink) {
        first.heraldPeripheral(didRejectSignalWrite: fragment, from: link)
        second.heraldPeripheral(didRejectSignalWrite: fragment, from: link)
    }
    public mutating func heraldPeripheral(didChangeAddress address: BDAddress, unixMillis: Int64) {
        first.heraldPeripheral(didChangeAddress: address, unixMillis: unixMillis)
        second.heraldPeripheral(didChangeAddress: address, unixMillis: unixMillis)
    }
    public mutating func heraldPeripheral(commandFailed opcode: HCIOpcode, status: HCIStatus) {
        first.heraldPeripheral(commandFailed: opcode, status: status)
        second.heraldPeripheral(commandFailed: opcode, status: status)
    }
}
