import Foundation

/// Everything `herald flash` can fail with, each with a message that names the cause.
public enum DFUError: Error, Equatable, CustomStringConvertible, Sendable {
    /// The bootloader answered a request with a failure result.
    case rejected(request: UInt8, result: UInt8, extended: UInt8?, context: String)
    /// A response we could not parse.
    case malformedResponse(String, [UInt8])
    /// A response to a different request than the one outstanding.
    case unexpectedResponse(expected: UInt8, got: UInt8)
    /// No answer within the timeout.
    case timeout(request: UInt8, afterMs: Int)
    /// The device stopped taking our bytes: a write to its port did not finish in time.
    /// `sentBefore`: bytes it had taken on this port before, this write's included.
    case writeTimeout(detail: String, sentBefore: Int)
    /// The port went away (unplugged, reset, or the bootloader rebooted) mid-transfer.
    case deviceDisappeared(detail: String, firmwareOffset: Int?, firmwareSize: Int?)
    /// CRC-32 or offset reported by the device did not match what we sent, after retries.
    case crcMismatch(object: String, offset: Int, expected: UInt32, device: UInt32, deviceOffset: Int)
    /// The package is unusable (zip, manifest, hex, init packet).
    case badPackage(String)
    /// Serial port trouble (open, configure, write).
    case port(String)
    /// No suitable device found.
    case noDevice(String)
    /// The device does not fit the package (object sizes, MTU, protocol version).
    case incompatible(String)

    public var description: String {
        switch self {
        case let .rejected(request, result, extended, context):
            let op = DFUOpcode(rawValue: request)?.name ?? String(format: "opcode 0x%02X", request)
            let res = DFUResultCode(rawValue: result)?.name ?? String(format: "result 0x%02X", result)
            var text = "\(context.isEmpty ? op : context) rejected: "
            if result == DFUResultCode.extendedError.rawValue, let extended {
                if let ext = DFUExtendedError(rawValue: extended) {
                    text += ext.name
                    if let hint = ext.hint { text += " — \(hint)" }
                } else {
                    text += String(format: "extended error 0x%02X", extended)
                }
            } else {
                text += res
            }
            if context.isEmpty == false { text += " (\(op) request)" }
            return text
        case let .malformedResponse(why, bytes):
            return "malformed response from the bootloader: \(why) [\(bytes.prefix(16).map { String(format: "%02X", $0) }.joined(separator: " "))]"
        case let .unexpectedResponse(expected, got):
            let e = DFUOpcode(rawValue: expected)?.name ?? String(format: "0x%02X", expected)
            let g = DFUOpcode(rawValue: got)?.name ?? String(format: "0x%02X", got)
            return "bootloader answered \(g) while we waited for \(e)"
        case let .timeout(request, ms):
            let op = DFUOpcode(rawValue: request)?.name ?? String(format: "0x%02X", request)
            return "no answer to \(op) within \(ms) ms — is the device in DFU bootloader mode?"
        case let .writeTimeout(detail, sent):
            return sent == 0 ? "\(detail): nothing was taken — is the device in DFU bootloader mode?"
                : "\(detail) after \(sent) bytes sent: the device stopped reading; the bootloader keeps what it has — run the same command again to resume"
        case let .deviceDisappeared(detail, offset, size):
            var text = "device disappeared (\(detail))"
            if let offset, let size {
                text += " after \(offset) of \(size) bytes; the bootloader keeps what it has — run the same command again to resume"
            }
            return text
        case let .crcMismatch(object, offset, expected, device, deviceOffset):
            return String(format: "%@ CRC mismatch at offset %d: expected 0x%08X, device has 0x%08X at offset %d (data corrupted on the link?)",
                          object, offset, expected, device, deviceOffset)
        case let .badPackage(why): return "bad DFU package: \(why)"
        case let .port(why): return "serial port: \(why)"
        case let .noDevice(why): return why
        case let .incompatible(why): return "device incompatible: \(why)"
        }
    }

    /// The exit status of `herald flash` for this error (README "Errors and exit status"): 2 only when
    /// nothing was started; a device that stops taking bytes is 5 when it never took any, 6 midway.
    public var exitStatus: ExitStatus {
        switch self {
        case .badPackage, .port, .noDevice: .usage
        case .timeout: .noAnswer
        case .writeTimeout(_, let sent): sent == 0 ? .noAnswer : .linkLost
        case .deviceDisappeared: .linkLost
        case .rejected, .malformedResponse, .unexpectedResponse, .crcMismatch, .incompatible: .failed
        }
    }

    /// True when the device never answered or took anything: nothing was written.
    public var isFirstContactFailure: Bool {
        switch self {
        case .timeout(let request, _): request == DFUOpcode.ping.rawValue
        case .writeTimeout(_, let sent): sent == 0
        default: false
        }
    }

    /// True when the device may hold a partial image we could resume.
    public var isResumable: Bool {
        switch self {
        case .deviceDisappeared, .timeout, .writeTimeout: true
        default: false
        }
    }
}
