import Foundation

/// Everything `herald flash` does between parsing its arguments and exiting: load the package, find
/// the port, run the DFU, render progress. Kept in the runtime so tests drive it against a simulator.
public enum DFUFlasher {
    public static func loadPackage(zipPath: String) throws(DFUError) -> DFUPackage {
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: zipPath)) } catch {
            throw .badPackage(FileProblem(path: zipPath, action: "read", why: CommandMessage.reason(error)).description)
        }
        do { return try DFUPackage(zip: [UInt8](data), source: zipPath) } catch { throw naming(zipPath, error) }
    }

    /// `bad DFU package: app.zip: <the problem>`: the message names the file it is about.
    static func naming(_ path: String, _ error: DFUError) -> DFUError {
        guard case .badPackage(let why) = error else { return error }
        return .badPackage("\(path): \(why)")
    }

    public static func loadPackage(hexPath: String, fwVersion: UInt32, hwVersion: UInt32, sdReq: [UInt32]) throws(DFUError) -> DFUPackage {
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: hexPath)) } catch {
            throw .badPackage(FileProblem(path: hexPath, action: "read", why: CommandMessage.reason(error)).description)
        }
        guard let text = String(data: data, encoding: .utf8) else { throw .badPackage("\(hexPath): not text (Intel HEX expected)") }
        do { return try DFUPackage(hex: text, source: hexPath, fwVersion: fwVersion, hwVersion: hwVersion, sdReq: sdReq) } catch {
            throw naming(hexPath, error)
        }
    }

    /// `explicit` if given, otherwise the single port with the bootloader's USB ID.
    public static func resolvePort(_ explicit: String?) throws(DFUError) -> String {
        if let explicit { return explicit }
        return try DFUPortFinder.choose(from: DFUPortFinder.listPorts()).path
    }

    /// Flashes `package` through the serial port at `port`. `output` receives human-readable lines
    /// (progress rewrites one line with "\r" when `terminal`).
    public static func run(package: DFUPackage, port: String, prn: UInt16 = 0, timeoutMs: Int = 1000,
                           terminal: Bool, output: @escaping (String) -> Void) throws(DFUError) -> DFUFlashReport {
        let link = try DFUSerialLink(path: port)
        defer { link.close() }
        for w in link.warnings { output("note: \(w)\n") }
        let info = package.decodedInitPacket
        output("flashing \(package.source) (\(package.firmware.count) bytes\(info?.fwVersion.map { ", version \($0)" } ?? "")) via \(port)\n")
        let client = DFUClient(link: link, prn: prn, timeoutMs: timeoutMs)
        var printer = DFUProgressPrinter(terminal: terminal)
        do {
            let report = try client.flash(package) { progress in
                if let line = printer.render(progress) { output(line) }
            }
            output(printer.finish(report))
            return report
        } catch {
            if terminal && printer.drewBar { output("\n") }
            // The bootloader only activates an image after the last object passes its hash check, so a
            // failure at any point leaves it in DFU mode with no new application: say so, never imply otherwise.
            if error.isFirstContactFailure {
                // Nothing answered at all: nothing was written, and there may be no bootloader there.
                output("nothing answered on \(port): nothing was written. Is the dongle in its bootloader? Press its RESET button (the red LED pulses), then run the same command again\n")
            } else {
                output("no new application was activated; the device stays in its DFU bootloader — fix the cause and run the same command again (it resumes where the data on the device matches)\n")
            }
            throw error
        }
    }
}

/// Renders progress: a redrawn bar with bytes and rate on a terminal, a plain line per ~10% otherwise.
public struct DFUProgressPrinter {
    public let terminal: Bool
    public private(set) var drewBar = false
    private var lastDraw = -1.0
    private var lastSent = -1
    private var lastDecile = -1
    private var announcedResume = false

    public init(terminal: Bool) { self.terminal = terminal }

    public mutating func render(_ p: DFUProgress) -> String? {
        switch p.phase {
        case .initPacket:
            return terminal ? nil : "sending init packet\n"
        case .done:
            return nil
        case .firmware:
            let fresh = p.sent - p.resumedFrom
            let rate = p.elapsed > 0 ? Double(fresh) / p.elapsed : 0
            if terminal {
                // Redraw at most ten times a second, and always at the end.
                if p.sent == lastSent || (p.sent < p.total && p.elapsed - lastDraw < 0.1) { return nil }
                lastDraw = p.elapsed
                lastSent = p.sent
                drewBar = true
                let width = 30
                let filled = p.total > 0 ? width * p.sent / p.total : width
                let bar = String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled)
                return "\r[\(bar)] \(Self.kb(p.sent)) / \(Self.kb(p.total))  \(Self.kb(Int(rate)))/s "
            }
            var prefix = ""
            if p.resumedFrom > 0 && !announcedResume {
                announcedResume = true
                prefix = "resuming: the device already holds \(p.resumedFrom) bytes of this image\n"
            }
            let decile = p.total > 0 ? 10 * p.sent / p.total : 10
            if decile == lastDecile { return prefix.isEmpty ? nil : prefix }
            lastDecile = decile
            return prefix + "\(decile * 10)% \(p.sent)/\(p.total) bytes \(Int(rate)) B/s\n"
        }
    }

    public func finish(_ r: DFUFlashReport) -> String {
        var text = terminal && drewBar ? "\n" : ""
        text += String(format: "done: %d bytes in %.2f s (%.1f KB/s", r.firmwareBytes - r.resumedFrom, r.seconds, r.bytesPerSecond / 1024)
        if r.resumedFrom > 0 { text += ", resumed at \(r.resumedFrom)" }
        if r.retries > 0 { text += ", \(r.retries) object retr\(r.retries == 1 ? "y" : "ies")" }
        text += "; MTU \(r.mtu), PRN \(r.prn), object \(r.objectSize) bytes). The device resets into the new firmware.\n"
        return text
    }

    static func kb(_ n: Int) -> String { String(format: "%.1f KB", Double(n) / 1024) }
}
