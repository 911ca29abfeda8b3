import Foundation
import Testing
@testable import HeraldRuntime

/// A Nordic Secure DFU bootloader, modelled on the nRF5 SDK request handler and serial transport:
/// SLIP framing, MTU, command (init packet) and data objects with their maximum sizes, PRN notifications
/// sent as CRC responses, CRC-32 per object, init packet validation with extended errors, final SHA-256
/// check, and progress that survives a disconnect (so a second session can resume).
/// Sans-I/O: `receive(_:)` takes bytes from the host and returns bytes for the host.
final class DFUBootloaderSimulator: @unchecked Sendable {
    struct Config {
        /// nRF5 SDK USB CDC transport: 2 * (1024-byte RX buffer + 1) + 1. The UART transport reports 131.
        var mtu = 2051
        var commandMaxSize = 512
        var dataMaxSize = 4096
        var hwVersion: UInt32 = 52
        /// FWID of the SoftDevice present; 0x00 means none (the dongle's open bootloader with an app-only layout).
        var softDeviceFWID: UInt32 = 0x00
        var currentAppVersion: UInt32 = 0
        var appAreaSize = 0xE0000 - 0x1000
        var supportsProtocolVersion = true
    }

    let lock = NSLock()
    var config: Config

    // Fault injection.
    /// Firmware offsets whose byte is flipped as it arrives, each once (line corruption).
    var corruptOnce: Set<Int> = []
    /// Firmware offsets flipped every time they arrive (a persistently bad link).
    var corruptAlways: Set<Int> = []
    /// Once this many firmware bytes have arrived the device vanishes (unplug / reset mid-transfer).
    var vanishAtFirmwareOffset: Int?
    /// Once this many firmware bytes have arrived the device stops reading its port, and stays
    /// (a wedged bootloader: the host's writes fill the port's buffers and time out).
    var stallAtFirmwareOffset: Int?
    private var stalledFlag = false
    /// True once the device stopped reading; read from any thread.
    var stalled: Bool {
        get { lock.lock(); defer { lock.unlock() }; return stalledFlag }
    }

    // State kept across reconnects (the SDK keeps it in the bootloader settings page).
    private(set) var command: [UInt8] = []
    private(set) var commandSize = 0
    private(set) var commandValid = false
    private(set) var initPacket: DFUInitPacket?
    private(set) var firmware: [UInt8] = []
    private(set) var executedOffset = 0
    private var dataObject: (start: Int, size: Int)?
    /// The image the bootloader accepted and would boot.
    private(set) var installedImage: [UInt8]?

    // Per connection.
    private var selected: DFUObjectType?
    private var prn: UInt16 = 0
    private var writesSincePRN = 0
    private var decoder = SLIPDecoder(maxFrame: 4096)
    private var goneFlag = false
    /// True once the device vanished or reset after installing; read from any thread.
    var gone: Bool {
        get { lock.lock(); defer { lock.unlock() }; return goneFlag }
    }

    // Statistics.
    private(set) var firmwareBytesReceived = 0
    private(set) var writeRequests = 0
    private(set) var log: [String] = []

    init(config: Config = Config()) { self.config = config }

    /// The device comes back (re-plugged or reset into the bootloader): progress kept, session reset.
    func reconnect() {
        lock.lock(); defer { lock.unlock() }
        goneFlag = false
        selected = nil
        prn = 0
        writesSincePRN = 0
        decoder = SLIPDecoder(maxFrame: 4096)
    }

    func receive(_ bytes: [UInt8]) -> [UInt8] {
        lock.lock(); defer { lock.unlock() }
        if goneFlag { return [] }
        var out: [UInt8] = []
        for packet in decoder.feed(bytes) {
            if goneFlag { break }
            if packet.count > SLIP.maxPacketSize(forEncodedMTU: config.mtu) {
                log.append("request of \(packet.count) bytes exceeds MTU")
                out += SLIP.encode(respond(packet[0], .insufficientResources))
                continue
            }
            if let reply = handle(packet) { out += SLIP.encode(reply) }
        }
        return out
    }

