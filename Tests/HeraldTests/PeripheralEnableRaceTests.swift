import Testing
@testable import BluetoothHost
@testable import Herald

/// A central connects at the instant the address changes: the controller stops advertising by itself
/// (Core 5.4 Vol 6 Part B 4.4.2.3) before it reads the advertiser's Disable. Zephyr 2.5 refuses that
/// Disable, and the Enable the advertiser sends again for the connection, with 0x0C (the state is
/// already held); Zephyr 3.0 accepts both. Either way the controller ends up advertising, and the
/// advertiser must know it, or the next address change skips the Disable and its LE Set Random
/// Address is refused, keeping the old address for a whole period.
extension PeripheralRotationTests {
    @Test(arguments: [true, false])
    func aConnectionAtTheBoundaryLeavesTheAdvertiserInStepWithTheController(strictEnable: Bool) throws {
        // Boundaries at 10 s and 370 s; the central connects at the first.
        let run = try simulate(strictEnable: strictEnable, duration: 10_000 + 360_000 + 20_000, connectAt: 10_000)
        #expect(run.app.peripheral.link(handle: 0x0040) != nil)
        #expect(run.controller.disallowed == 0, "LE Set Random Address was never sent while advertising")
        let rotations = Array(run.controller.addressChanges.dropFirst(2))
        #expect(rotations.count == 2)
        for (t, boundary) in zip(rotations, [10_000, 370_000] as [UInt64]) {
            #expect(t >= boundary && t < boundary + 10, "address changed at \(t)")
        }
        // Advertising resumed after the connection and goes on under each period's address.
        #expect(run.adverts.contains { $0.time == 10_050 } && run.adverts.contains { $0.time == 370_050 })
        var byPeriod: [Int64: Set<BDAddress>] = [:]
        for a in run.adverts { byPeriod[run.periodOf(a.time), default: []].insert(a.address) }
        #expect(byPeriod.count == 3 && byPeriod.values.allSatisfy { $0.count == 1 })
        #expect(run.app.peripheral.advertiser.isAdvertising == run.controller.advertising)
        // Zephyr 2.5 refused the Disable and the second Enable (the state already held); 3.0 nothing.
        let refusedEnables = run.app.delegate.events.filter { $0 == "failed 8202 12" }.count
        #expect(refusedEnables == (strictEnable ? 2 : 0), "\(run.app.delegate.events)")
    }
}
