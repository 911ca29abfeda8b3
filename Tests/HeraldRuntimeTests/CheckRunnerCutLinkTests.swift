@testable import BluetoothHost
import Foundation
import Testing
@testable import HeraldRuntime

/// `herald check` against a device that ends links mid-discovery (the herald-for-cpp wearable does, at
/// each restart of its scanning and advertising): the check dumps again on a new link once the device
/// advertises again, up to `CheckRunner.dumpLinks` links, and GATT-1 names the links it lost instead
/// of failing the device for a service it had no time to find.
@Suite struct CheckRunnerCutLinkTests {
    static let device = DeviceAddress(type: .randomDevice, address: BDAddress(displayOrder: 0xC0, 0x11, 0x22, 0x33, 0x44, 0x55))
    static let advInd = AdvertisingReportKind(rawValue: 0b001_0011)
    static let advert: [UInt8] = [0x02, 0x01, 0x06, 0x03, 0x03, 0xF6, 0xFC]

    func hear(_ runner: inout CheckRunner, at now: UInt64, _ control: inout StackControl) {
        Self.advert.withUnsafeBufferPointer { b in
            let r = AdvertisingReport(kind: Self.advInd, address: Self.device, rssi: -60, txPower: nil, advertisingSID: nil,
                                      data: Span(_unsafeElements: b))
            runner.stackDidReceive(advertisingReport: r, now: now, control: &control)
        }
    }

    /// The link comes up: the stack ends the attempt (as `LEStack` does) and tells the runner.
    func connect(_ runner: inout CheckRunner, _ handle: UInt16, at now: UInt64, _ control: inout StackControl) {
        #expect(control.connecting?.peer == Self.device)
        control.connecting = nil
        runner.stackDidConnect(link(handle), now: now, control: &control)
    }

    func link(_ handle: UInt16) -> ConnectionSummary {
        ConnectionSummary(handle: handle, role: .central, peer: Self.device,
                          timing: ConnectionTiming(interval: 24, latency: 0, supervisionTimeout: 400))
    }

    /// Observed for 1 s from the first advert, then connecting for the first dump.
    func dumping() -> (CheckRunner, StackControl) {
        var runner = CheckRunner(address: Self.device, observeSeconds: 1, active: false, start: 0)
        var control = StackControl()
        control.credits.configure(leDataLength: 27, leTotalPackets: 4)
        runner.stackDidBecomeReady(ControllerInfo(), now: 0, control: &control)
        hear(&runner, at: 100, &control)
        runner.stackTimerFired(now: 1_100, control: &control)
        #expect(runner.phase == .dumping)
        return (runner, control)
    }

    @Test func aLinkTheDeviceEndsMidDiscoveryIsDumpedAgainOnTheNext() {
        var (runner, control) = dumping()
        connect(&runner, 0x40, at: 1_200, &control)
        // The device ends the link while its services are being discovered.
        runner.stackDidDisconnect(handle: 0x40, reason: .remoteUserTerminated, now: 2_000, control: &control)
        #expect(runner.observations?.cutLinks == [.init(milliseconds: 800, reason: 0x13)])
        #expect(runner.phase == .releasing)
        // Its next connectable advert starts a new dump, not the end of the check.
        hear(&runner, at: 2_050, &control)
        #expect(runner.phase == .dumping)
        connect(&runner, 0x41, at: 2_100, &control)
        #expect(runner.linkHandle == 0x41)
        #expect(runner.dumper?.state == .running)
    }

    @Test func afterTheLastLinkIsCutTheCheckJudgesWhatItHasAndNamesEveryCut() {
        var (runner, control) = dumping()
        var now: UInt64 = 1_200
        for i in 0..<CheckRunner.dumpLinks {
            let handle = UInt16(0x40 + i)
            connect(&runner, handle, at: now, &control)
            runner.stackDidDisconnect(handle: handle, reason: .remoteUserTerminated, now: now + 500, control: &control)
            hear(&runner, at: now + 600, &control)
            now += 1_000
        }
        #expect(runner.isDone)
        let o = try! #require(runner.observations)
        #expect(o.cutLinks.count == CheckRunner.dumpLinks)
        let gatt1 = HeraldCheck.judge(o).first { $0.rule == "GATT-1" }
        #expect(gatt1?.status == .fail)
        #expect(gatt1?.evidence.contains("discovery failed: the link ended (reason 0x13) before the dump finished") == true)
        #expect(gatt1?.evidence.contains("the device ended link 1 after 0.50 s (reason 0x13), link 2 after 0.50 s (reason 0x13), link 3 after 0.50 s (reason 0x13) before the discovery finished") == true)
        // PAY rules skip, saying why: nothing was read.
        #expect(HeraldCheck.judge(o).first { $0.rule == "PAY-1" }?.status == .skip)
    }

    @Test func aDumpThatFinishesOnALaterLinkPassesAndSaysSo() {
        var o = CheckObservations(address: "C0:11:22:33:44:55", addressType: "random", observedSeconds: 1, active: false)
        var d = GATTDump(address: o.address)
        d.services = [GATTDump.Service(uuid: HeraldCheck.serviceTexts[0], start: 0x17, end: 0x1B)]
        o.gatt = d
        o.cutLinks = [.init(milliseconds: 1_234, reason: 0x13)]
        let gatt1 = HeraldCheck.judge(o).first { $0.rule == "GATT-1" }
        #expect(gatt1?.status == .pass)
        #expect(gatt1?.evidence.hasSuffix("; the device ended link 1 after 1.23 s (reason 0x13) before the discovery finished; discovered on link 2") == true)
    }
}
