import BluetoothHost

/// Maps the stack's monotonic milliseconds to UTC and back. The core reads no clock: the runtime
/// (or firmware, from its RTC) says what UTC time stack time 0 was.
public struct HeraldClock: Sendable, Equatable {
    /// Milliseconds since 1970-01-01T00:00:00Z at stack time 0.
    public var unixMillisAtZero: Int64

    public init(unixMillisAtZero: Int64) { self.unixMillisAtZero = unixMillisAtZero }

    public func unixMillis(now: UInt64) -> Int64 { unixMillisAtZero &+ Int64(bitPattern: now) }
    public func unixSeconds(now: UInt64) -> Int64 { Self.floorDivide(unixMillis(now: now), 1_000) }

    /// The stack time of `unixMillis` (0 for instants before stack time 0).
    public func stackTime(unixMillis: Int64) -> UInt64 {
        let t = unixMillis &- unixMillisAtZero
        return t < 0 ? 0 : UInt64(bitPattern: t)
    }

    /// Division rounding towards minus infinity, so periods before the epoch still tile the line.
    static func floorDivide(_ a: Int64, _ b: Int64) -> Int64 {
        let q = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? q &- 1 : q
    }
}

/// Command tags of the Herald peripheral (`CommandTag` values 0x0148...0x014A): an application that
/// embeds it passes completions with these tags to `HeraldPeripheral.stackCommandDidComplete`.
public enum HeraldCommandTag {
    public static let random = CommandTag(rawValue: 0x0148)
    public static let encrypt = CommandTag(rawValue: 0x0149)
    public static let advertising = CommandTag(rawValue: 0x014A)

    public static func owns(_ tag: CommandTag) -> Bool { tag.rawValue >= 0x0148 && tag.rawValue <= 0x014A }
}

/// How the peripheral advertises.
public struct HeraldAdvertisingConfiguration: Sendable {
    /// Which service UUID the advertisement carries (the other goes in the scan response).
    public var identifiers: HeraldAdvertIdentifiers
    /// Advertising interval in units of 0.625 ms (Core 5.4 Vol 4 Part E 7.8.5: 0x0020...0x4000).
    public var intervalMin: UInt16
    public var intervalMax: UInt16
    public var txPower: Int8?
    /// Identity resolving key, HCI byte order. With one, the peripheral advertises a resolvable
    /// private address that changes with every payload period; without, the controller's identity
    /// address (what a venue beacon, which has nothing to hide, uses).
    public var irk: InlineArray<16, UInt8>?
    /// The period grid (360 s periods from this epoch, unless shortened for a test) the address rotates on; the same as the key
    /// schedule's, so the address and the contact identifier change at the same instant.
    public var epoch: KeyEpoch
    /// How long before a period boundary the next address is computed (ms), so it is ready to set at
    /// the boundary itself: LE Rand and LE Encrypt are two controller round trips.
    public var preparationLead: Int64

    public init(identifiers: HeraldAdvertIdentifiers = .specification, intervalMilliseconds: Int = 200,
                txPower: Int8? = nil, irk: InlineArray<16, UInt8>? = nil, epoch: KeyEpoch = .standard,
                preparationLead: Int64 = 5_000) {
        self.identifiers = identifiers
        let units = UInt16(clamping: max(0x20, min(0x4000, intervalMilliseconds * 8 / 5)))
        intervalMin = units
        intervalMax = units
        self.txPower = txPower
        self.irk = irk
        self.epoch = epoch
        self.preparationLead = preparationLead
    }
}

