import BluetoothHost

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
    // Stored properties in an order that leaves no padding before the last few octets, on 32-bit
    // targets too (`Int` 4 octets, `Int64` 8-aligned): the 64-bit fields, then the 32-bit ones, the
    // job (13 octets, 8-aligned), one octet, the advertisement (2-aligned), the other octets. LLVM
    // splits the advertiser built in its place at padding and stores every later field as
    // 1-aligned, which the Cortex-M0 (no unaligned access) does an octet at a time
    // (docs/footprint.md, issue 37's fifth and sixth rounds). Configuration, clock, advertisement,
    // period... in that order left 4 octets after the advertisement, 3 after `job` and 4 after
    // each of `refusalsSeen` and `failures`.
    public let configuration: HeraldAdvertisingConfiguration
    public var clock: HeraldClock

    /// Whether a device that rotates its address has its first resolvable private address set (or
    /// could not make one: then it uses the identity address, see `addressFailed`); always true
    /// without an IRK. Until then the controller's random address is the identity address, so
    /// nothing that sends our address (an advert, a scan request, a connection request) may start.
    public var addressSettled: Bool { !rotates || currentAddress != nil || (ready && failures > 0) }

    /// The period (index on the grid) the advertiser last entered.
    public internal(set) var period: Int64 = 0
    /// The period `currentAddress` was made for (.min when there is none).
    public internal(set) var addressPeriod: Int64 = .min
    public internal(set) var lastNow: UInt64 = 0
    var preparedPeriod: Int64 = .min
    /// After a failed LE Rand/LE Encrypt, no new attempt before this time (doubling back-off).
    var retryAfter: UInt64 = 0
    /// When the job in progress was asked for (accurate: requests are made from timers and ready).
    var jobStartedAt: UInt64 = 0
    /// The enables in flight, so each answer is read against its own command.
    var enables = AdvertisingEnableQueue()
    /// `StackControl.refusedWhileAdvertising` when last read: a change means the controller stopped
    /// advertising for a central the stack refused.
    var refusalsSeen = 0
    var failures = 0
    var job: Job = .none
    /// False to stop advertising (e.g. a sensor that wants to be invisible); see `setAdvertising`.
    public internal(set) var wanted = true
    public internal(set) var advertisement: HeraldAdvertisement
    /// The address in use (nil before the first one, or without an IRK).
    public internal(set) var currentAddress: BDAddress?
    public internal(set) var isAdvertising = false
    var ready = false
    /// False when neither the payload nor the address changes with the period (see
    /// `HeraldPeripheral.tracksPeriods`): no boundary timer then, and `period` stays 0.
    public internal(set) var tracksPeriods = true
    var configured = false
    var configuredAddressType: HCIOwnAddressType = .randomAddress
    var fallbackAddressType: HCIOwnAddressType = .randomAddress
    var prepared: BDAddress?
    /// Set once LE Encrypt failed or went unanswered: later addresses are hashed in software at once,
    /// rather than stalling the command queue on the same refusal every period.
    public internal(set) var encryptsInSoftware = false

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
            // Only LE Encrypt's job is `.encrypt` (never set without `usesLEEncrypt`).
            case .encrypt(let target, let prand) where D.usesLEEncrypt:
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
            } else if D.usesLEEncrypt, tag == HeraldCommandTag.encrypt, case .encrypt(let target, let prand) = job {
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
            if !D.usesLEEncrypt || encryptsInSoftware || currentAddress == nil {
                job = .none
                addressComputed(softwareAddress(prand: prand), for: p, control: &control, delegate: &delegate)
                return true
            }
            job = .encrypt(period: p, prand: prand)
            control.send(ResolvablePrivateAddress.encryptCommand(irk: irk, prand: prand), tag: HeraldCommandTag.encrypt)
        case .encrypt(let p, let prand) where D.usesLEEncrypt && tag == HeraldCommandTag.encrypt:
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
}
