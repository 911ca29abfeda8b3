import Foundation

/// A byte pipe to a DFU bootloader: the serial port in real use, an in-memory simulator in tests.
public protocol DFUByteLink: AnyObject {
    /// Writes all bytes or throws (`.deviceDisappeared` when the device went away).
    func write(_ bytes: [UInt8]) throws(DFUError)
    /// Whatever arrived within `timeoutMs`; empty on timeout. Throws `.deviceDisappeared` when gone.
    func read(timeoutMs: Int) throws(DFUError) -> [UInt8]
}

/// The host side of Nordic Secure DFU over a serial (SLIP) transport.
///
/// Procedure (nRF5 SDK "DFU protocol" message sequence, and pc-nrfutil's serial transport):
/// ping → Set PRN → Get MTU; init packet: Select command → Create → Write… → CRC → Execute;
/// firmware: Select data, then per object of the device's max size: Create → Write… → CRC → Execute.
/// A transfer interrupted earlier resumes where Select reports an offset whose CRC matches our image.
public final class DFUClient {
    public let link: any DFUByteLink
    public let prn: UInt16
    public let timeoutMs: Int
    /// Create may erase flash and the last Execute hashes the whole image: give them longer.
    public let slowTimeoutMs: Int
    public let maxRetries: Int

    private var decoder = SLIPDecoder()
    private var pending: [[UInt8]] = []
    private var pingID: UInt8 = 0
    private(set) public var mtu: Int = 0
    private var retries = 0

    public init(link: any DFUByteLink, prn: UInt16 = 0, timeoutMs: Int = 1000, slowTimeoutMs: Int = 5000, maxRetries: Int = 3) {
        self.link = link
        self.prn = prn
        self.timeoutMs = timeoutMs
        self.slowTimeoutMs = slowTimeoutMs
        self.maxRetries = maxRetries
    }

    // MARK: - Transactions

    private func send(_ packet: [UInt8]) throws(DFUError) {
        try link.write(SLIP.encode(packet))
    }

    /// Waits for the next response packet; nil on timeout.
    private func nextPacket(timeoutMs: Int) throws(DFUError) -> [UInt8]? {
        let deadline = Date().addingTimeInterval(Double(timeoutMs) / 1000)
        while pending.isEmpty {
            let left = Int(deadline.timeIntervalSinceNow * 1000)
            if left <= 0 { return nil }
            let bytes = try link.read(timeoutMs: max(1, left))
            if !bytes.isEmpty { pending.append(contentsOf: decoder.feed(bytes)) }
        }
        return pending.removeFirst()
    }

    /// Waits for the response to `opcode`; failure results become `.rejected` with `context`.
    private func response(to opcode: DFUOpcode, context: String, timeoutMs: Int? = nil) throws(DFUError) -> [UInt8] {
        let wait = timeoutMs ?? self.timeoutMs
        guard let packet = try nextPacket(timeoutMs: wait) else { throw .timeout(request: opcode.rawValue, afterMs: wait) }
        let r = try DFUResponse(decoding: packet)
        if r.result != DFUResultCode.success.rawValue {
            // A failed Write is reported whenever it happens, so it may arrive in place of our answer.
            throw .rejected(request: r.request, result: r.result, extended: r.payload.first,
                            context: r.request == opcode.rawValue ? context : "")
        }
        guard r.request == opcode.rawValue else { throw .unexpectedResponse(expected: opcode.rawValue, got: r.request) }
        return r.payload
    }

    @discardableResult
    private func transact(_ request: [UInt8], context: String = "", timeoutMs: Int? = nil) throws(DFUError) -> [UInt8] {
        try send(request)
        return try response(to: DFUOpcode(rawValue: request[0])!, context: context, timeoutMs: timeoutMs)
    }

    // MARK: - Simple requests