/// Connectable Herald advertising with a resolvable private address rotated on the payload period grid.
///
/// The address is ah(IRK, prand) computed by the controller (LE Rand for prand, then LE Encrypt; Core 5.4
/// Vol 6 Part B 1.3.2.2) ahead of each boundary. At the boundary the advertiser disables advertising,
/// sets the new address and enables it again, in one batch: the controller refuses LE Set Random
/// Address while legacy advertising is enabled (Core 5.4 Vol 4 Part E 7.8.4). If the new address is not
/// ready at the boundary (a failed or refused command), advertising stays off until it is, so no
/// advertisement of a new period carries the previous period's address. Advertising is only ever
/// enabled after the first address is set (unless the controller cannot make one at all: then the
/// identity address is used rather than nothing).
///
/// Controllers without LE Encrypt (Bumble's virtual one never answers it) are covered by computing
/// the same AES-128 in software (`AES128`, already in the host for the database hash) when LE Encrypt
/// fails or has not completed within `watchdog`: the stack reports no command timeouts to
/// applications, so the advertiser keeps its own.
///
/// HCI runs one command at a time (Num_HCI_Command_Packets is 1 on Zephyr), so the disable at a late
/// boundary waits for any command in flight; `preparationLead` keeps the round trips well before it.
public struct HeraldAdvertiser {
    public let configuration: HeraldAdvertisingConfiguration
    public var clock: HeraldClock
    public private(set) var advertisement: HeraldAdvertisement
    /// False to stop advertising (e.g. a sensor that wants to be invisible); see `setAdvertising`.
    public private(set) var wanted = true

    /// Whether a device that rotates its address has its first resolvable private address set (or
    /// could not make one: then it uses the identity address, see `addressFailed`); always true
    /// without an IRK. Until then the controller's random address is the identity address, so
    /// nothing that sends our address (an advert, a scan request, a connection request) may start.
    public var addressSettled: Bool { !rotates || currentAddress != nil || (ready && failures > 0) }

    /// The address in use (nil before the first one, or without an IRK).
    public private(set) var currentAddress: BDAddress?
    /// The period (index on the grid) the advertiser last entered.
    public private(set) var period: Int64 = 0
    /// The period `currentAddress` was made for (.min when there is none).
    public private(set) var addressPeriod: Int64 = .min
    public private(set) var isAdvertising = false
    public private(set) var lastNow: UInt64 = 0

    var ready = false
    /// False when neither the payload nor the address changes with the period (see
    /// `HeraldPeripheral.tracksPeriods`): no boundary timer then, and `period` stays 0.
    public private(set) var tracksPeriods = true
    var configured = false
    var configuredAddressType: HCIOwnAddressType = .randomAddress
    var fallbackAddressType: HCIOwnAddressType = .randomAddress
    var job: Job = .none
    /// The enables in flight, so each answer is read against its own command.
    var enables = AdvertisingEnableQueue()
    /// `StackControl.refusedWhileAdvertising` when last read: a change means the controller stopped
    /// advertising for a central the stack refused.
    var refusalsSeen = 0
    var prepared: BDAddress?
    var preparedPeriod: Int64 = .min
    /// After a failed LE Rand/LE Encrypt, no new attempt before this time (doubling back-off).
    var retryAfter: UInt64 = 0
    var failures = 0
    /// Set once LE Encrypt failed or went unanswered: later addresses are hashed in software at once,
    /// rather than stalling the command queue on the same refusal every period.
    public private(set) var encryptsInSoftware = false
    /// When the job in progress was asked for (accurate: requests are made from timers and ready).
    var jobStartedAt: UInt64 = 0

    /// How long LE Rand + LE Encrypt may take together before the advertiser stops waiting (the host's
    /// command timeout is 2 s each).
    public static let watchdog: UInt64 = 5_000

    enum Job: Equatable {
        case none
        case random(period: Int64)
        case encrypt(period: Int64, prand: UInt32)
    }

    /// Status reported when a command succeeded but its return parameters were malformed
    /// (0x1F Unspecified Error, Core 5.4 Vol 1 Part F 2.31).
    static let malformedReturn = HCIStatus(rawValue: 0x1F)

