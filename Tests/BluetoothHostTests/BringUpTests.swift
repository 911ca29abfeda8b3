import Testing
@testable import BluetoothHost

/// Records what the host writes.
struct WireLog: H4Output {
    var packets: [[UInt8]] = []
    /// Every packet sent, in order (`packets` is drained as the fake controller answers).
    var sent: [[UInt8]] = []
    mutating func send(h4 packet: Span<UInt8>) {
        var bytes: [UInt8] = []
        for i in packet.indices { bytes.append(packet[i]) }
        packets.append(bytes)
        sent.append(bytes)
    }
}

/// Records what the host reports.
struct DelegateLog: HostDelegate {
    var ready: ControllerInfo?
    var failures: [ControllerFailure] = []
    var completions: [(CommandTag, UInt16, UInt8)] = []
    var reports: [(address: BDAddress, rssi: Int8?, data: [UInt8])] = []
    mutating func hostDidBecomeReady(_ info: ControllerInfo) { ready = info }
    mutating func hostControllerDidFail(_ failure: ControllerFailure) { failures.append(failure) }
    mutating func hostCommandDidComplete(tag: CommandTag, opcode: HCIOpcode, status: HCIStatus, returnParameters: Span<UInt8>) {
        completions.append((tag, opcode.rawValue, status.rawValue))
    }
    mutating func hostDidReceive(advertisingReport r: borrowing AdvertisingReport) {
        var d: [UInt8] = []
        for i in r.data.indices { d.append(r.data[i]) }
        reports.append((r.address.address, r.rssi, d))
    }
}

/// A scripted controller: answers each command with what a real one of its kind would.
struct FakeController {
    var manufacturer: UInt16 = 0x05F1
    var publicAddress: [UInt8] = [0, 0, 0, 0, 0, 0]
    var answersVendorCommands = true
    var staticAddress: [UInt8]? = [0x11, 0x22, 0x33, 0x44, 0x55, 0xD6]  // top bits 11: static
    var resetsToIgnore = 0
    var silent = false
    var sendNOPFirst = false
    var supportsBufferSizeV2 = false
    /// Lists LE Set Default PHY and LE Set PHY (octet 35 bits 5 and 6), as Zephyr's controller does;
    /// `phyCommandStatus` answers both (0x01 Unknown HCI Command: a controller that lists them but
    /// does not know them).
    var listsPHYCommands = false
    var phyCommandStatus: UInt8 = 0
    /// LE Set PHY goes unanswered, as Bumble's controller (0.0.236) leaves it.
    var ignoresSetPHY = false
    var aclLength: UInt16 = 27
    var aclCount: UInt8 = 3
    var seen: [UInt16] = []
    /// The rules of Zephyr's link layer (v2.5.0), which Bumble's virtual controller does not keep:
    /// LE Create Connection while scanning and LE Set Advertising Enable (0) while not advertising
    /// are refused with 0x0C Command Disallowed.
    var zephyrRules = true
    var scanning = false
    var advertising = false
    /// An LE Create Connection accepted and not yet ended by an LE Connection Complete (the test that
    /// feeds that event says so: `CentralHarness.feed`). Without one, LE Create Connection Cancel is
    /// refused with 0x0C (Core 5.4 Vol 4 Part E 7.8.13), as every controller does.
    var initiating = false
    /// Status for LE Create Connection's Command Status when it is not refused for scanning.
    var createConnectionStatus: UInt8 = 0
    /// Every non-zero status the controller answered with, by opcode: a host that keeps the
    /// controller's rules leaves this empty.
    var refusals: [(opcode: UInt16, status: UInt8)] = []

    static func commandComplete(_ opcode: UInt16, _ params: [UInt8]) -> [UInt8] {
        [0x04, 0x0E, UInt8(3 + params.count), 0x01, UInt8(opcode & 0xFF), UInt8(opcode >> 8)] + params
    }