    /// Pings until the bootloader answers (it may still be enumerating), discarding stale input first.
    public func ping(attempts: Int = 3) throws(DFUError) {
        _ = try? link.read(timeoutMs: 1)
        decoder = SLIPDecoder()
        pending.removeAll()
        var last: DFUError = .timeout(request: DFUOpcode.ping.rawValue, afterMs: timeoutMs)
        for _ in 0..<max(1, attempts) {
            pingID &+= 1
            do throws(DFUError) {
                let payload = try transact(DFURequest.ping(pingID), context: "ping")
                guard payload.first == pingID else {
                    throw DFUError.malformedResponse("ping answered with id \(payload.first.map(String.init) ?? "none"), sent \(pingID)", payload)
                }
                return
            } catch {
                switch error {
                case .deviceDisappeared: throw error
                // Any answer means a bootloader is listening (pc-nrfutil treats it the same way).
                case .rejected(let request, _, _, _) where request == DFUOpcode.ping.rawValue: return
                default: last = error
                }
            }
        }
        throw last
    }

    /// Protocol version, or nil when the bootloader predates the request (SDK < 15: opcode not supported).
    public func protocolVersion() throws(DFUError) -> UInt8? {
        do throws(DFUError) {
            let p = try transact(DFURequest.protocolVersion(), context: "protocol version")
            return p.first
        } catch {
            if case let .rejected(_, result, _, _) = error, result == DFUResultCode.opCodeNotSupported.rawValue { return nil }
            throw error
        }
    }

    public func hardwareVersion() throws(DFUError) -> DFUHardwareVersion? {
        do throws(DFUError) {
            let p = try transact(DFURequest.hardwareVersion(), context: "hardware version")
            guard let part = DFUBytes.readU32(p, 0), let variant = DFUBytes.readU32(p, 4), let rom = DFUBytes.readU32(p, 8),
                  let ram = DFUBytes.readU32(p, 12), let page = DFUBytes.readU32(p, 16)
            else { throw DFUError.malformedResponse("hardware version payload of \(p.count) bytes", p) }
            return DFUHardwareVersion(part: part, variant: variant, romSize: rom, ramSize: ram, romPageSize: page)
        } catch {
            if case let .rejected(_, result, _, _) = error, result == DFUResultCode.opCodeNotSupported.rawValue { return nil }
            throw error
        }
    }

    public func setPRN(_ value: UInt16) throws(DFUError) {
        try transact(DFURequest.setPRN(value), context: "set PRN")
    }

    /// The serial MTU: the largest SLIP-encoded packet the bootloader buffers.
    public func getMTU() throws(DFUError) -> Int {
        let p = try transact(DFURequest.getMTU(), context: "get MTU")
        guard let v = DFUBytes.readU16(p, 0) else { throw .malformedResponse("MTU payload of \(p.count) bytes", p) }
        return Int(v)
    }

    public func select(_ type: DFUObjectType) throws(DFUError) -> DFUObjectStatus {
        let p = try transact(DFURequest.select(type), context: type == .command ? "select command object" : "select data object")
        guard let max = DFUBytes.readU32(p, 0), let off = DFUBytes.readU32(p, 4), let crc = DFUBytes.readU32(p, 8) else {
            throw .malformedResponse("select payload of \(p.count) bytes", p)
        }
        return DFUObjectStatus(maxSize: max, offset: off, crc: crc)
    }

    public func calculateCRC() throws(DFUError) -> (offset: Int, crc: UInt32) {
        let p = try transact(DFURequest.calculateCRC(), context: "calculate CRC")
        return try Self.parseCRC(p)
    }

    private static func parseCRC(_ p: [UInt8]) throws(DFUError) -> (offset: Int, crc: UInt32) {
        guard let off = DFUBytes.readU32(p, 0), let crc = DFUBytes.readU32(p, 4) else {
            throw .malformedResponse("CRC payload of \(p.count) bytes", p)
        }
        return (Int(off), crc)
    }

    /// Tells the bootloader to drop the transfer in progress.
    public func abort() throws(DFUError) {
        try send(DFURequest.abort())
    }

    // MARK: - Streaming