    public init(configuration: HeraldAdvertisingConfiguration, clock: HeraldClock) throws(AdvertisingDataError) {
        self.configuration = configuration
        self.clock = clock
        advertisement = try HeraldAdvertisement(identifiers: configuration.identifiers, txPower: configuration.txPower)
    }

    /// With an advertisement made beforehand (`HeraldAdvertisement(advertisingData:scanResponseData:)`),
    /// which must be the one `configuration` makes: its identifiers and Tx power are not read.
    public init(configuration: HeraldAdvertisingConfiguration, clock: HeraldClock, advertisement: HeraldAdvertisement) {
        self.configuration = configuration
        self.clock = clock
        self.advertisement = advertisement
    }

    /// Rotating needs an IRK; the generic paths also ask the delegate (`rotatesAddress`), whose
    /// constant answer lets a build that never rotates drop the address machinery.
    var rotates: Bool { configuration.irk != nil }

    /// The period index of stack time `now`.
    public func period(at now: UInt64) -> Int64 {
        let sinceEpoch = clock.unixMillis(now: now) &- configuration.epoch.unixSeconds &* 1_000
        return HeraldClock.floorDivide(sinceEpoch, configuration.epoch.secondsPerPeriod &* 1_000)
    }

    /// UTC seconds at which period `p` starts.
    public func unixSeconds(startOf p: Int64) -> Int64 {
        configuration.epoch.unixSeconds &+ p &* configuration.epoch.secondsPerPeriod
    }

    /// Stack time at which period `p` starts.
    public func start(ofPeriod p: Int64) -> UInt64 {
        clock.stackTime(unixMillis: unixSeconds(startOf: p) &* 1_000)
    }

    // MARK: Stack events

    public mutating func stackDidBecomeReady<D: HeraldPeripheralDelegate, B: StackControlBuffers>(
        _ info: ControllerInfo, now: UInt64, tracksPeriods: Bool = true, control: inout StackControlOf<B>, delegate: inout D
    ) {
        precondition(tracksPeriods || !(D.rotatesAddress && rotates), "HeraldAdvertiser: a rotating address needs the period grid")
        self.tracksPeriods = tracksPeriods
        // The controller was reset: nothing we configured survives.
        ready = true
        configured = false
        isAdvertising = false
        enables.removeAll()
        job = .none
        prepared = nil
        preparedPeriod = .min
        currentAddress = nil
        addressPeriod = .min
        retryAfter = 0
        failures = 0
        lastNow = now
        period = tracksPeriods ? period(at: now) : 0
        fallbackAddressType = info.addressType == .publicDevice ? .publicAddress : .randomAddress
        if D.rotatesAddress, rotates {
            requestAddress(for: period, control: &control)
        } else {
            configureAndEnable(ownAddressType: fallbackAddressType, control: &control)
        }
    }

    public mutating func stackControllerDidFail() {
        ready = false
        isAdvertising = false
        enables.removeAll()
        job = .none
        prepared = nil
    }

    /// Legacy connectable advertising stops when a central connects (Core 5.4 Vol 6 Part B 4.4.2.3);
    /// enable it again so other centrals can still find us.
    public mutating func stackDidConnect<B: StackControlBuffers>(
        _ link: ConnectionSummary, now: UInt64, control: inout StackControlOf<B>
    ) {
        lastNow = now
        noteRefusals(control: control)
        guard ready, configured, wanted, isAdvertising else { return }
        // The links not kept for the central role are all taken (`InboundLinkPolicy`), or our own
        // central link took the last free slot: advertising stays off until one goes, or a central
        // would connect only to be refused (or silent centrals would take the rest).
        guard control.acceptsInboundLinks else {
            if link.role == .peripheral { isAdvertising = false } else { sendEnable(false, control: &control) }
            return
        }
        if link.role == .peripheral { sendEnable(true, control: &control) }
    }

