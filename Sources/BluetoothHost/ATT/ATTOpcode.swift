/// An Attribute Protocol opcode (Core 5.4 Vol 3 Part F 3.3.1).
///
/// The octet is split into a 6-bit method, the Command flag (bit 6: no response is ever sent) and the
/// Authentication Signature flag (bit 7: 12 octets of signature follow the parameters). Kept as a raw
/// octet so unknown opcodes from a peer stay representable: the server must answer unknown requests
/// and silently drop unknown commands (Part F 3.4.9), which it can only do if it can see the flags.
public struct ATTOpcode: RawRepresentable, Equatable, Hashable, Sendable {
    public var rawValue: UInt8
    @inline(__always) public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Bits 0–5.
    public var method: UInt8 { rawValue & 0x3F }
    /// Bit 6: a command, never answered (Part F 3.3.1).
    public var isCommand: Bool { rawValue & 0x40 != 0 }
    /// Bit 7: the PDU ends with a 12-octet authentication signature (Part F 3.3.1).
    public var hasAuthenticationSignature: Bool { rawValue & 0x80 != 0 }

    public static let errorResponse = ATTOpcode(rawValue: 0x01)
    public static let exchangeMTURequest = ATTOpcode(rawValue: 0x02)
    public static let exchangeMTUResponse = ATTOpcode(rawValue: 0x03)
    public static let findInformationRequest = ATTOpcode(rawValue: 0x04)
    public static let findInformationResponse = ATTOpcode(rawValue: 0x05)
    public static let findByTypeValueRequest = ATTOpcode(rawValue: 0x06)
    public static let findByTypeValueResponse = ATTOpcode(rawValue: 0x07)
    public static let readByTypeRequest = ATTOpcode(rawValue: 0x08)
    public static let readByTypeResponse = ATTOpcode(rawValue: 0x09)
    public static let readRequest = ATTOpcode(rawValue: 0x0A)
    public static let readResponse = ATTOpcode(rawValue: 0x0B)
    public static let readBlobRequest = ATTOpcode(rawValue: 0x0C)
    public static let readBlobResponse = ATTOpcode(rawValue: 0x0D)
    public static let readMultipleRequest = ATTOpcode(rawValue: 0x0E)
    public static let readMultipleResponse = ATTOpcode(rawValue: 0x0F)
    public static let readByGroupTypeRequest = ATTOpcode(rawValue: 0x10)
    public static let readByGroupTypeResponse = ATTOpcode(rawValue: 0x11)
    public static let writeRequest = ATTOpcode(rawValue: 0x12)
    public static let writeResponse = ATTOpcode(rawValue: 0x13)
    public static let prepareWriteRequest = ATTOpcode(rawValue: 0x16)
    public static let prepareWriteResponse = ATTOpcode(rawValue: 0x17)
    public static let executeWriteRequest = ATTOpcode(rawValue: 0x18)
    public static let executeWriteResponse = ATTOpcode(rawValue: 0x19)
    public static let handleValueNotification = ATTOpcode(rawValue: 0x1B)
    public static let handleValueIndication = ATTOpcode(rawValue: 0x1D)
    public static let handleValueConfirmation = ATTOpcode(rawValue: 0x1E)
    public static let readMultipleVariableRequest = ATTOpcode(rawValue: 0x20)
    public static let readMultipleVariableResponse = ATTOpcode(rawValue: 0x21)
    public static let multipleHandleValueNotification = ATTOpcode(rawValue: 0x23)
    public static let writeCommand = ATTOpcode(rawValue: 0x52)
    public static let signedWriteCommand = ATTOpcode(rawValue: 0xD2)

    /// How a PDU with this opcode travels (Part F 3.3 and 3.4.9), which decides who must answer it.
    public enum Kind: Equatable, Sendable {
        case request, response, command, notification, indication, confirmation
    }

    /// The kind of a known opcode; an unknown opcode is a command if bit 6 is set, else a request
    /// (that is how a server must treat it, Part F 3.4.9).
    public var kind: Kind {
        if isCommand { return .command }
        switch self {
        case .errorResponse, .exchangeMTUResponse, .findInformationResponse, .findByTypeValueResponse,
             .readByTypeResponse, .readResponse, .readBlobResponse, .readMultipleResponse,
             .readByGroupTypeResponse, .writeResponse, .prepareWriteResponse, .executeWriteResponse,
             .readMultipleVariableResponse:
            return .response
        case .handleValueNotification, .multipleHandleValueNotification: return .notification
        case .handleValueIndication: return .indication
        case .handleValueConfirmation: return .confirmation
        default: return .request
        }
    }
}

/// ATT_MTU bounds for LE (Core 5.4 Vol 3 Part F 3.2.8, Part G 5.2.1).
public enum ATTMTU {
    /// The MTU every LE bearer starts with until an Exchange MTU (Part G 5.2.1).
    public static let minimum: UInt16 = 23
    /// Our default largest MTU: fills one LE Data Length Extension PDU (251 octets) with L2CAP's 4.
    public static let defaultMaximum: UInt16 = 247
    /// Longest attribute value (Part F 3.2.9).
    public static let maximumAttributeLength = 512
    /// The ATT_MTU an exchange agrees: the smaller Rx MTU, never below 23 (Part F 3.4.2.2).
    static func agreed(_ a: UInt16, _ b: UInt16) -> UInt16 { max(minimum, min(a, b)) }
}
