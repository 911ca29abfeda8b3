import Foundation

/// Nordic Secure DFU request/response vocabulary (nRF5 SDK 15+ bootloader, `nrf_dfu_req_handler.h` and
/// `nrf_dfu_handling_error.h`), as spoken over the serial transport (`nrf_dfu_serial.c`): a request is
/// an opcode followed by little-endian parameters; every response is 0x60, the request's opcode, a
/// result code and, on success, the opcode's payload (or, for result 0x0B, one extended-error byte).

/// Request opcodes.
public enum DFUOpcode: UInt8, Sendable, CaseIterable {
    case protocolVersion = 0x00
    case create = 0x01
    case setPRN = 0x02
    case calculateCRC = 0x03
    case execute = 0x04
    case select = 0x06
    case getMTU = 0x07
    case write = 0x08
    case ping = 0x09
    case hardwareVersion = 0x0A
    case firmwareVersion = 0x0B
    case abort = 0x0C
    /// Not a request: the first byte of every response.
    case response = 0x60

    public var name: String {
        switch self {
        case .protocolVersion: "Protocol Version"
        case .create: "Create"
        case .setPRN: "Set PRN"
        case .calculateCRC: "Calculate CRC"
        case .execute: "Execute"
        case .select: "Select"
        case .getMTU: "Get MTU"
        case .write: "Write"
        case .ping: "Ping"
        case .hardwareVersion: "Get HW Version"
        case .firmwareVersion: "Get FW Version"
        case .abort: "Abort"
        case .response: "Response"
        }
    }
}

/// The two DFU object kinds: the init packet goes in a command object, the image in data objects.
public enum DFUObjectType: UInt8, Sendable {
    case command = 0x01
    case data = 0x02
}

/// `nrf_dfu_result_t`.
public enum DFUResultCode: UInt8, Sendable, CaseIterable {
    case invalid = 0x00
    case success = 0x01
    case opCodeNotSupported = 0x02
    case invalidParameter = 0x03
    case insufficientResources = 0x04
    case invalidObject = 0x05
    case unsupportedType = 0x07
    case operationNotPermitted = 0x08
    case operationFailed = 0x0A
    case extendedError = 0x0B

    public var name: String {
        switch self {
        case .invalid: "invalid"
        case .success: "success"
        case .opCodeNotSupported: "opcode not supported"
        case .invalidParameter: "invalid parameter"
        case .insufficientResources: "insufficient resources"
        case .invalidObject: "invalid object"
        case .unsupportedType: "unsupported object type"
        case .operationNotPermitted: "operation not permitted"
        case .operationFailed: "operation failed"
        case .extendedError: "extended error"
        }
    }
}

/// `nrf_dfu_ext_error_code_t`: the reason behind result 0x0B, mostly init-packet validation.
public enum DFUExtendedError: UInt8, Sendable, CaseIterable {
    case noError = 0x00
    case invalidErrorCode = 0x01
    case wrongCommandFormat = 0x02
    case unknownCommand = 0x03
    case initCommandInvalid = 0x04
    case fwVersionFailure = 0x05
    case hwVersionFailure = 0x06
    case sdVersionFailure = 0x07
    case signatureMissing = 0x08
    case wrongHashType = 0x09
    case hashFailed = 0x0A
    case wrongSignatureType = 0x0B
    case verificationFailed = 0x0C
    case insufficientSpace = 0x0D

    public var name: String {
        switch self {
        case .noError: "no error"
        case .invalidErrorCode: "invalid error code"
        case .wrongCommandFormat: "wrong command format"
        case .unknownCommand: "unknown command"
        case .initCommandInvalid: "init command invalid"
        case .fwVersionFailure: "FW version failure"
        case .hwVersionFailure: "HW version failure"
        case .sdVersionFailure: "SD version failure"
        case .signatureMissing: "signature missing"
        case .wrongHashType: "wrong hash type"
        case .hashFailed: "hash failed"
        case .wrongSignatureType: "wrong signature type"
        case .verificationFailed: "verification failed"
        case .insufficientSpace: "insufficient space"
        }
    }