    mutating func answer(_ packet: [UInt8]) -> [UInt8] {
        guard packet.first == 0x01, packet.count >= 4, !silent else { return [] }
        let opcode = UInt16(packet[1]) | UInt16(packet[2]) << 8
        seen.append(opcode)
        let ok: UInt8 = 0
        switch opcode {
        case 0x0C03:  // Reset
            if resetsToIgnore > 0 { resetsToIgnore -= 1; return [] }
            let nop: [UInt8] = sendNOPFirst ? [0x04, 0x0E, 0x03, 0x01, 0x00, 0x00] : []
            return nop + Self.commandComplete(opcode, [ok])
        case 0x1001:  // Read Local Version
            return Self.commandComplete(opcode, [ok, 0x0D, 0x00, 0x00, 0x0D, UInt8(manufacturer & 0xFF), UInt8(manufacturer >> 8), 0x00, 0x00])
        case 0x1002:  // Read Local Supported Commands
            var bitmap = [UInt8](repeating: 0, count: 64)
            bitmap[15] |= 0x02; bitmap[33] |= 0x40; bitmap[34] |= 0x01; bitmap[35] |= 0x08  // 33.6: LE Set Data Length
            if supportsBufferSizeV2 { bitmap[41] |= 0x20 }
            if listsPHYCommands { bitmap[35] |= 0x60 }
            return Self.commandComplete(opcode, [ok] + bitmap)
        case 0x1003: return Self.commandComplete(opcode, [ok] + [UInt8](repeating: 0, count: 8))
        case 0x0C01, 0x2001, 0x2024, 0x2005: return Self.commandComplete(opcode, [ok])
        case 0x200A:  // LE Set Advertising Enable
            let enable = packet.count > 4 && packet[4] == 1
            if zephyrRules, !enable, !advertising { return refuse(opcode, 0x0C, complete: true) }
            advertising = enable
            return Self.commandComplete(opcode, [ok])
        case 0x200C:  // LE Set Scan Enable
            scanning = packet.count > 4 && packet[4] == 1
            return Self.commandComplete(opcode, [ok])
        // Advertising, scanning and Create Connection Cancel complete at once.
        case 0x2006, 0x2008, 0x2009, 0x200B: return Self.commandComplete(opcode, [ok])
        case 0x200E:  // LE Create Connection Cancel
            if !initiating { return refuse(opcode, 0x0C, complete: true) }
            return Self.commandComplete(opcode, [ok])
        // LE Set Data Length, LE Remote Connection Parameter Request (Negative) Reply: the handle.
        case 0x2020, 0x2021, 0x2022: return Self.commandComplete(opcode, [ok, packet[4], packet[5]])
        case 0x200D:  // LE Create Connection: refused while the scanner runs on Zephyr
            if zephyrRules, scanning { return refuse(opcode, 0x0C, complete: false) }
            if createConnectionStatus != 0 { return refuse(opcode, createConnectionStatus, complete: false) }
            initiating = true
            return [0x04, 0x0F, 0x04, ok, 0x01, UInt8(opcode & 0xFF), UInt8(opcode >> 8)]
        // Disconnect and LE Connection Update answer with Command Status; their result comes later
        // in its own event (Core 5.4 Vol 4 Part E 7.1.6, 7.8.18).
        case 0x0406, 0x2013: return [0x04, 0x0F, 0x04, ok, 0x01, UInt8(opcode & 0xFF), UInt8(opcode >> 8)]
        case 0x2031:  // LE Set Default PHY
            return phyCommandStatus == 0 ? Self.commandComplete(opcode, [ok]) : refuse(opcode, phyCommandStatus, complete: true)
        case 0x2032:  // LE Set PHY: Command Status, LE PHY Update Complete later (7.8.49)
            if ignoresSetPHY { return [] }
            return phyCommandStatus == 0 ? [0x04, 0x0F, 0x04, ok, 0x01, UInt8(opcode & 0xFF), UInt8(opcode >> 8)]
                                         : refuse(opcode, phyCommandStatus, complete: false)
        case 0x2002:  // LE Read Buffer Size v1
            return Self.commandComplete(opcode, [ok, UInt8(aclLength & 0xFF), UInt8(aclLength >> 8), aclCount])
        case 0x2060:  // v2
            return Self.commandComplete(opcode, [ok, UInt8(aclLength & 0xFF), UInt8(aclLength >> 8), aclCount, 0, 0, 0])
        case 0x2003: return Self.commandComplete(opcode, [ok, 0xFF, 0x01, 0, 0, 0, 0, 0, 0])
        case 0x1009: return Self.commandComplete(opcode, [ok] + publicAddress)
        case 0x202F: return Self.commandComplete(opcode, [ok, 0xFB, 0x00, 0x48, 0x08, 0xFB, 0x00, 0x48, 0x08])
        case 0xFC01:
            guard answersVendorCommands else { return [] }
            return Self.commandComplete(opcode, [ok, 0x02, 0x00, 0x01, 0x00, 0x01, 0x03, 0x07, 0x00, 0x00, 0x00, 0x00, 0x00])
        case 0xFC02:
            guard answersVendorCommands else { return [] }
            var bitmap = [UInt8](repeating: 0, count: 64)
            bitmap[0] = 0x3F  // 0xFC01-0xFC06
            bitmap[1] = 0x01  // 0xFC09... see ZephyrSupportedCommands
            return Self.commandComplete(opcode, [ok] + bitmap)
        case 0xFC09:
            guard answersVendorCommands, let s = staticAddress else { return [] }
            return Self.commandComplete(opcode, [ok, 0x01] + s + [UInt8](repeating: 0xAB, count: 16))
        default:
            return Self.commandComplete(opcode, [0x01])  // Unknown HCI Command
        }
    }