    private func respond(_ op: UInt8, _ result: DFUResultCode, _ payload: [UInt8] = []) -> [UInt8] {
        [DFUOpcode.response.rawValue, op, result.rawValue] + payload
    }

    private func ext(_ op: UInt8, _ e: DFUExtendedError) -> [UInt8] {
        [DFUOpcode.response.rawValue, op, DFUResultCode.extendedError.rawValue, e.rawValue]
    }

    private func handle(_ p: [UInt8]) -> [UInt8]? {
        let op = p[0]
        guard let opcode = DFUOpcode(rawValue: op), opcode != .response else { return respond(op, .opCodeNotSupported) }
        log.append(opcode.name)
        switch opcode {
        case .protocolVersion:
            return config.supportsProtocolVersion ? respond(op, .success, [1]) : respond(op, .opCodeNotSupported)
        case .ping:
            guard p.count == 2 else { return respond(op, .invalidParameter) }
            return respond(op, .success, [p[1]])
        case .hardwareVersion:
            return respond(op, .success, DFUBytes.u32(0x52840) + DFUBytes.u32(0x4141_4430) + DFUBytes.u32(0x10_0000)
                           + DFUBytes.u32(0x4_0000) + DFUBytes.u32(4096))
        case .firmwareVersion:
            return respond(op, .opCodeNotSupported)
        case .getMTU:
            return respond(op, .success, DFUBytes.u16(UInt16(config.mtu)))
        case .setPRN:
            guard let v = DFUBytes.readU16(p, 1) else { return respond(op, .invalidParameter) }
            prn = v
            writesSincePRN = 0
            return respond(op, .success)
        case .select:
            guard p.count == 2, let type = DFUObjectType(rawValue: p[1]) else { return respond(op, .unsupportedType) }
            selected = type
            switch type {
            case .command:
                return respond(op, .success, DFUBytes.u32(UInt32(config.commandMaxSize)) + DFUBytes.u32(UInt32(command.count)) + DFUBytes.u32(DFUCRC32.checksum(command)))
            case .data:
                return respond(op, .success, DFUBytes.u32(UInt32(config.dataMaxSize)) + DFUBytes.u32(UInt32(firmware.count)) + DFUBytes.u32(DFUCRC32.checksum(firmware)))
            }
        case .create:
            guard p.count == 6, let type = DFUObjectType(rawValue: p[1]), let size32 = DFUBytes.readU32(p, 2) else {
                return respond(op, p.count == 6 ? .unsupportedType : .invalidParameter)
            }
            let size = Int(size32)
            switch type {
            case .command:
                guard size > 0 else { return respond(op, .invalidParameter) }
                guard size <= config.commandMaxSize else { return respond(op, .insufficientResources) }
                // A new init packet discards everything, data progress included.
                command = []; commandSize = size; commandValid = false; initPacket = nil
                firmware = []; executedOffset = 0; dataObject = nil
            case .data:
                guard commandValid, let ip = initPacket else { return respond(op, .operationNotPermitted) }
                guard size > 0, size <= config.dataMaxSize else { return respond(op, .invalidParameter) }
                guard executedOffset + size <= Int(ip.appSize ?? 0) else { return respond(op, .insufficientResources) }
                // Rewind to the last executed object: unexecuted data is dropped.
                firmware.removeSubrange(executedOffset...)
                dataObject = (executedOffset, size)
            }
            selected = type
            writesSincePRN = 0
            return respond(op, .success)
        case .write:
            let data = Array(p.dropFirst())
            writeRequests += 1
            switch selected {
            case .command:
                guard commandSize > 0, command.count + data.count <= commandSize else { return respond(op, .operationNotPermitted) }
                command += data
            case .data:
                guard let obj = dataObject, firmware.count + data.count <= obj.start + obj.size else { return respond(op, .operationNotPermitted) }
                for byte in data {
                    let at = firmware.count
                    var b = byte
                    if corruptOnce.remove(at) != nil || corruptAlways.contains(at) { b ^= 0x5A }
                    firmware.append(b)
                }
                firmwareBytesReceived += data.count
                if let vanish = vanishAtFirmwareOffset, firmware.count >= vanish {
                    vanishAtFirmwareOffset = nil
                    goneFlag = true
                    return nil
                }
                if let stall = stallAtFirmwareOffset, firmware.count >= stall {
                    stallAtFirmwareOffset = nil
                    stalledFlag = true
                }
            case nil:
                return respond(op, .operationNotPermitted)
            }
            writesSincePRN += 1
            // nrf_dfu_serial.c counts Writes since the last Create (or Set PRN).
            if prn > 0 && writesSincePRN >= Int(prn) {
                writesSincePRN = 0
                // The serial transport turns the PRN-th Write's response into a CRC response.
                return crcResponse(DFUOpcode.calculateCRC.rawValue)
            }
            return nil
        case .calculateCRC:
            return crcResponse(op)
        case .execute:
            return execute(op)
        case .abort:
            command = []; commandSize = 0; commandValid = false; initPacket = nil
            firmware = []; executedOffset = 0; dataObject = nil; selected = nil
            return respond(op, .success)
        case .response:
            return nil
        }
    }