    /// What the user can do about it, for the errors a wrong package typically causes.
    public var hint: String? {
        switch self {
        case .hwVersionFailure: "is --hw-version right for this chip? (52 for nRF52 series)"
        case .sdVersionFailure: "is --sd-req 0x00? (an application without SoftDevice needs 0x00)"
        case .fwVersionFailure: "the bootloader refuses a downgrade; raise --application-version"
        case .signatureMissing, .wrongSignatureType:
            "this bootloader wants a signed package (nrfutil pkg generate --key-file); the dongle's open bootloader does not"
        case .verificationFailed: "the received image does not match the init packet's hash"
        case .insufficientSpace: "the image does not fit the application area"
        case .wrongHashType: "this bootloader expects a SHA-256 hash in the init packet"
        default: nil
        }
    }
}

/// One decoded response packet.
public struct DFUResponse: Equatable, Sendable {
    public var request: UInt8
    public var result: UInt8
    /// Extended error byte when `result` is 0x0B; payload otherwise.
    public var payload: [UInt8]

    public init(request: UInt8, result: UInt8, payload: [UInt8] = []) {
        self.request = request
        self.result = result
        self.payload = payload
    }

    public init(decoding packet: [UInt8]) throws(DFUError) {
        guard packet.count >= 3 else { throw .malformedResponse("response of \(packet.count) bytes", packet) }
        guard packet[0] == DFUOpcode.response.rawValue else {
            throw .malformedResponse(String(format: "first byte 0x%02X is not a response (0x60)", packet[0]), packet)
        }
        request = packet[1]
        result = packet[2]
        payload = Array(packet[3...])
    }

    public var encoded: [UInt8] { [DFUOpcode.response.rawValue, request, result] + payload }
}

/// Little-endian helpers for request/response fields.
enum DFUBytes {
    static func u16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
    static func u32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * UInt32($0))) } }
    static func readU16(_ b: [UInt8], _ at: Int) -> UInt16? {
        guard at >= 0, b.count >= at + 2 else { return nil }
        return UInt16(b[at]) | UInt16(b[at + 1]) << 8
    }
    static func readU32(_ b: [UInt8], _ at: Int) -> UInt32? {
        guard at >= 0, b.count >= at + 4 else { return nil }
        return (0..<4).reduce(UInt32(0)) { $0 | UInt32(b[at + $1]) << (8 * UInt32($1)) }
    }
}

/// Request builders: each returns the unencoded request packet.
public enum DFURequest {
    public static func protocolVersion() -> [UInt8] { [DFUOpcode.protocolVersion.rawValue] }
    public static func create(_ type: DFUObjectType, size: UInt32) -> [UInt8] {
        [DFUOpcode.create.rawValue, type.rawValue] + DFUBytes.u32(size)
    }
    public static func setPRN(_ prn: UInt16) -> [UInt8] { [DFUOpcode.setPRN.rawValue] + DFUBytes.u16(prn) }
    public static func calculateCRC() -> [UInt8] { [DFUOpcode.calculateCRC.rawValue] }
    public static func execute() -> [UInt8] { [DFUOpcode.execute.rawValue] }
    public static func select(_ type: DFUObjectType) -> [UInt8] { [DFUOpcode.select.rawValue, type.rawValue] }
    public static func getMTU() -> [UInt8] { [DFUOpcode.getMTU.rawValue] }
    public static func write<C: Collection>(_ data: C) -> [UInt8] where C.Element == UInt8 {
        [DFUOpcode.write.rawValue] + data
    }
    public static func ping(_ id: UInt8) -> [UInt8] { [DFUOpcode.ping.rawValue, id] }
    public static func hardwareVersion() -> [UInt8] { [DFUOpcode.hardwareVersion.rawValue] }
    public static func firmwareVersion(image: UInt8) -> [UInt8] { [DFUOpcode.firmwareVersion.rawValue, image] }
    public static func abort() -> [UInt8] { [DFUOpcode.abort.rawValue] }
}

/// Select response: the object's maximum size, bytes received so far and their CRC-32.
public struct DFUObjectStatus: Equatable, Sendable {
    public var maxSize: UInt32
    public var offset: UInt32
    public var crc: UInt32
}

/// Get HW Version response (`nrf_dfu_response_hardware_t`).
public struct DFUHardwareVersion: Equatable, Sendable {
    public var part: UInt32
    public var variant: UInt32
    public var romSize: UInt32
    public var ramSize: UInt32
    public var romPageSize: UInt32
}