    mutating func refuse(_ opcode: UInt16, _ status: UInt8, complete: Bool) -> [UInt8] {
        refusals.append((opcode, status))
        return complete ? Self.commandComplete(opcode, [status])
                        : [0x04, 0x0F, 0x04, status, 0x01, UInt8(opcode & 0xFF), UInt8(opcode >> 8)]
    }
}

/// Drives a host against a fake controller in simulated time until it settles.
struct BringUpHarness {
    var host = HCIHost(configuration: HostConfiguration(randomAddressSeed: [0x01, 0x02, 0x03, 0x04, 0x05, 0x06]))
    var controller: FakeController
    var wire = WireLog()
    var delegate = DelegateLog()
    var now: UInt64 = 0

    init(_ controller: FakeController) { self.controller = controller }

    mutating func deliverPending() {
        while !wire.packets.isEmpty {
            let sent = wire.packets.removeFirst()
            let reply = controller.answer(sent)
            if !reply.isEmpty { host.receive(reply.span, now: now, delegate: &delegate, output: &wire) }
        }
    }

    /// Runs until ready/failed or `limit` ms of simulated time pass.
    mutating func run(limit: UInt64 = 20_000) {
        host.start(now: now, output: &wire)
        while now < limit {
            deliverPending()
            if delegate.ready != nil || !delegate.failures.isEmpty { return }
            guard let deadline = host.nextDeadline else { return }
            now = max(now, deadline)
            host.tick(now: now, delegate: &delegate, output: &wire)
        }
    }
}

@Suite struct BringUpTests {
    @Test func zephyrControllerUsesItsStaticAddress() throws {
        var h = BringUpHarness(FakeController())
        h.run()
        let info = try #require(h.delegate.ready)
        #expect(info.addressSource == .zephyrStatic)
        #expect(info.address.bytes[5] == 0xD6 && info.address.bytes[0] == 0x11)
        #expect(info.aclDataPacketLength == 27 && info.aclDataPacketCount == 3)
        #expect(info.zephyrVersion != nil)
        // The last command sets that address (Reset cleared it).
        #expect(h.controller.seen.last == 0x2005)
        #expect(h.controller.seen.contains(0xFC09))
        #expect(h.host.isReady)
    }

    /// The standard bitmap is kept as a value and a flag (`ControllerInfo`), read back through its
    /// optional view; of Zephyr's vendor bitmap, what bring-up uses of it.
    @Test func bringUpKeepsTheCommandBitmapAndWhatItUsesOfZephyrs() throws {
        var h = BringUpHarness(FakeController())
        h.run()
        let info = try #require(h.delegate.ready)
        let commands = try #require(info.supportedCommands)
        var expected = InlineArray<64, UInt8>(repeating: 0)
        expected[15] = 0x02; expected[33] = 0x40; expected[34] = 0x01; expected[35] = 0x08
        #expect(commands == HCISupportedCommands(octets: expected))
        #expect(info.supports(octet: 33, bit: 6) && !info.supports(octet: 33, bit: 5))
        #expect(info.lists(octet: 35, bit: 3) && !info.lists(octet: 41, bit: 5))
        #expect(info.listsZephyrReadStaticAddresses)
    }

