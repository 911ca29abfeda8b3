import Testing
@testable import BluetoothHost
@testable import Herald

/// A delegate whose build hashes its rotating address in software only (`usesLEEncrypt` false, as
/// the wearable firmware's): the events of `PeripheralEventLog`, the static choice its own.
struct SoftwareHashEventLog: HeraldPeripheralDelegate {
    static var usesLEEncrypt: Bool { false }
    var log = PeripheralEventLog()
    mutating func heraldPeripheral(commandFailed opcode: HCIOpcode, status: HCIStatus) {
        log.heraldPeripheral(commandFailed: opcode, status: status)
    }
}

extension PeripheralRotationTests {
    /// Without LE Encrypt the controller is asked only for LE Rand: every address is ah(IRK, prand)
    /// computed here (Core 5.4 Vol 3 Part H 2.2.2), one per period, with no gap at the boundaries and
    /// no watchdog's stall, on a controller that answers LE Encrypt and on one that never does.
    @Test func aBuildThatHashesInSoftwareNeverSendsLEEncrypt() throws {
        for ignoresEncrypt in [false, true] {
            let run = try simulate(SoftwareHashEventLog(), ignoresEncrypt: ignoresEncrypt, duration: 10_000 + 360_000 + 20_000)
            #expect(!run.controller.opcodes.contains(0x2017))
            #expect(run.controller.opcodes.contains(0x2018))  // LE Rand
            #expect(run.controller.disallowed == 0 && run.app.delegate.log.events.isEmpty)
            var byPeriod: [Int64: Set<BDAddress>] = [:]
            for a in run.adverts { byPeriod[run.periodOf(a.time), default: []].insert(a.address) }
            #expect(byPeriod.count == 3 && byPeriod.values.allSatisfy { $0.count == 1 })
            for a in Set(run.adverts.map(\.address)) { #expect(a.randomSubtype == .resolvablePrivate && resolves(a)) }
            #expect(run.adverts.contains { $0.time == 9_950 } && run.adverts.contains { $0.time == 10_050 })
            #expect(run.adverts.contains { $0.time == 369_950 } && run.adverts.contains { $0.time == 370_050 })
        }
    }
}
