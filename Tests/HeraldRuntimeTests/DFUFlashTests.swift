import Foundation
import Testing
@testable import HeraldRuntime

private func fixturePackage() throws -> DFUPackage { try DFUFlasher.loadPackage(zipPath: DFUFixtures.zipPath) }

private func flash(_ sim: DFUBootloaderSimulator, _ pkg: DFUPackage, prn: UInt16 = 0) throws(DFUError) -> DFUFlashReport {
    try DFUClient(link: SimulatorLink(sim), prn: prn, timeoutMs: 300).flash(pkg)
}

@Suite struct DFUFlashTests {
    @Test func flashesFixturePackageByteForByte() throws {
        let sim = DFUBootloaderSimulator()
        let pkg = try fixturePackage()
        var phases: [DFUProgress.Phase] = []
        var last = 0
        let report = try DFUClient(link: SimulatorLink(sim)).flash(pkg) { p in
            if phases.last != p.phase { phases.append(p.phase) }
            #expect(p.sent >= last || p.phase == .initPacket)
            last = p.sent
        }
        #expect(sim.installedImage == pkg.firmware)
        #expect(report.firmwareBytes == 23456 && report.resumedFrom == 0 && report.retries == 0)
        #expect(report.mtu == 2051 && report.objectSize == 4096 && report.protocolVersion == 1)
        #expect(report.hardware?.part == 0x52840)
        #expect(phases == [.initPacket, .firmware, .done])
        // MTU 2051 carries 1024 data bytes per Write: 4 per 4096-byte object, 23456 bytes → 5×4 + 3 (1472) = 23,
        // plus one Write for the 69-byte init packet.
        #expect(sim.writeRequests == 24)
        #expect(sim.firmwareBytesReceived == 23456)
    }

    @Test func uartMTUAndPRNNotificationsAreHonoured() throws {
        var config = DFUBootloaderSimulator.Config()
        config.mtu = 131 // UART transport: 64 data bytes per Write
        let sim = DFUBootloaderSimulator(config: config)
        let pkg = try fixturePackage()
        let report = try flash(sim, pkg, prn: 4)
        #expect(sim.installedImage == pkg.firmware)
        #expect(report.prn == 4 && report.mtu == 131)
        // ceil(69/64) = 2 writes for the init packet; firmware: 64 writes per 4096-byte object × 5, then ceil(2976/64) = 47.
        #expect(sim.writeRequests == 2 + 5 * 64 + 47)
    }

    @Test func oldBootloaderWithoutProtocolVersionStillFlashes() throws {
        var config = DFUBootloaderSimulator.Config()
        config.supportsProtocolVersion = false
        let sim = DFUBootloaderSimulator(config: config)
        let report = try flash(sim, try fixturePackage())
        #expect(report.protocolVersion == nil)
        #expect(sim.installedImage != nil)
    }