    /// The static random address from the seed (Core 5.4 Vol 6 Part B 1.3.2.1): top bits 0b11, and a
    /// random part that is all zeros or all ones altered; against the rule written out bit by bit.
    @Test func staticRandomAddressFollowsTheRuleForEverySeedShape() {
        func expected(_ seed: [UInt8]) -> [UInt8] {
            var a = seed
            a[5] |= 0xC0
            let bits = (0..<46).map { (a[$0 / 8] >> UInt8($0 % 8)) & 1 }
            if bits.allSatisfy({ $0 == 0 }) || bits.allSatisfy({ $0 == 1 }) { a[0] ^= 0x5A }
            return a
        }
        var seeds: [[UInt8]] = [[0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0xC0], [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x3F],
                                [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF], [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F],
                                [0xFF, 0xFF, 0xFF, 0xFF, 0xFE, 0xFF], [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x1F],
                                [0, 0, 0, 0, 1, 0], [0, 0, 0, 0, 0, 0x01], [0x42, 0x45, 0x41, 0x43, 0x4F, 0x4E]]
        var x: UInt32 = 12345
        for _ in 0..<200 {
            seeds.append((0..<6).map { _ in x = x &* 1_103_515_245 &+ 12345; return UInt8(truncatingIfNeeded: x >> 16) })
        }
        for seed in seeds {
            var octets = InlineArray<6, UInt8>(repeating: 0)
            for i in 0..<6 { octets[i] = seed[i] }
            var host = HCIHost(configuration: HostConfiguration(randomAddressSeed: octets))
            let address = host.staticRandomAddress()
            #expect((0..<6).map { address.bytes[$0] } == expected(seed), "seed \(seed)")
            #expect(address.randomSubtype == .staticAddress)
        }
    }

    @Test func theCommandBitmapReadsBackAsSet() {
        var info = ControllerInfo()
        #expect(info.supportedCommands == nil)
        // No bitmap: the Core 4.2 baseline is assumed, and nothing is listed.
        #expect(info.supports(octet: 41, bit: 5) && !info.lists(octet: 15, bit: 1))
        #expect(!info.listsZephyrReadStaticAddresses)
        var octets = InlineArray<64, UInt8>(repeating: 0)
        octets[41] = 0x20; octets[1] = 0x01
        info.supportedCommands = HCISupportedCommands(octets: octets)
        #expect(info.supportedCommands == HCISupportedCommands(octets: octets))
        #expect(info.lists(octet: 41, bit: 5) && !info.supports(octet: 15, bit: 1))
        info.supportedCommands = nil
        #expect(info.supportedCommands == nil)
        #expect(info.supports(octet: 15, bit: 1) && !info.lists(octet: 41, bit: 5))
        #expect(!info.listsZephyrReadStaticAddresses)
    }

    /// Bring-up encodes its commands by opcode in one place; each must be the packet the command's
    /// own type encodes.
    @Test func bringUpSendsWhatTheCommandTypesEncode() throws {
        func typed<C: HCICommand>(_ command: C) -> [UInt8] {
            let packet = HCICommandPacket(command)
            var bytes: [UInt8] = []
            for i in packet.bytes.span.indices { bytes.append(packet.bytes.span[i]) }
            return bytes
        }
        var h = BringUpHarness(FakeController())
        h.run()
        let info = try #require(h.delegate.ready)
        let expected = [
            typed(HCIReset()), typed(HCIReadLocalVersionInformation()), typed(HCIReadLocalSupportedCommands()),
            typed(HCIReadLocalSupportedFeatures()), typed(HCISetEventMask(mask: HostEventMasks.events)),
            typed(HCILESetEventMask(mask: HostEventMasks.leEvents)), typed(HCILEReadBufferSize()),
            typed(HCILEReadLocalSupportedFeatures()), typed(HCIReadBDADDR()), typed(HCILEReadMaximumDataLength()),
            typed(HCILEWriteSuggestedDefaultDataLength(txOctets: 251, txTime: 2120)),
            typed(ZephyrReadVersionInformation()), typed(ZephyrReadSupportedCommands()), typed(ZephyrReadStaticAddresses()),
            typed(HCILESetRandomAddress(address: info.address)),
        ]
        #expect(h.wire.sent == expected)
    }