    private func crcResponse(_ op: UInt8) -> [UInt8] {
        switch selected {
        case .command: respond(op, .success, DFUBytes.u32(UInt32(command.count)) + DFUBytes.u32(DFUCRC32.checksum(command)))
        case .data: respond(op, .success, DFUBytes.u32(UInt32(firmware.count)) + DFUBytes.u32(DFUCRC32.checksum(firmware)))
        case nil: respond(op, .operationNotPermitted)
        }
    }

    private func execute(_ op: UInt8) -> [UInt8] {
        switch selected {
        case .command:
            guard commandSize > 0, command.count == commandSize else { return respond(op, .operationNotPermitted) }
            if commandValid { return respond(op, .success) } // same init packet again: progress kept
            guard let ip = try? DFUInitPacket(decoding: command) else { return ext(op, .initCommandInvalid) }
            guard ip.type == .application, ip.appSize != nil, ip.hwVersion != nil else { return ext(op, .initCommandInvalid) }
            guard ip.hashType == .sha256, ip.hash.count == 32 else { return ext(op, .wrongHashType) }
            guard ip.hwVersion == config.hwVersion else { return ext(op, .hwVersionFailure) }
            guard ip.sdReq.contains(config.softDeviceFWID) else { return ext(op, .sdVersionFailure) }
            guard let fw = ip.fwVersion else { return ext(op, .initCommandInvalid) }
            guard fw >= config.currentAppVersion else { return ext(op, .fwVersionFailure) }
            guard Int(ip.appSize!) <= config.appAreaSize else { return ext(op, .insufficientSpace) }
            initPacket = ip
            commandValid = true
            return respond(op, .success)
        case .data:
            guard let ip = initPacket else { return respond(op, .operationNotPermitted) }
            if firmware.count == executedOffset { return respond(op, .success) } // nothing pending
            guard let obj = dataObject, firmware.count == obj.start + obj.size else { return respond(op, .operationNotPermitted) }
            executedOffset = firmware.count
            dataObject = nil
            if executedOffset == Int(ip.appSize ?? 0) {
                guard DFUSHA256.hash(firmware) == ip.sha256Digest else { return ext(op, .verificationFailed) }
                installedImage = firmware
                goneFlag = true // activates the image and resets: the port goes away after this answer
            }
            return respond(op, .success)
        case nil:
            return respond(op, .operationNotPermitted)
        }
    }
}

/// Connects a `DFUClient` straight to the simulator, no threads: fast and deterministic.
final class SimulatorLink: DFUByteLink {
    let sim: DFUBootloaderSimulator
    private var inbox: [UInt8] = []
    private(set) var bytesWritten = 0

    init(_ sim: DFUBootloaderSimulator) { self.sim = sim }

    func write(_ bytes: [UInt8]) throws(DFUError) {
        if sim.gone { throw .deviceDisappeared(detail: "simulator gone", firmwareOffset: nil, firmwareSize: nil) }
        bytesWritten += bytes.count
        inbox += sim.receive(bytes)
    }