    @Test func wrongHardwareVersionIsNamed() throws {
        var config = DFUBootloaderSimulator.Config()
        config.hwVersion = 53
        let sim = DFUBootloaderSimulator(config: config)
        #expect(throws: DFUError.rejected(request: 0x04, result: 0x0B, extended: DFUExtendedError.hwVersionFailure.rawValue, context: "init packet")) {
            try flash(sim, try fixturePackage())
        }
        let pkg0 = try fixturePackage()
        do throws(DFUError) { _ = try flash(sim, pkg0) } catch {
            #expect(error.description.hasPrefix("init packet rejected: HW version failure — is --hw-version right"))
        }
        #expect(sim.firmwareBytesReceived == 0 && sim.installedImage == nil)
    }

    @Test func softDeviceRequirementMismatchIsNamed() throws {
        var config = DFUBootloaderSimulator.Config()
        config.softDeviceFWID = 0x0100 // a SoftDevice is present; the package asks for none
        let sim = DFUBootloaderSimulator(config: config)
        let pkg0 = try fixturePackage()
        do throws(DFUError) {
            _ = try flash(sim, pkg0)
            Issue.record("flash should fail")
        } catch {
            #expect(error.description == "init packet rejected: SD version failure — is --sd-req 0x00? (an application without SoftDevice needs 0x00) (Execute request)")
        }
        #expect(sim.firmwareBytesReceived == 0)
    }

    @Test func downgradeIsRefusedByName() throws {
        var config = DFUBootloaderSimulator.Config()
        config.currentAppVersion = 5
        let sim = DFUBootloaderSimulator(config: config)
        #expect(throws: DFUError.rejected(request: 0x04, result: 0x0B, extended: DFUExtendedError.fwVersionFailure.rawValue, context: "init packet")) {
            try flash(sim, try fixturePackage())
        }
    }

    @Test func corruptedObjectIsRetriedAndTheImageStillArrivesIntact() throws {
        let sim = DFUBootloaderSimulator()
        sim.corruptOnce = [5000, 17000]
        let pkg = try fixturePackage()
        let report = try flash(sim, pkg, prn: 2)
        #expect(report.retries == 2)
        #expect(sim.installedImage == pkg.firmware)
        // Two 4096-byte objects were sent twice.
        #expect(sim.firmwareBytesReceived > 23456)
    }

    @Test func persistentCorruptionFailsWithCRCMismatch() throws {
        let sim = DFUBootloaderSimulator()
        sim.corruptAlways = [9000]
        let pkg0 = try fixturePackage()
        do throws(DFUError) {
            _ = try flash(sim, pkg0)
            Issue.record("flash should fail")
        } catch {
            guard case let .crcMismatch(object, offset, _, _, deviceOffset) = error else {
                Issue.record("expected crcMismatch, got \(error)"); return
            }
            #expect(object == "firmware" && offset == 12288 && deviceOffset == 12288)
            #expect(error.description.contains("CRC mismatch at offset 12288"))
        }
        // Objects before the bad one were executed; nothing was installed.
        #expect(sim.executedOffset == 8192 && sim.installedImage == nil)
    }

    @Test func deviceDisappearingMidTransferIsReportedThenResumed() throws {
        let sim = DFUBootloaderSimulator()
        sim.vanishAtFirmwareOffset = 10000
        let pkg = try fixturePackage()
        do throws(DFUError) {
            _ = try flash(sim, pkg)
            Issue.record("flash should fail")
        } catch {
            guard case let .deviceDisappeared(_, offset, size) = error else { Issue.record("got \(error)"); return }
            #expect(offset == 8192 && size == 23456)
            #expect(error.description.contains("run the same command again to resume"))
        }
        #expect(sim.firmware.count == 10240) // writes carry 1024 bytes: the one crossing 10000 arrived
        let before = sim.firmwareBytesReceived
        sim.reconnect()
        let report = try flash(sim, pkg)
        #expect(report.resumedFrom == 10240)
        #expect(sim.installedImage == pkg.firmware)
        // Only the rest was sent in the second session.
        #expect(sim.firmwareBytesReceived - before == 23456 - 10240)
    }

    @Test func resumeAtObjectBoundaryExecutesAndContinues() throws {
        let sim = DFUBootloaderSimulator()
        sim.vanishAtFirmwareOffset = 8192 // the device goes after the 2nd object's last Write, before its Execute
        let pkg = try fixturePackage()
        #expect(throws: DFUError.self) { try flash(sim, pkg) }
        #expect(sim.firmware.count == 8192 && sim.executedOffset == 4096)
        sim.reconnect()
        let report = try flash(sim, pkg)
        #expect(report.resumedFrom == 8192)
        #expect(sim.installedImage == pkg.firmware)
    }

    @Test func partialDataOfAnotherImageIsDiscarded() throws {
        let sim = DFUBootloaderSimulator()
        let pkg = try fixturePackage()
        // Another image of the same size and init-packet length, interrupted part way.
        var other = pkg
        other.firmware = other.firmware.map { $0 ^ 0x11 }
        other.initPacket = DFUInitPacket.application(image: other.firmware).encoded()
        sim.vanishAtFirmwareOffset = 6000
        #expect(throws: DFUError.self) { try flash(sim, other) }
        sim.reconnect()
        let report = try flash(sim, pkg)
        #expect(report.resumedFrom == 0)
        #expect(sim.installedImage == pkg.firmware)
    }

    @Test func imageFailingFinalHashCheckIsNamed() throws {
        let sim = DFUBootloaderSimulator()
        var pkg = try fixturePackage()
        // Init packet for a different image of the same size: every object CRC passes, the hash does not.
        pkg.initPacket = DFUInitPacket.application(image: pkg.firmware.reversed()).encoded()
        do throws(DFUError) {
            _ = try flash(sim, pkg)
            Issue.record("flash should fail")
        } catch {
            #expect(error == .rejected(request: 0x04, result: 0x0B, extended: DFUExtendedError.verificationFailed.rawValue,
                                       context: "firmware (final object: image validation)"))
        }
        #expect(sim.installedImage == nil)
    }

    @Test func silentDeviceTimesOutByName() throws {
        final class Mute: DFUByteLink {
            func write(_ bytes: [UInt8]) throws(DFUError) {}
            func read(timeoutMs: Int) throws(DFUError) -> [UInt8] { Thread.sleep(forTimeInterval: Double(timeoutMs) / 1000); return [] }
        }
        #expect(throws: DFUError.timeout(request: DFUOpcode.ping.rawValue, afterMs: 50)) {
            try DFUClient(link: Mute(), timeoutMs: 50).flash(try fixturePackage())
        }
    }

    // MARK: - Through a pseudo-terminal and libserialport

    @Test func flashesThroughAPseudoTerminalAndMeasuresRate() throws {
        let sim = DFUBootloaderSimulator()
        let pty = try PTYBootloader(sim)
        let pkg = try fixturePackage()
        var lines: [String] = []
        let report = try DFUFlasher.run(package: pkg, port: pty.slavePath, prn: 0, terminal: false) { lines.append($0) }
        pty.waitGone()
        #expect(sim.installedImage == pkg.firmware)
        #expect(lines.contains { $0.hasPrefix("done: 23456 bytes") })
        #expect(lines.contains { $0.hasPrefix("100% 23456/23456 bytes") })
        print(String(format: "DFU rate over pty (MTU 2051, PRN 0): %.1f KB/s, %.3f s for 23456 bytes", report.bytesPerSecond / 1024, report.seconds))
        #expect(report.bytesPerSecond > 10_000)
    }

    @Test func pseudoTerminalRateWithALargeImage() throws {
        // 512 KB of pseudo-random data: long enough for the rate to mean something.
        var x: UInt32 = 0x1234_5678
        let image = (0..<(512 * 1024)).map { _ -> UInt8 in x = x &* 1_664_525 &+ 1_013_904_223; return UInt8(truncatingIfNeeded: x >> 24) }
        let pkg = DFUPackage(initPacket: DFUInitPacket.application(image: image).encoded(), firmware: image, source: "synthetic")
        let sim = DFUBootloaderSimulator()
        let pty = try PTYBootloader(sim)
        let report = try DFUFlasher.run(package: pkg, port: pty.slavePath, prn: 0, terminal: false) { _ in }
        pty.waitGone()
        #expect(sim.installedImage == image)
        print(String(format: "DFU rate over pty, 512 KB (MTU 2051, PRN 0): %.1f KB/s, %.2f s", report.bytesPerSecond / 1024, report.seconds))
    }

    @Test func pseudoTerminalRateWithUARTMTUAndPRN() throws {
        var config = DFUBootloaderSimulator.Config()
        config.mtu = 131
        let sim = DFUBootloaderSimulator(config: config)
        let pty = try PTYBootloader(sim)
        let report = try DFUFlasher.run(package: try fixturePackage(), port: pty.slavePath, prn: 8, terminal: false) { _ in }
        pty.waitGone()
        #expect(sim.installedImage != nil)
        print(String(format: "DFU rate over pty (MTU 131, PRN 8): %.1f KB/s, %.3f s", report.bytesPerSecond / 1024, report.seconds))
    }

    @Test func unplugOverPseudoTerminalIsReported() throws {
        let sim = DFUBootloaderSimulator()
        sim.vanishAtFirmwareOffset = 15000
        let pty = try PTYBootloader(sim)
        let pkg0 = try fixturePackage()
        var lines: [String] = []
        defer { #expect(lines.last?.hasPrefix("no new application was activated") == true) }
        do throws(DFUError) {
            _ = try DFUFlasher.run(package: pkg0, port: pty.slavePath, timeoutMs: 2000, terminal: false) { lines.append($0) }
            Issue.record("flash should fail")
        } catch {
            guard case let .deviceDisappeared(_, offset, size) = error else { Issue.record("got \(error)"); return }
            #expect(offset == 12288 && size == 23456)
        }
        pty.waitGone()
    }

    @Test func aBootloaderThatStopsReadingMidTransferIsALinkFailureNotAUsageError() throws {
        // Objects of 256 KB: one object's writes outrun the pseudo-terminal's buffers (about 68 KB)
        // once the device stops reading, so the host's write, not its read, times out.
        var config = DFUBootloaderSimulator.Config()
        config.dataMaxSize = 256 * 1024
        let sim = DFUBootloaderSimulator(config: config)
        sim.stallAtFirmwareOffset = 8192
        var x: UInt32 = 0x0BAD_F00D
        let image = (0..<(300 * 1024)).map { _ -> UInt8 in x = x &* 1_664_525 &+ 1_013_904_223; return UInt8(truncatingIfNeeded: x >> 24) }
        let pkg = DFUPackage(initPacket: DFUInitPacket.application(image: image).encoded(), firmware: image, source: "synthetic")
        let pty = try PTYBootloader(sim)
        defer { pty.stop() }
        var lines: [String] = []
        do throws(DFUError) {
            _ = try DFUFlasher.run(package: pkg, port: pty.slavePath, timeoutMs: 2000, terminal: false) { lines.append($0) }
            Issue.record("flash should fail")
        } catch {
            guard case .writeTimeout(_, let sent) = error else { Issue.record("got \(error)"); return }
            // The ping, the init packet and the first 8 KB of the image went out before the stall.
            #expect(sent > 8192)
            #expect(error.description.contains("timed out"))
            // Status 6 (the procedure failed midway), never 2 ("nothing was started").
            #expect(error.exitStatus == .linkLost)
            #expect(error.isResumable)
        }
        #expect(lines.last?.hasPrefix("no new application was activated") == true)
    }

    @Test func aWriteTimeoutIsNoAnswerWhenNothingWasSentAndALinkFailureOtherwise() {
        #expect(DFUError.writeTimeout(detail: "write to /dev/ttyACM0 timed out", sentBefore: 0).exitStatus == .noAnswer)
        #expect(DFUError.writeTimeout(detail: "write to /dev/ttyACM0 timed out", sentBefore: 1).exitStatus == .linkLost)
        #expect(DFUError.timeout(request: DFUOpcode.ping.rawValue, afterMs: 1000).exitStatus == .noAnswer)
        #expect(DFUError.port("cannot open /dev/ttyACM0: no such file or directory").exitStatus == .usage)
        #expect(DFUError.deviceDisappeared(detail: "read from x failed", firmwareOffset: nil, firmwareSize: nil).exitStatus == .linkLost)
    }

    @Test func missingPortIsAPortError() {
        #expect(throws: DFUError.self) { try DFUSerialLink(path: "/dev/does-not-exist-dfu") }
    }
}

