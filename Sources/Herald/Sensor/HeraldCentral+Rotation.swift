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
/// advertise, one waits `crossingHold` after first hearing the other before connecting to it
/// (`waits(_:for:)`). The other connects at once; the waiting device sees the peer's link arrive,
/// reads the payload over it if it needs it (`didConnect`, inbound), and makes no link of its own. A
/// peer that never connects (a phone busy elsewhere) is read after the hold. The choice changes every
/// period with the addresses.
///
/// **Who waits** is a coin tossed for the pair, which both devices toss alike: a hash of the two
/// addresses' exclusive or (the same from either side) says whether the larger address waits or the
/// smaller. It replaced "the larger address waits", under which a crowd is one order: among six
/// wearables the smallest address had to connect to all five others (and to the beacon and the
/// phone, as everyone does), one attempt at a time over its two central links, while the largest waited
/// for all five and took their links on its two inbound slots. A rule that compares one number per
/// device, whatever the number, is such an order; a coin per pair is not: each device connects to
/// about half its peers (issue 39, docs/crowd-issue-39.md).
///
/// Only a peer advertising a **resolvable private address** can be such a device: a Herald central
/// on the period grid rotates one, as we do. A static or public address (a venue beacon, which
/// never connects to anyone; a Bumble phone) is connected to at once: the hold before reading a
/// beacon was pure delay, 1.5 s on every first read for the wearables that waited.
extension HeraldCentral {
    /// How long the device that waits (`waits(_:for:)`) leaves the other to connect first (ms): the
    /// other hears our advert within an advertising interval or two (100 ms) and its link is up within a few
    /// hundred more on both simulated radios (advert → link 200 ms on Zephyr, 320 ms on Bumble).
    public static var crossingHold: UInt64 { 1_500 }

    /// Whether we leave `d` alone for now (see above).
    func holdsBack(_ d: HeraldDevice, now: UInt64) -> Bool {
        guard let own = advertisedAddress else { return false }
        if d.lastSeen < own.since { return true }
        return now &- d.firstSeen < Self.crossingHold && d.address.type == .randomDevice
            && d.address.address.randomSubtype == .resolvablePrivate && Self.waits(own.address, for: d.address.address)
    }

    /// Whether the device at `own` waits for the one at `peer` (see above). Exactly one of two
    /// different addresses waits for the other: the coin is the same from both sides, and exactly one
    /// is the larger.
    static func waits(_ own: BDAddress, for peer: BDAddress) -> Bool {
        isLarger(own, than: peer) != pairCoin(own, peer)
    }

    /// A bit that depends on the pair only: the top bit of the multiplicative hash (Knuth's
    /// 2^32/φ) of the addresses' exclusive or, folded to 32 bits (no 64-bit multiply on a Cortex-M0).
    static func pairCoin(_ a: BDAddress, _ b: BDAddress) -> Bool {
        func x(_ i: Int) -> UInt32 { UInt32(truncatingIfNeeded: a.bytes[i] ^ b.bytes[i]) }
        let folded = (x(0) | x(1) &<< (8 as UInt32) | x(2) &<< (16 as UInt32) | x(3) &<< (24 as UInt32))
            ^ (x(4) | x(5) &<< (8 as UInt32))
        return (folded &* 0x9E37_79B9) & 0x8000_0000 != 0
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
