import BluetoothHost

/// The LE Set Advertising Enable commands (Core 5.4 Vol 4 Part E 7.8.9) the advertiser has queued and
/// the controller has not yet answered, oldest first, so that an answer is read against the command
/// it answers and only the last one decides whether the controller is advertising.
///
/// Why: the controller stops legacy connectable advertising by itself when a central connects
/// (Vol 6 Part B 4.4.2.3), so a command queued before the host hears of the connection can find the
/// controller in the other state. Zephyr 2.5 then answers an Enable (1) while advertising, or a
/// Disable (0) while not, with 0x0C Command Disallowed; Zephyr 3.0 (and the Core since 5.0) accepts
/// both. Read as "not advertising", a refused Disable followed by an accepted Enable left the
/// advertiser believing it was off while the controller advertised: the next address change then
/// skipped the Disable and its LE Set Random Address was refused (0x0C), keeping the old address.
struct AdvertisingEnableQueue {
    /// The value of each command in flight, oldest in bit 0 (at most 32: the command queue holds
    /// fewer enables than that). 32 bits: a variable shift of a 64-bit value is a runtime call on
    /// Cortex-M (`__aeabi_llsl`), one of 32 bits an instruction.
    private var values: UInt32 = 0
    private(set) var count: UInt32 = 0

    mutating func removeAll() {
        values = 0
        count = 0
    }

    /// A command with `enable` was queued. Out of line: its caller, `HeraldAdvertiser.sendEnable`,
    /// is inlined where the advertiser enables or disables (five functions of the wearable), each
    /// with a copy of this (wearable -48 B, beacon -16 B).
    @inline(never)
    mutating func queued(_ enable: Bool) {
        guard count < 32 else { return }
        // UInt32 throughout: no generic integer conversion or shift (they may read `words`, an array).
        if enable { values |= (1 as UInt32) &<< count }
        count += 1
    }

    /// The oldest command was answered with `status`: whether the controller is advertising after it,
    /// and whether it was the last one queued (later ones decide otherwise). Nil when none was tracked.
    // Out of line: the witness of this feature in an image's symbols (Firmware/features.py).
    @inline(never)
    mutating func answered(_ status: HCIStatus) -> (advertising: Bool, last: Bool)? {
        guard count > 0 else { return nil }
        let enable = values & 1 == 1
        values = values &>> (1 as UInt32)
        count -= 1
        let advertising: Bool
        if status == .success || status == .commandDisallowed {
            // Done, or (Zephyr 2.5's 0x0C) already so.
            advertising = enable
        } else {
            // Any other refusal left the controller as it was (e.g. 0x07 no room for another
            // connection: not advertising).
            advertising = !enable
        }
        return (advertising, count == 0)
    }
}
