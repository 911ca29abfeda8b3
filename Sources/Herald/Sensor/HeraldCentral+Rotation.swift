import BluetoothHost

/// What the central does differently because devices on the payload period grid change address at
/// the same instant: every Herald device's Simple payload period is 86 400 s / 240 from a shared epoch,
/// so at each boundary our own address and those of the devices around us change together.
///
/// **Devices last heard before our own address changed** are not connected to until they are heard
/// again. Their address has probably gone with the period: the capture of two wearables on a 20 s
/// period shows the payload re-read falling due just after the boundary (it is one period old) and the
/// central initiating to the peer's address of the period just ended, which nobody advertises any
/// more; the attempt held the controller's single LE Create Connection (and the paused scanner) for
/// its 8 s timeout. A device still there is heard within its advertising interval and read then.
///
/// **Two devices that find each other at once**: both hear the other's new address within the same
/// advertising interval and would each start LE Create Connection to the other (both commands within a
/// millisecond, 330 ms after the boundary, on both simulated radios). A real link layer then makes two
/// links, one in each role (Zephyr's does; each device reads the other twice), and Bumble's virtual
/// controller, which keeps one LE connection per peer address (`le_connections` in bumble/controller.py,
/// 0.0.236), overwrites the first with the second: the first link's data goes nowhere, its Disconnect
/// never completes, and both devices end up peripheral on the surviving link, which neither closes, so
/// links piled up at every rotation until none was left. The tie-break: of two devices that both
/// advertise, the one whose advertised address is the larger waits `crossingHold` after first hearing
/// a device before connecting to it. The other connects at once; the waiting device sees the peer's
/// link arrive, reads the payload over it if it needs it (`didConnect`, inbound), and makes no link of
/// its own. A peer that never connects (a phone busy elsewhere) is read after the hold. The order
/// changes every period with the addresses, so neither device always waits.
///
/// Only a peer advertising a **resolvable private address** can be such a device: a Herald central
/// on the period grid rotates one, as we do. A static or public address (a venue beacon, which
/// never connects to anyone; a Bumble phone) is connected to at once: the hold before reading a
/// beacon was pure delay, 1.5 s on every first read for the wearables whose address was the larger.
extension HeraldCentral {
    /// How long the device with the larger address leaves the other to connect first (ms): the other
    /// hears our advert within one advertising interval (200 ms) and its link is up within a few
    /// hundred more on both simulated radios (advert → link 200 ms on Zephyr, 320 ms on Bumble).
    public static var crossingHold: UInt64 { 1_500 }

    /// Whether we leave `d` alone for now (see above).
    func holdsBack(_ d: HeraldDevice, now: UInt64) -> Bool {
        guard let own = advertisedAddress else { return false }
        if d.lastSeen < own.since { return true }
        return now &- d.firstSeen < Self.crossingHold && d.address.type == .randomDevice
            && d.address.address.randomSubtype == .resolvablePrivate && Self.isLarger(own.address, than: d.address.address)
    }

    /// Addresses compared as 48-bit numbers (most significant octet last in HCI order).
    static func isLarger(_ a: BDAddress, than b: BDAddress) -> Bool {
        var i = 5
        while i >= 0 {
            if a.bytes[i] != b.bytes[i] { return a.bytes[i] > b.bytes[i] }
            i -= 1
        }
        return false
    }
}