    @Test func controllerWithoutVendorCommandsGetsAGeneratedStaticAddress() throws {
        var c = FakeController()
        c.manufacturer = 0x000F  // not a Zephyr link layer: no 0xFCxx is sent at all
        var h = BringUpHarness(c)
        h.run()
        let info = try #require(h.delegate.ready)
        #expect(info.addressSource == .generatedStatic)
        #expect(info.address.randomSubtype == .staticAddress)
        #expect(!h.controller.seen.contains { $0 >> 10 == 0x3F })
    }

    @Test func publicAddressIsPreferredAndNoRandomAddressIsSet() throws {
        var c = FakeController()
        c.manufacturer = 0x000F
        c.publicAddress = [0x66, 0x55, 0x44, 0x33, 0x22, 0x11]
        var h = BringUpHarness(c)
        h.run()
        let info = try #require(h.delegate.ready)
        #expect(info.addressSource == .publicAddress)
        #expect(info.addressType == .publicDevice)
        #expect(!h.controller.seen.contains(0x2005))
    }

    @Test func nordicControllerThatIgnoresVendorCommandsStillComesUp() throws {
        var c = FakeController()
        c.manufacturer = 0x0059
        c.answersVendorCommands = false
        var h = BringUpHarness(c)
        h.run()
        let info = try #require(h.delegate.ready)
        #expect(info.addressSource == .generatedStatic)
        #expect(info.zephyrVersion == nil)
        // One vendor command timed out and bring-up moved on; total time stays bounded.
        #expect(h.now < 5_000)
    }

    @Test func lateResetIsRetried() throws {
        var c = FakeController()
        c.resetsToIgnore = 3
        var h = BringUpHarness(c)
        h.run()
        #expect(h.delegate.ready != nil)
        #expect(h.controller.seen.filter { $0 == 0x0C03 }.count == 4)
        #expect(h.now >= 600)
    }

    @Test func unsolicitedNOPIsAccepted() {
        var c = FakeController()
        c.sendNOPFirst = true
        var h = BringUpHarness(c)
        h.run()
        #expect(h.delegate.ready != nil)
    }

    @Test func silentControllerFailsAfterBoundedResets() {
        var c = FakeController()
        c.silent = true
        var h = BringUpHarness(c)
        h.run()
        #expect(h.delegate.failures == [.noResponse(resets: 15)])
        #expect(h.delegate.ready == nil)
        #expect(h.now <= 4_000)
    }

    @Test func bufferSizeV2IsUsedWhenSupported() throws {
        var c = FakeController()
        c.supportsBufferSizeV2 = true
        c.aclLength = 251
        var h = BringUpHarness(c)
        h.run()
        #expect(h.controller.seen.contains(0x2060))
        #expect(try #require(h.delegate.ready).aclDataPacketLength == 251)
    }

    @Test func hardwareErrorMarksControllerFailed() {
        var h = BringUpHarness(FakeController())
        h.run()
        let hardwareError: [UInt8] = [0x04, 0x10, 0x01, 0x42]
        h.host.receive(hardwareError.span, now: h.now, delegate: &h.delegate, output: &h.wire)
        #expect(h.delegate.failures == [.hardwareError(code: 0x42)])
        #expect(h.host.state == .failed(.hardwareError(code: 0x42)))
    }

    @Test func zephyrAssertVendorEventMarksControllerFailed() {
        var h = BringUpHarness(FakeController())
        h.run()
        let assertEvent: [UInt8] = [0x04, 0xFF, 0x03, 0xAA, 0x01, 0x02]
        h.host.receive(assertEvent.span, now: h.now, delegate: &h.delegate, output: &h.wire)
        #expect(h.delegate.failures == [.controllerAssert])
    }