    /// A controller at its connection limit refuses to advertise connectably (the enable after a
    /// connection fails); once a link is gone there may be room again.
    public mutating func stackDidDisconnect<B: StackControlBuffers>(now: UInt64, control: inout StackControlOf<B>) {
        lastNow = now
        noteRefusals(control: control)
        guard ready, configured, wanted, !isAdvertising, !rotates || addressPeriod >= period,
              control.acceptsInboundLinks else { return }
        sendEnable(true, control: &control)
    }

    /// Starts or stops advertising from the application.
    public mutating func setAdvertising<B: StackControlBuffers>(_ on: Bool, control: inout StackControlOf<B>) {
        wanted = on
        guard ready, configured else { return }
        if on != isAdvertising, !on || !rotates || addressPeriod >= period {
            sendEnable(on, control: &control)
        }
    }

    /// The next instant the advertiser must act: the next period boundary, before it the moment to
    /// prepare the next address, and a retry after a failure.
    public var deadline: UInt64? {
        var advertiser = self
        return advertiser.deadlineInPlace()
    }

    /// `deadline`, read where the advertiser lies: the getter is handed a copy of it (248 octets on
    /// the firmware wearable's main loop, on every tick). Mutating only for that; it changes nothing.
    public mutating func deadlineInPlace() -> UInt64? {
        guard ready, tracksPeriods else { return nil }
        let boundary = start(ofPeriod: period &+ 1)
        guard rotates else { return boundary }
        guard job == .none else { return min(boundary, jobStartedAt &+ Self.watchdog) }
        if addressPeriod < period { return min(boundary, max(retryAfter, lastNow)) }
        if preparedPeriod != period &+ 1 {
            let lead = UInt64(bitPattern: max(0, configuration.preparationLead))
            return min(boundary, max(retryAfter, boundary > lead ? boundary - lead : 0))
        }
        return boundary
    }

    public mutating func stackTimerFired<D: HeraldPeripheralDelegate, B: StackControlBuffers>(
        now: UInt64, control: inout StackControlOf<B>, delegate: inout D
    ) {
        lastNow = now
        guard ready, tracksPeriods else { return }
        let p = period(at: now)
        if p > period {
            period = p
            guard D.rotatesAddress, rotates else { return }
            if let address = prepared, preparedPeriod == p {
                prepared = nil
                apply(address, for: p, control: &control, delegate: &delegate)
            } else if isAdvertising {
                // The address for this period is late: stay silent rather than advertise the previous
                // period's address next to the new period's payload.
                sendEnable(false, control: &control)
            }
            if preparedPeriod < p { prepared = nil }
        }
        guard D.rotatesAddress, rotates else { return }
        if job != .none, now >= jobStartedAt &+ Self.watchdog {
            // Never answered: reported as an unsupported command.
            switch job {
            case .encrypt(let target, let prand):
                delegate.heraldPeripheral(commandFailed: HCILEEncrypt.opcode, status: .unknownCommand)
                job = .none
                encryptsInSoftware = true
                addressComputed(softwareAddress(prand: prand), for: target, control: &control, delegate: &delegate)
            default:
                delegate.heraldPeripheral(commandFailed: HCILERand.opcode, status: .unknownCommand)
                addressFailed(control: &control)
            }
        }
        guard job == .none, now >= retryAfter else { return }
        if addressPeriod < period {
            requestAddress(for: period, control: &control)
        } else if preparedPeriod != period &+ 1, let d = deadlineInPlace(), now >= d {
            requestAddress(for: period &+ 1, control: &control)
        }
    }