@Suite struct DFUPortFinderTests {
    @Test func picksTheBootloader() throws {
        let ports = [DFUPortInfo(path: "/dev/ttyS0"), DFUPortInfo(path: "/dev/ttyACM3", vid: 0x1915, pid: 0x521F, product: "Open DFU Bootloader")]
        #expect(try DFUPortFinder.choose(from: ports).path == "/dev/ttyACM3")
    }

    @Test func applicationRunningSaysPressReset() {
        let ports = [DFUPortInfo(path: "/dev/ttyACM0", vid: 0x2FE3, pid: 0x0100, product: "Zephyr HCI UART sample")]
        do throws(DFUError) {
            _ = try DFUPortFinder.choose(from: ports)
            Issue.record("should fail")
        } catch {
            #expect(error.description.contains("press the dongle's RESET button"))
            #expect(error.description.contains("red LED pulses"))
            #expect(error.description.contains("/dev/ttyACM0"))
        }
    }

    @Test func noneOrSeveralAreExplained() {
        #expect(throws: DFUError.self) { try DFUPortFinder.choose(from: []) }
        let two = [DFUPortInfo(path: "/dev/ttyACM0", vid: 0x1915, pid: 0x521F), DFUPortInfo(path: "/dev/ttyACM1", vid: 0x1915, pid: 0x521F)]
        do throws(DFUError) { _ = try DFUPortFinder.choose(from: two) } catch {
            #expect(error.description.contains("--port"))
        }
    }
}

