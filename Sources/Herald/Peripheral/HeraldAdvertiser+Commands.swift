import BluetoothHost

/// The HCI commands of a `HeraldAdvertiser`: the next address asked for (LE Rand, then LE Encrypt;
/// Core 5.4 Vol 6 Part B 1.3.2.2) with its back-off after a failure, and the advertising parameters,
/// data, random address and enable sent as one batch (Vol 4 Part E 7.8.4: no LE Set Random Address
/// while legacy advertising is enabled).
extension HeraldAdvertiser {
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

    /// A central the stack refused for want of a free link slot stopped the controller's advertising
    /// without a connection the advertiser saw.
    mutating func noteRefusals<B: StackControlBuffers>(control: StackControlOf<B>) {
        guard control.refusedWhileAdvertising != refusalsSeen else { return }
        refusalsSeen = control.refusedWhileAdvertising
        isAdvertising = false
    }

    /// Queues LE Set Advertising Enable and notes it (`enables`); `isAdvertising` is what it asks for.
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