    /// Consumes completions of the advertiser's own commands; false for anyone else's.
    public mutating func stackCommandDidComplete<D: HeraldPeripheralDelegate, B: StackControlBuffers>(
        tag: CommandTag, opcode: HCIOpcode, status: HCIStatus, returnParameters: Span<UInt8>,
        control: inout StackControlOf<B>, delegate: inout D
    ) -> Bool {
        guard HeraldCommandTag.owns(tag) else { return false }
        if tag == HeraldCommandTag.advertising, opcode == HCILESetAdvertisingEnable.opcode,
           let outcome = enables.answered(status), outcome.last {
            // Only the last enable queued says what the controller ends up doing (AdvertisingEnableQueue).
            isAdvertising = outcome.advertising
        }
        guard status == .success else {
            delegate.heraldPeripheral(commandFailed: opcode, status: status)
            if tag == HeraldCommandTag.advertising {
                // LE Set Advertising Enable: read above.
            } else if !D.rotatesAddress {
                // Only the address round trips use the other tags.
            } else if tag == HeraldCommandTag.encrypt, case .encrypt(let target, let prand) = job {
                job = .none
                encryptsInSoftware = true
                addressComputed(softwareAddress(prand: prand), for: target, control: &control, delegate: &delegate)
            } else {
                addressFailed(control: &control)
            }
            return true
        }
        guard D.rotatesAddress else { return true }
        switch job {
        case .random(let p) where tag == HeraldCommandTag.random:
            guard let irk = configuration.irk, let random = try? UInt64(parsing: returnParameters) else {
                delegate.heraldPeripheral(commandFailed: opcode, status: Self.malformedReturn)
                addressFailed(control: &control)
                return true
            }
            let prand = ResolvablePrivateAddress.prand(fromLERand: random)
            // The first address after bring-up is hashed here at once: until it is set the
            // controller's random address is our identity, and the sensor's central waits for it
            // (`addressSettled`) rather than scan actively or initiate under the identity. LE Encrypt
            // could take the watchdog's 5 s to fail (Bumble's controller never answers it).
            if encryptsInSoftware || currentAddress == nil {
                job = .none
                addressComputed(softwareAddress(prand: prand), for: p, control: &control, delegate: &delegate)
                return true
            }
            job = .encrypt(period: p, prand: prand)
            control.send(ResolvablePrivateAddress.encryptCommand(irk: irk, prand: prand), tag: HeraldCommandTag.encrypt)
        case .encrypt(let p, let prand) where tag == HeraldCommandTag.encrypt:
            job = .none
            guard let result = try? HCILEEncrypt.ReturnParameters(parsing: returnParameters) else {
                delegate.heraldPeripheral(commandFailed: opcode, status: Self.malformedReturn)
                addressFailed(control: &control)
                return true
            }
            addressComputed(ResolvablePrivateAddress.address(prand: prand, result: result), for: p,
                            control: &control, delegate: &delegate)
        default:
            break
        }
        return true
    }

    mutating func addressComputed<D: HeraldPeripheralDelegate, B: StackControlBuffers>(
        _ address: BDAddress, for p: Int64, control: inout StackControlOf<B>, delegate: inout D
    ) {
        failures = 0
        if p <= period {
            // Made for this period (or, late, for an earlier one: it is fresh all the same).
            apply(address, for: period, control: &control, delegate: &delegate)
        } else {
            prepared = address
            preparedPeriod = p
        }
    }

    /// ah(IRK, prand) computed here: e() is AES-128 with the IRK as key (Core 5.4 Vol 3 Part H 2.2.2);
    /// HCI order is least significant octet first, FIPS-197 order the reverse.
    func softwareAddress(prand: UInt32) -> BDAddress {
        let input = ResolvablePrivateAddress.encryptInput(irk: configuration.irk ?? InlineArray(repeating: 0), prand: prand)
        let cipher = AES128(key: ResolvablePrivateAddress.reversed(input.key))
        let encrypted = ResolvablePrivateAddress.reversed(cipher.encrypt(ResolvablePrivateAddress.reversed(input.plaintext)))
        return ResolvablePrivateAddress.address(prand: prand, encrypted: encrypted)
    }

    // MARK: Commands