    /// Thrown inside a transfer when the device's offset/CRC disagree with ours; triggers a retry.
    private struct Mismatch: Error { var expected: UInt32; var device: UInt32; var offset: Int; var deviceOffset: Int }

    /// Writes `data` in MTU-sized Write requests, checking PRN notifications and the final CRC.
    /// Returns the running CRC after `data`.
    private func stream(_ data: ArraySlice<UInt8>, offset: Int, crc: UInt32, onChunk: (Int) -> Void) throws -> UInt32 {
        let chunk = SLIP.maxPacketSize(forEncodedMTU: mtu) - 1 // one byte for the Write opcode
        var crc = crc
        var offset = offset
        var sincePRN = 0
        var i = data.startIndex
        while i < data.endIndex {
            let end = min(i + chunk, data.endIndex)
            try send(DFURequest.write(data[i..<end]))
            crc = DFUCRC32.checksum(data[i..<end], crc: crc)
            offset += end - i
            i = end
            onChunk(offset)
            sincePRN += 1
            if prn > 0 && sincePRN == Int(prn) {
                sincePRN = 0
                // Nordic's serial transport answers the PRN-th Write with a CRC response.
                let (devOff, devCRC) = try Self.parseCRC(try response(to: .calculateCRC, context: "packet receipt notification"))
                if devOff != offset || devCRC != crc { throw Mismatch(expected: crc, device: devCRC, offset: offset, deviceOffset: devOff) }
            }
        }
        let (devOff, devCRC) = try calculateCRC()
        if devOff != offset || devCRC != crc { throw Mismatch(expected: crc, device: devCRC, offset: offset, deviceOffset: devOff) }
        return crc
    }

    // MARK: - The flash

    /// Flashes `package`. On failure the error says how far it got and whether running again resumes.
    public func flash(_ package: DFUPackage, progress: (DFUProgress) -> Void = { _ in }) throws(DFUError) -> DFUFlashReport {
        let start = Date()
        let total = package.firmware.count
        var resumedFrom = 0
        var position = 0
        func report(_ phase: DFUProgress.Phase, _ sent: Int) {
            progress(DFUProgress(phase: phase, sent: sent, total: total, resumedFrom: resumedFrom, elapsed: Date().timeIntervalSince(start)))
        }
        retries = 0
        try ping()
        let version = try protocolVersion()
        if let version, version != 1 {
            throw .incompatible("bootloader speaks DFU protocol version \(version); this tool knows version 1")
        }
        let hardware = try hardwareVersion()
        try setPRN(prn)
        mtu = try getMTU()
        guard SLIP.maxPacketSize(forEncodedMTU: mtu) >= 2 else { throw .incompatible("serial MTU \(mtu) leaves no room for data") }

        var objectSize = 0
        do {
            report(.initPacket, 0)
            try sendInitPacket(package.initPacket, forceFresh: false)
            var status = try select(.data)
            objectSize = Int(status.maxSize)
            guard objectSize > 0 else { throw DFUError.incompatible("data object max size is 0") }
            if status.offset > 0 {
                let off = Int(status.offset)
                if off <= total && DFUCRC32.checksum(package.firmware[0..<off]) == status.crc {
                    position = try resume(package.firmware, offset: off, objectSize: objectSize, onChunk: { report(.firmware, $0) })
                    resumedFrom = off
                } else {
                    // The device holds some other image's data: a fresh init packet resets its progress.
                    try sendInitPacket(package.initPacket, forceFresh: true)
                    status = try select(.data)
                    guard status.offset == 0 else {
                        throw DFUError.incompatible("bootloader kept \(status.offset) bytes of another image after a new init packet")
                    }
                }
            }
            report(.firmware, position)
            while position < total {
                let end = min(position + objectSize, total)
                try sendDataObject(package.firmware, from: position, to: end, onChunk: { report(.firmware, $0) })
                position = end
                report(.firmware, position)
            }
        } catch let error as DFUError {
            if case let .deviceDisappeared(detail, _, _) = error {
                throw .deviceDisappeared(detail: detail, firmwareOffset: position, firmwareSize: total)
            }
            throw error
        } catch {
            throw .port("unexpected error: \(error)")
        }
        report(.done, total)
        return DFUFlashReport(firmwareBytes: total, resumedFrom: resumedFrom, seconds: Date().timeIntervalSince(start),
                              mtu: mtu, prn: prn, objectSize: objectSize, retries: retries,
                              protocolVersion: version, hardware: hardware)
    }