    @Test func newerZephyrControllerAssertEventMarksControllerFailed() {
        var h = BringUpHarness(FakeController())
        h.run()
        // Vendor event, data type 0x02 (controller assert), "ll.c\0", line 321.
        let assertEvent: [UInt8] = [0x04, 0xFF, 0x0A, 0x02, 0x6C, 0x6C, 0x2E, 0x63, 0x00, 0x41, 0x01, 0x00, 0x00]
        h.host.receive(assertEvent.span, now: h.now, delegate: &h.delegate, output: &h.wire)
        #expect(h.delegate.failures == [.controllerAssert])
    }

    @Test func otherVendorEventsStartingWithTwoAreNotFatal() {
        var h = BringUpHarness(FakeController())
        h.run()
        let other: [UInt8] = [0x04, 0xFF, 0x04, 0x02, 0x10, 0x20, 0x30]
        h.host.receive(other.span, now: h.now, delegate: &h.delegate, output: &h.wire)
        #expect(h.delegate.failures.isEmpty)
        #expect(h.host.isReady)
    }

    @Test func restartAfterFailureRunsBringUpAgainWithTheSameGeneratedAddress() throws {
        var c = FakeController()
        c.manufacturer = 0x000F
        var h = BringUpHarness(c)
        h.run()
        let first = try #require(h.delegate.ready).address
        h.host.receive([0x04, 0x10, 0x01, 0x00].span, now: h.now, delegate: &h.delegate, output: &h.wire)
        h.delegate.ready = nil
        h.delegate.failures = []
        h.run()
        #expect(try #require(h.delegate.ready).address == first)
    }

    @Test func lateCommandCompleteIsIgnored() {
        var h = BringUpHarness(FakeController())
        h.run()
        // A Command Complete for Read BD_ADDR nobody is waiting for.
        let late = FakeController.commandComplete(0x1009, [0, 1, 2, 3, 4, 5, 6])
        h.host.receive(late.span, now: h.now, delegate: &h.delegate, output: &h.wire)
        #expect(h.host.commands.lateCompletions == 1)
        #expect(h.delegate.completions.isEmpty)
        #expect(h.host.isReady)
    }

    @Test func extendedAndLegacyAdvertisingReportsReachTheDelegate() throws {
        var h = BringUpHarness(FakeController())
        h.run()
        // Captured from Bumble's virtual controller answering a legacy scan (Extended Advertising
        // Report, legacy ADV_IND, random address F0:F1:F2:F3:F4:F5, RSSI -50).
        let extended: [UInt8] = [
            0x04, 0x3E, 0x31, 0x0D, 0x01, 0x13, 0x00, 0x01, 0xF5, 0xF4, 0xF3, 0xF2, 0xF1, 0xF0, 0x01, 0x01,
            0x00, 0x00, 0xCE, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x17, 0x02, 0x01, 0x06,
            0x06, 0xFF, 0xFA, 0xFF, 0xCA, 0xFE, 0x01, 0x0C, 0x09, 0x68, 0x65, 0x72, 0x61, 0x6C, 0x64, 0x2D,
            0x70, 0x65, 0x65, 0x72,
        ]
        h.host.receive(extended.span, now: h.now, delegate: &h.delegate, output: &h.wire)
        let r = try #require(h.delegate.reports.first)
        #expect(r.address == BDAddress(displayOrder: 0xF0, 0xF1, 0xF2, 0xF3, 0xF4, 0xF5))
        #expect(r.rssi == -50)
        #expect(r.data.count == 0x17 && r.data[0] == 0x02 && r.data[3] == 0x06)
        // Legacy LE Advertising Report: ADV_IND, public address, 3 bytes of flags AD, RSSI -60.
        let legacy: [UInt8] = [0x04, 0x3E, 0x0F, 0x02, 0x01, 0x00, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x03, 0x02, 0x01, 0x06, 0xC4]
        h.host.receive(legacy.span, now: h.now, delegate: &h.delegate, output: &h.wire)
        #expect(h.delegate.reports.count == 2)
        #expect(h.delegate.reports.last?.rssi == -60)
        #expect(h.delegate.reports.last?.data == [0x02, 0x01, 0x06])
    }