    mutating func requestAddress<B: StackControlBuffers>(for p: Int64, control: inout StackControlOf<B>) {
        job = .random(period: p)
        jobStartedAt = lastNow
        control.send(HCILERand(), tag: HeraldCommandTag.random)
    }

    /// Backs off 1, 2, 4 … 64 s. Without any address yet there is nothing private to protect: the
    /// identity address is advertised meanwhile rather than nothing.
    mutating func addressFailed<B: StackControlBuffers>(control: inout StackControlOf<B>) {
        job = .none
        failures += 1
        var backoff: UInt64 = 1_000
        for _ in 1..<min(max(failures, 1), 7) { backoff &*= 2 }
        retryAfter = lastNow &+ backoff
        if !configured { configureAndEnable(ownAddressType: fallbackAddressType, control: &control) }
    }

    /// Disable, set the address, enable: one batch, so the controller never advertises between the
    /// two addresses.
    mutating func apply<D: HeraldPeripheralDelegate, B: StackControlBuffers>(
        _ address: BDAddress, for p: Int64, control: inout StackControlOf<B>, delegate: inout D
    ) {
        // LE Set Random Address is refused while advertising, scanning or initiating (Core 5.4 Vol 4
        // Part E 7.8.4; Zephyr 2.5 and 3.0 answer 0x0C while advertising, active scanning or
        // initiating, and accept it while passive scanning): the scanner pauses whatever its kind and
        // a connection attempt is cancelled (the central hears 0x44 and tries again later), then the
        // scan the application wants resumes.
        control.pauseScanner()
        control.cancelConnecting(now: lastNow)
        // Only when on: disabling advertising that is off is refused by Zephyr 2.5 (0x0C; 3.0 accepts it).
        if isAdvertising { sendEnable(false, control: &control) }
        isAdvertising = false
        control.send(HCILESetRandomAddress(address: address), tag: HeraldCommandTag.advertising)
        currentAddress = address
        addressPeriod = p
        delegate.heraldPeripheral(didChangeAddress: address, unixMillis: clock.unixMillis(now: lastNow))
        configureAndEnable(ownAddressType: .randomAddress, control: &control)
        control.resumeScanning()
    }

    /// Queues LE Set Advertising Enable and notes it (`enables`); `isAdvertising` is what it asks for.
    /// A central the stack refused for want of a free link slot stopped the controller's advertising
    /// without a connection the advertiser saw.
    mutating func noteRefusals<B: StackControlBuffers>(control: StackControlOf<B>) {
        guard control.refusedWhileAdvertising != refusalsSeen else { return }
        refusalsSeen = control.refusedWhileAdvertising
        isAdvertising = false
    }

    mutating func sendEnable<B: StackControlBuffers>(_ on: Bool, control: inout StackControlOf<B>) {
        let dropped = control.droppedCommands
        control.send(HCILESetAdvertisingEnable(on), tag: HeraldCommandTag.advertising)
        if control.droppedCommands == dropped { enables.queued(on) }
        isAdvertising = on
    }

    mutating func configureAndEnable<B: StackControlBuffers>(
        ownAddressType: HCIOwnAddressType, control: inout StackControlOf<B>
    ) {
        if !configured || configuredAddressType != ownAddressType {
            if isAdvertising {
                sendEnable(false, control: &control)
            }
            control.send(HCILESetAdvertisingParameters(
                intervalMin: configuration.intervalMin, intervalMax: configuration.intervalMax,
                advertisingType: .connectableUndirected, ownAddressType: ownAddressType), tag: HeraldCommandTag.advertising)
            configuredAddressType = ownAddressType
        }
        if !configured {
            control.send(HCILESetAdvertisingData(data: advertisement.advertisingData), tag: HeraldCommandTag.advertising)
            control.send(HCILESetScanResponseData(data: advertisement.scanResponseData), tag: HeraldCommandTag.advertising)
            configured = true
        }
        if wanted, control.acceptsInboundLinks {
            sendEnable(true, control: &control)
        }
    }
}