@Suite struct DFUProgressPrinterTests {
    @Test func plainOutputPrintsDecilesOnce() {
        var p = DFUProgressPrinter(terminal: false)
        var out: [String] = []
        for sent in stride(from: 0, through: 1000, by: 50) {
            if let l = p.render(DFUProgress(phase: .firmware, sent: sent, total: 1000, resumedFrom: 0, elapsed: 1)) { out.append(l) }
        }
        #expect(out.count == 11)
        #expect(out.first == "0% 0/1000 bytes 0 B/s\n")
        #expect(out.last == "100% 1000/1000 bytes 1000 B/s\n")
    }

    @Test func terminalOutputRedrawsABar() {
        var p = DFUProgressPrinter(terminal: true)
        let line = p.render(DFUProgress(phase: .firmware, sent: 512, total: 1024, resumedFrom: 0, elapsed: 0.5))
        #expect(line == "\r[###############               ] 0.5 KB / 1.0 KB  1.0 KB/s ")
        // Throttled: another draw within 100 ms is skipped.
        #expect(p.render(DFUProgress(phase: .firmware, sent: 600, total: 1024, resumedFrom: 0, elapsed: 0.55)) == nil)
        // The end is always drawn, once.
        #expect(p.render(DFUProgress(phase: .firmware, sent: 1024, total: 1024, resumedFrom: 0, elapsed: 0.56)) != nil)
        #expect(p.render(DFUProgress(phase: .firmware, sent: 1024, total: 1024, resumedFrom: 0, elapsed: 0.57)) == nil)
    }