    /// An application that never scans: reports (should a controller send any) are dropped unread,
    /// not passed on as other events either.
    @Test func aDelegateThatTakesNoReportsGetsNone() {
        var h = BringUpHarness(FakeController())
        h.run()
        var silent = ReportlessDelegate()
        let legacy: [UInt8] = [0x04, 0x3E, 0x0F, 0x02, 0x01, 0x00, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x03, 0x02, 0x01, 0x06, 0xC4]
        h.host.receive(legacy.span, now: h.now, delegate: &silent, output: &h.wire)
        #expect(silent.reports == 0 && silent.events == 0)
        // Another LE Meta subevent still arrives: Connection Update Complete for handle 0x0040, parsed.
        let update: [UInt8] = [0x04, 0x3E, 0x0A, 0x03, 0x00, 0x40, 0x00, 0x18, 0x00, 0x00, 0x00, 0x48, 0x00]
        h.host.receive(update.span, now: h.now, delegate: &silent, output: &h.wire)
        #expect(silent.events == 0 && silent.linkEvents == 1)
        #expect(LEStack<NonScanningApp, 1, 24, 128>.receivesAdvertisingReports == false)
        #expect(LEStack<MandatoryServerApp, 1, 24, 128>.receivesAdvertisingReports)
    }
}

/// Counts what reaches it; says it takes no advertising reports.
struct ReportlessDelegate: HostDelegate {
    var reports = 0
    var events = 0
    mutating func hostDidReceive(advertisingReport r: borrowing AdvertisingReport) { reports += 1 }
    var linkEvents = 0
    mutating func hostDidReceive(event: borrowing HCIEventPacket) { events += 1 }
    mutating func hostDidReceive(connectionUpdateComplete: HCILEConnectionUpdateCompleteEvent) { linkEvents += 1 }
    static var receivesAdvertisingReports: Bool { false }
}

/// A peripheral-only application.
struct NonScanningApp: LEApplication {
    static var scans: Bool { false }
    static var connectsAsCentral: Bool { false }
}

@Suite struct PeripheralOnlyApplicationTests {
    @Test func theRolesDefaultToEverything() {
        #expect(MandatoryServerApp.scans && MandatoryServerApp.connectsAsCentral)
        #expect(!NonScanningApp.scans && !NonScanningApp.connectsAsCentral)
    }

    /// Nothing would time out or report a connection attempt the application said it never makes:
    /// the stack stops at once rather than leave it open forever.
    @Test func aConnectFromAnApplicationThatNeverConnectsStopsTheStack() async throws {
        await #expect(processExitsWith: .failure) {
            var stack = LEStack<NonScanningApp, 1, 24, 128>(
                app: NonScanningApp(), database: try! GATTDatabase<24, 128, 1>(deviceName: Array("x".utf8).span, features: .mandatory))
            _ = stack.control.connect(to: DeviceAddress(type: .randomDevice, address: BDAddress(bytes: [1, 2, 3, 4, 5, 0xC6])), now: 0)
            _ = stack.nextDeadline
        }
        // Without a connect, the same stack has no timer at all.
        var stack = LEStack<NonScanningApp, 1, 24, 128>(
            app: NonScanningApp(), database: try GATTDatabase<24, 128, 1>(deviceName: Array("x".utf8).span, features: .mandatory))
        #expect(stack.nextDeadline == nil)
    }
}

