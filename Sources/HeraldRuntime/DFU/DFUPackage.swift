import Foundation

/// What gets flashed: an init packet (command object) and a firmware image (data objects).
public struct DFUPackage: Equatable, Sendable {
    public var initPacket: [UInt8]
    public var firmware: [UInt8]
    /// Where it came from, for messages.
    public var source: String

    public init(initPacket: [UInt8], firmware: [UInt8], source: String) {
        self.initPacket = initPacket
        self.firmware = firmware
        self.source = source
    }

    /// The decoded init packet, if it parses.
    public var decodedInitPacket: DFUInitPacket? { try? DFUInitPacket(decoding: initPacket) }

    /// Reads the ZIP `nrfutil pkg generate` writes: `manifest.json` names the `.dat` (init packet) and
    /// `.bin` (image) of each firmware in it. Only application packages are supported — SoftDevice and
    /// bootloader updates need a reset between images, which this tool does not attempt.
    public init(zip bytes: [UInt8], source: String = "package") throws(DFUError) {
        let archive: ZipArchive
        do { archive = try ZipArchive(bytes: bytes) } catch { throw .badPackage(error.description) }
        let manifestBytes: [UInt8]
        do { manifestBytes = try archive.read("manifest.json") } catch { throw .badPackage(error.description) }
        guard let root = try? JSONSerialization.jsonObject(with: Data(manifestBytes)) as? [String: Any],
              let manifest = root["manifest"] as? [String: Any]
        else { throw .badPackage("manifest.json is not the nrfutil format ({\"manifest\": {...}})") }
        let others = manifest.keys.filter { $0 != "application" && $0 != "dfu_version" }.sorted()
        guard let app = manifest["application"] as? [String: Any] else {
            throw .badPackage("no application in manifest.json (found: \(others.joined(separator: ", "))); herald flash handles application packages only")
        }
        if !others.isEmpty {
            throw .badPackage("package also holds \(others.joined(separator: ", ")); herald flash handles application-only packages")
        }
        guard let datName = app["dat_file"] as? String, let binName = app["bin_file"] as? String else {
            throw .badPackage("manifest.json application entry lacks dat_file/bin_file")
        }
        do {
            initPacket = try archive.read(datName)
            firmware = try archive.read(binName)
        } catch {
            throw .badPackage(error.description)
        }
        self.source = source
        try validate()
    }

    /// Builds the same package nrfutil would from an Intel HEX application, unsigned.
    /// `expectedStart` is where the bootloader places the application (0x1000 on the nRF52840 Dongle:
    /// right after the MBR); a hex starting elsewhere was built for another layout and is refused.
    public init(hex text: String, source: String = "hex", fwVersion: UInt32 = 1, hwVersion: UInt32 = 52,
                sdReq: [UInt32] = [0x00], expectedStart: UInt32? = 0x1000) throws(DFUError) {
        let image: IntelHexImage
        do { image = try IntelHexImage(text: text) } catch { throw .badPackage(error.description) }
        if let expectedStart, image.startAddress != expectedStart {
            throw .badPackage(String(format: "the hex starts at 0x%X, but the bootloader places applications at 0x%X — build for the board with its bootloader (e.g. nrf52840dongle), not for bare flash", image.startAddress, expectedStart))
        }
        firmware = image.bytes
        initPacket = DFUInitPacket.application(image: image.bytes, fwVersion: fwVersion, hwVersion: hwVersion, sdReq: sdReq).encoded()
        self.source = source
        try validate()
    }

    /// Cross-checks init packet and image so a broken package fails here, not halfway through a flash.
    public func validate() throws(DFUError) {
        guard !firmware.isEmpty else { throw .badPackage("empty firmware image") }
        let ip: DFUInitPacket
        do { ip = try DFUInitPacket(decoding: initPacket) } catch { throw .badPackage(error.description) }
        if let size = ip.appSize, Int(size) != firmware.count {
            throw .badPackage("init packet says app_size \(size), image is \(firmware.count) bytes")
        }
        if let digest = ip.sha256Digest, digest != DFUSHA256.hash(firmware) {
            throw .badPackage("init packet SHA-256 does not match the image")
        }
    }
}