    private func sendInitPacket(_ initPacket: [UInt8], forceFresh: Bool) throws {
        let status = try select(.command)
        guard initPacket.count <= Int(status.maxSize) else {
            throw DFUError.incompatible("init packet is \(initPacket.count) bytes, the bootloader takes at most \(status.maxSize)")
        }
        let off = Int(status.offset)
        if !forceFresh && off > 0 && off <= initPacket.count && DFUCRC32.checksum(initPacket[0..<off]) == status.crc {
            // The same init packet (or its beginning) is already there: finish it and execute again,
            // which keeps the data the bootloader already holds for it.
            do {
                if off < initPacket.count {
                    _ = try stream(initPacket[off...], offset: off, crc: status.crc, onChunk: { _ in })
                }
                try transact(DFURequest.execute(), context: "init packet", timeoutMs: slowTimeoutMs)
                return
            } catch is Mismatch {
                retries += 1 // fall through to a fresh transfer
            }
        }
        for attempt in 0...maxRetries {
            try transact(DFURequest.create(.command, size: UInt32(initPacket.count)), context: "create init packet object", timeoutMs: slowTimeoutMs)
            do {
                _ = try stream(initPacket[...], offset: 0, crc: 0, onChunk: { _ in })
            } catch let m as Mismatch {
                retries += 1
                if attempt == maxRetries {
                    throw DFUError.crcMismatch(object: "init packet", offset: m.offset, expected: m.expected, device: m.device, deviceOffset: m.deviceOffset)
                }
                continue
            }
            try transact(DFURequest.execute(), context: "init packet", timeoutMs: slowTimeoutMs)
            return
        }
    }

    /// Finishes a partially written object found on the device; returns the next object boundary.
    private func resume(_ firmware: [UInt8], offset: Int, objectSize: Int, onChunk: (Int) -> Void) throws -> Int {
        let remainder = offset % objectSize
        let objectStart = offset - remainder
        let objectEnd = min(objectStart + objectSize, firmware.count)
        if remainder != 0 && offset < objectEnd {
            do {
                _ = try stream(firmware[offset..<objectEnd], offset: offset, crc: DFUCRC32.checksum(firmware[0..<offset]), onChunk: onChunk)
            } catch is Mismatch {
                retries += 1
                return objectStart // the next Create rewinds the device to this boundary
            }
        }
        // Executing an object the device already executed is harmless; an unexecuted full one completes.
        try transact(DFURequest.execute(), context: "resumed data object", timeoutMs: slowTimeoutMs)
        return remainder == 0 ? offset : objectEnd
    }

    private func sendDataObject(_ firmware: [UInt8], from: Int, to: Int, onChunk: (Int) -> Void) throws {
        let crcBefore = DFUCRC32.checksum(firmware[0..<from])
        for attempt in 0...maxRetries {
            // Create discards any unexecuted data, so a retry starts the object cleanly.
            try transact(DFURequest.create(.data, size: UInt32(to - from)), context: "create data object", timeoutMs: slowTimeoutMs)
            do {
                _ = try stream(firmware[from..<to], offset: from, crc: crcBefore, onChunk: onChunk)
            } catch let m as Mismatch {
                retries += 1
                if attempt == maxRetries {
                    throw DFUError.crcMismatch(object: "firmware", offset: m.offset, expected: m.expected, device: m.device, deviceOffset: m.deviceOffset)
                }
                continue
            }
            try transact(DFURequest.execute(), context: to == firmware.count ? "firmware (final object: image validation)" : "data object",
                         timeoutMs: slowTimeoutMs)
            return
        }
    }
}