/// `BringUpStep.next` scans one table (`isWanted`); these are the successor rules it replaced, checked
/// against it along the sequence they send, for every combination of what they branch on.
@Suite struct BringUpSequenceTests {
    private static func successor(of step: BringUpStep, _ info: ControllerInfo, _ configuration: HostConfiguration) -> BringUpStep? {
        let commands = info.supportedCommands
        func address() -> BringUpStep? { info.addressSource == .publicAddress ? nil : .leSetRandomAddress }
        func vendor() -> BringUpStep? { info.speaksZephyrVendorCommands ? .zephyrReadVersionInformation : address() }
        func afterDataLength() -> BringUpStep? {
            info.leFeatures?.le2MPHY == true && commands?.supports(octet: 35, bit: 5) == true && configuration.prefers2MPHY
                ? .leSetDefaultPHY : vendor()
        }
        switch step {
        case .reset: return .readLocalVersion
        case .readLocalVersion: return .readLocalSupportedCommands
        case .readLocalSupportedCommands: return .readLocalSupportedFeatures
        case .readLocalSupportedFeatures: return .setEventMask
        case .setEventMask: return .leSetEventMask
        case .leSetEventMask: return commands?.supports(octet: 41, bit: 5) == true ? .leReadBufferSizeV2 : .leReadBufferSize
        case .leReadBufferSizeV2, .leReadBufferSize: return info.aclDataPacketLength == 0 ? .readBufferSize : .leReadLocalSupportedFeatures
        case .readBufferSize: return .leReadLocalSupportedFeatures
        case .leReadLocalSupportedFeatures:
            if info.supports(octet: 15, bit: 1) { return .readBDADDR }
            return successor(of: .readBDADDR, info, configuration)
        case .readBDADDR:
            return commands?.supports(octet: 35, bit: 3) == true ? .leReadMaximumDataLength : afterDataLength()
        case .leReadMaximumDataLength:
            if commands?.supports(octet: 34, bit: 0) == true, configuration.suggestedDataLength != nil {
                return .leWriteSuggestedDefaultDataLength
            }
            return afterDataLength()
        case .leWriteSuggestedDefaultDataLength: return afterDataLength()
        case .leSetDefaultPHY: return vendor()
        case .zephyrReadVersionInformation: return .zephyrReadSupportedCommands
        case .zephyrReadSupportedCommands: return info.listsZephyrReadStaticAddresses ? .zephyrReadStaticAddresses : address()
        case .zephyrReadStaticAddresses: return address()
        case .leSetRandomAddress: return nil
        }
    }

    @Test func theTableFollowsTheSuccessorRules() {
        var checked = 0
        // Bits the rules read: 41.5, 15.1, 35.3, 34.0, 35.5; or no bitmap at all.
        for bits in -1..<32 {
            for pool: UInt16 in [0, 27] {
                for manufacturer: UInt16? in [nil, 0x0059, 0x000F] {
                    for zephyr in 0..<3 {
                        for source in [AddressSource.publicAddress, .zephyrStatic, .generatedStatic] {
                            for suggested in [false, true] {
                                var info = ControllerInfo()
                                if bits >= 0 {
                                    var octets = InlineArray<64, UInt8>(repeating: 0)
                                    if bits & 1 != 0 { octets[41] |= 0x20 }
                                    if bits & 2 != 0 { octets[15] |= 0x02 }
                                    if bits & 4 != 0 { octets[35] |= 0x08 }
                                    if bits & 8 != 0 { octets[34] |= 0x01 }
                                    if bits & 16 != 0 { octets[35] |= 0x20 }
                                    info.supportedCommands = HCISupportedCommands(octets: octets)
                                }
                                info.aclDataPacketLength = pool
                                if let manufacturer {
                                    info.localVersion = HCILocalVersionInformation(hciVersion: 13, hciRevision: 0, lmpVersion: 13,
                                                                                   manufacturer: manufacturer, lmpSubversion: 0)
                                }
                                // 0: no vendor bitmap, 1: one without Read Static Addresses, 2: with it.
                                info.listsZephyrReadStaticAddresses = zephyr == 2
                                info.addressSource = source
                                // The 2M feature with the suggested data length's flag: both are read once, late.
                                info.leFeatures = LEFeatures(rawValue: suggested == (bits & 1 == 0) ? 0x100 : 0x20)
                                var configuration = HostConfiguration(randomAddressSeed: [1, 2, 3, 4, 5, 6])
                                if !suggested { configuration.suggestedDataLength = nil }
                                // Along the sequence the rules send (the states bring-up can be in).
                                var step: BringUpStep? = .reset
                                while let current = step {
                                    let expected = Self.successor(of: current, info, configuration)
                                    #expect(current.next(info, configuration) == expected,
                                            "after \(current), bits \(bits), pool \(pool), manufacturer \(String(describing: manufacturer)), zephyr \(zephyr), \(source), suggested \(suggested)")
                                    checked += 1
                                    step = expected
                                }
                            }
                        }
                    }
                }
            }
        }
        // Every combination, at least Reset to LE Read Local Supported Features (eight steps) each.
        #expect(checked >= 33 * 2 * 3 * 3 * 3 * 2 * 8)
    }
}
