import ArgumentParser
import Foundation
import HeraldRuntime

/// `herald flash`: Nordic Secure DFU over the nRF52840 Dongle's USB serial bootloader.
struct FlashCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "flash",
        abstract: "Flash an application onto an nRF52840 Dongle through its DFU bootloader (Nordic Secure DFU over USB serial).",
        discussion: """
        Put the dongle in bootloader mode first: press its RESET button (the small sideways one); the red \
        LED pulses. Without --port the bootloader is found by its USB ID 1915:521F.
        --package takes the zip `nrfutil pkg generate` writes; --hex builds the same unsigned package from a \
        Zephyr zephyr.hex (application at 0x1000), e.g. from Tools/build-controller nrf52840dongle.
        An interrupted flash resumes when run again.
        """
    )

    @Option(name: .long, help: "Serial port of the bootloader (default: find USB 1915:521F).")
    var port: String?

    @Option(name: .long, help: "DFU package zip from nrfutil.")
    var package: String?

    @Option(name: .long, help: "Intel HEX application to package on the fly.")
    var hex: String?

    @Option(name: .long, parsing: .unconditional, help: "With --hex: init packet hw_version.")
    var hwVersion: UInt32 = 52

    @Option(name: .long, help: "With --hex: required SoftDevice FWID(s), comma-separated (0x00 = none).")
    var sdReq: String = "0x00"

    @Option(name: .long, parsing: .unconditional, help: "With --hex: application version in the init packet.")
    var applicationVersion: UInt32 = 1

    @Option(name: .long, parsing: .unconditional, help: "Packet receipt notification interval (0 = only check each object's CRC).")
    var prn: UInt16 = 0

    @Option(name: .long, parsing: .unconditional, help: "Response timeout in milliseconds.")
    var timeout: Int = 1000

    func validate() throws {
        if (package == nil) == (hex == nil) { throw ValidationError("give exactly one of --package FILE.zip or --hex FILE.hex") }
        _ = try parseSDReq()
    }

    func parseSDReq() throws -> [UInt32] {
        try sdReq.split(separator: ",").map { item in
            let t = item.trimmingCharacters(in: .whitespaces).lowercased()
            // Digits only: UInt32(_:radix:) alone would also take a sign ("0x+5").
            let digits = t.hasPrefix("0x") ? t.dropFirst(2) : Substring(t)
            let v = digits.allSatisfy(\.isHexDigit) ? UInt32(digits, radix: t.hasPrefix("0x") ? 16 : 10) : nil
            guard let v else { throw ValidationError("--sd-req: '\(item)' is not a number (e.g. 0x00)") }
            return v
        }
    }

    /// A `DFUError` reaches `HeraldCommand.main`, which prints `herald flash: <what>` with its status.
    func run() throws {
        let pkg: DFUPackage
        if let package {
            pkg = try DFUFlasher.loadPackage(zipPath: package)
        } else {
            pkg = try DFUFlasher.loadPackage(hexPath: hex!, fwVersion: applicationVersion, hwVersion: hwVersion, sdReq: try parseSDReq())
        }
        let path = try DFUFlasher.resolvePort(port)
        let terminal = isatty(STDOUT_FILENO) == 1
        _ = try DFUFlasher.run(package: pkg, port: path, prn: prn, timeoutMs: timeout, terminal: terminal) { text in
            FileHandle.standardOutput.write(Data(text.utf8))
        }
    }
}