    func read(timeoutMs: Int) throws(DFUError) -> [UInt8] {
        if !inbox.isEmpty { defer { inbox.removeAll() }; return inbox }
        if sim.gone { throw .deviceDisappeared(detail: "simulator gone", firmwareOffset: nil, firmwareSize: nil) }
        Thread.sleep(forTimeInterval: Double(min(timeoutMs, 5)) / 1000)
        return []
    }
}

/// Serves the simulator on a pseudo-terminal so the real serial path (libserialport) is exercised.
/// Vanishing closes the master side, which the host sees as an I/O error, like a USB unplug.
final class PTYBootloader: @unchecked Sendable {
    let sim: DFUBootloaderSimulator
    let slavePath: String
    private var master: Int32 = -1
    private var slave: Int32 = -1
    private let stopFlag = NSLock()
    private var stopping = false
    private let done = DispatchSemaphore(value: 0)

    init(_ sim: DFUBootloaderSimulator) throws {
        self.sim = sim
        var m: Int32 = -1, s: Int32 = -1
        var name = [CChar](repeating: 0, count: 128)
        guard openpty(&m, &s, &name, nil, nil) == 0 else { throw DFUError.port("openpty failed: errno \(errno)") }
        var t = termios()
        tcgetattr(s, &t)
        cfmakeraw(&t)
        tcsetattr(s, TCSANOW, &t)
        master = m
        slave = s
        slavePath = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let thread = Thread { [self] in self.serve() }
        thread.start()
    }

    private func serve() {
        var buf = [UInt8](repeating: 0, count: 8192)
        while true {
            stopFlag.lock(); let stop = stopping; stopFlag.unlock()
            if stop || sim.gone { break }
            if sim.stalled { Thread.sleep(forTimeInterval: 0.02); continue }
            var pfd = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
            if poll(&pfd, 1, 20) <= 0 { continue }
            let n = Glibc.read(master, &buf, buf.count)
            if n <= 0 { continue }
            let reply = sim.receive(Array(buf[0..<n]))
            var off = 0
            while off < reply.count {
                let w = reply[off...].withUnsafeBytes { Glibc.write(master, $0.baseAddress, $0.count) }
                if w <= 0 { break }
                off += w
            }
        }
        // A real bootloader answers the final Execute, then resets a moment later: let the host read
        // that answer before the port goes (closing the master discards unread input).
        if sim.installedImage != nil { Thread.sleep(forTimeInterval: 0.3) }
        // Closing both ends makes the host's reads fail (EIO), as when a USB device disappears.
        Glibc.close(master)
        Glibc.close(slave)
        done.signal()
    }

    func stop() {
        stopFlag.lock(); stopping = true; stopFlag.unlock()
        done.wait()
    }

    /// Waits until the serving thread ended on its own (the device vanished or reset).
    func waitGone() { done.wait(); done.signal() }
}

@Suite struct DFUSimulatorTests {
    @Test func simulatorRejectsDataBeforeInitPacket() {
        let sim = DFUBootloaderSimulator()
        let out = sim.receive(SLIP.encode(DFURequest.create(.data, size: 4096)))
        var d = SLIPDecoder()
        let packets = d.feed(out)
        #expect(packets == [[0x60, 0x01, DFUResultCode.operationNotPermitted.rawValue]])
    }

    @Test func simulatorSendsCRCResponseAtPRN() throws {
        let sim = DFUBootloaderSimulator()
        var d = SLIPDecoder()
        _ = d.feed(sim.receive(SLIP.encode(DFURequest.setPRN(2))))
        _ = d.feed(sim.receive(SLIP.encode(DFURequest.create(.command, size: 8))))
        #expect(d.feed(sim.receive(SLIP.encode(DFURequest.write([1, 2, 3, 4])))).isEmpty)
        let notif = d.feed(sim.receive(SLIP.encode(DFURequest.write([5, 6, 7, 8]))))
        let r = try DFUResponse(decoding: try #require(notif.first))
        #expect(r.request == DFUOpcode.calculateCRC.rawValue)
        #expect(DFUBytes.readU32(r.payload, 0) == 8)
        #expect(DFUBytes.readU32(r.payload, 4) == DFUCRC32.checksum([1, 2, 3, 4, 5, 6, 7, 8] as [UInt8]))
    }
}