    @Test func resumeIsAnnounced() {
        var p = DFUProgressPrinter(terminal: false)
        let l = p.render(DFUProgress(phase: .firmware, sent: 4096, total: 8192, resumedFrom: 4096, elapsed: 0.1))
        #expect(l?.hasPrefix("resuming: the device already holds 4096 bytes") == true)
    }
}

@Suite struct DFUPingTests {
    /// A bootloader that rejects Ping (answers with an error result) is still a bootloader.
    @Test func rejectedPingCountsAsAlive() throws {
        final class RejectingPing: DFUByteLink {
            var inbox: [UInt8] = []
            var pings = 0
            func write(_ bytes: [UInt8]) throws(DFUError) {
                var d = SLIPDecoder()
                for p in d.feed(bytes) where p.first == DFUOpcode.ping.rawValue {
                    pings += 1
                    inbox += SLIP.encode([0x60, 0x09, DFUResultCode.opCodeNotSupported.rawValue])
                }
            }
            func read(timeoutMs: Int) throws(DFUError) -> [UInt8] { defer { inbox = [] }; return inbox }
        }
        // Alive at the first answer: one ping asked, its rejection taken as the bootloader's reply.
        let link = RejectingPing()
        #expect(throws: Never.self) { try DFUClient(link: link, timeoutMs: 50).ping() }
        #expect(link.pings == 1)
    }

    @Test func wrongPingIDIsReported() {
        final class EchoWrongID: DFUByteLink {
            var inbox: [UInt8] = []
            func write(_ bytes: [UInt8]) throws(DFUError) { inbox += SLIP.encode([0x60, 0x09, 0x01, 0xEE]) }
            func read(timeoutMs: Int) throws(DFUError) -> [UInt8] { defer { inbox = [] }; return inbox }
        }
        #expect(throws: DFUError.malformedResponse("ping answered with id 238, sent 3", [0xEE])) {
            try DFUClient(link: EchoWrongID(), timeoutMs: 50).ping(attempts: 3)
        }
    }
}

@Suite struct DFUResponseTests {
    @Test func responsesParseAndMalformedOnesAreTypedErrors() throws {
        let r = try DFUResponse(decoding: [0x60, 0x06, 0x01, 0x00, 0x10, 0x00, 0x00])
        #expect(r.request == 0x06 && r.result == 0x01 && r.payload == [0x00, 0x10, 0x00, 0x00])
        #expect(throws: DFUError.self) { try DFUResponse(decoding: [0x60, 0x06]) }
        #expect(throws: DFUError.self) { try DFUResponse(decoding: [0x61, 0x06, 0x01]) }
    }

    @Test func everyResultAndExtendedErrorHasAName() {
        #expect(Set(DFUResultCode.allCases.map(\.name)).count == DFUResultCode.allCases.count)
        #expect(Set(DFUExtendedError.allCases.map(\.name)).count == DFUExtendedError.allCases.count)
        let e = DFUError.rejected(request: 0x01, result: DFUResultCode.insufficientResources.rawValue, extended: nil, context: "")
        #expect(e.description == "Create rejected: insufficient resources")
        let unknown = DFUError.rejected(request: 0x04, result: 0x0B, extended: 0x77, context: "init packet")
        #expect(unknown.description == "init packet rejected: extended error 0x77 (Execute request)")
    }

    @Test func writeErrorsAreReportedEvenWhenNoAnswerWasDue() throws {
        // A Write the bootloader refuses is answered at once; the client reports it by name.
        final class RefuseWrites: DFUByteLink {
            let sim = DFUBootloaderSimulator()
            var inbox: [UInt8] = []
            func write(_ bytes: [UInt8]) throws(DFUError) {
                var d = SLIPDecoder()
                for p in d.feed(bytes) {
                    if p.first == DFUOpcode.write.rawValue {
                        inbox += SLIP.encode([0x60, 0x08, DFUResultCode.operationFailed.rawValue])
                    } else {
                        inbox += sim.receive(SLIP.encode(p))
                    }
                }
            }
            func read(timeoutMs: Int) throws(DFUError) -> [UInt8] { defer { inbox = [] }; return inbox }
        }
        #expect(throws: DFUError.rejected(request: 0x08, result: DFUResultCode.operationFailed.rawValue, extended: nil, context: "")) {
            try DFUClient(link: RefuseWrites(), timeoutMs: 100).flash(try DFUFlasher.loadPackage(zipPath: DFUFixtures.zipPath))
        }
    }
}
