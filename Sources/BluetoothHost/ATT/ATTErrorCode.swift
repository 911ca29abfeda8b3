/// ATT error codes carried by the Error Response (Core 5.4 Vol 3 Part F 3.4.1.1, Table 3.4).
///
/// A struct over the raw octet rather than an enum so that application error codes (0x80–0x9F) and the
/// common profile and service error codes (0xE0–0xFF, Core Specification Supplement Part B) received
/// from a peer are representable without a decode failure.
public struct ATTErrorCode: RawRepresentable, Equatable, Hashable, Sendable, Error {
    public var rawValue: UInt8
    @inline(__always) public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// The attribute handle given was not valid on this server.
    public static let invalidHandle = ATTErrorCode(rawValue: 0x01)
    /// The attribute cannot be read.
    public static let readNotPermitted = ATTErrorCode(rawValue: 0x02)
    /// The attribute cannot be written.
    public static let writeNotPermitted = ATTErrorCode(rawValue: 0x03)
    /// The attribute PDU was invalid.
    public static let invalidPDU = ATTErrorCode(rawValue: 0x04)
    /// The attribute requires authentication before it can be read or written.
    public static let insufficientAuthentication = ATTErrorCode(rawValue: 0x05)
    /// The server does not support the request received from the client.
    public static let requestNotSupported = ATTErrorCode(rawValue: 0x06)
    /// Offset specified was past the end of the attribute.
    public static let invalidOffset = ATTErrorCode(rawValue: 0x07)
    /// The attribute requires authorization before it can be read or written.
    public static let insufficientAuthorization = ATTErrorCode(rawValue: 0x08)
    /// Too many prepare writes have been queued.
    public static let prepareQueueFull = ATTErrorCode(rawValue: 0x09)
    /// No attribute found within the given attribute handle range.
    public static let attributeNotFound = ATTErrorCode(rawValue: 0x0A)
    /// The attribute cannot be read using the Read Blob Request.
    public static let attributeNotLong = ATTErrorCode(rawValue: 0x0B)
    /// The Encryption Key Size used for encrypting this link is too short.
    public static let encryptionKeySizeTooShort = ATTErrorCode(rawValue: 0x0C)
    /// The attribute value length is invalid for the operation.
    public static let invalidAttributeValueLength = ATTErrorCode(rawValue: 0x0D)
    /// The request could not be completed due to an unlikely error.
    public static let unlikelyError = ATTErrorCode(rawValue: 0x0E)
    /// The attribute requires encryption before it can be read or written.
    public static let insufficientEncryption = ATTErrorCode(rawValue: 0x0F)
    /// The attribute type is not a supported grouping attribute as defined by a higher layer.
    public static let unsupportedGroupType = ATTErrorCode(rawValue: 0x10)
    /// Insufficient resources to complete the request.
    public static let insufficientResources = ATTErrorCode(rawValue: 0x11)
    /// The server requests the client to rediscover the database.
    public static let databaseOutOfSync = ATTErrorCode(rawValue: 0x12)
    /// The attribute parameter value was not allowed.
    public static let valueNotAllowed = ATTErrorCode(rawValue: 0x13)

    /// 0x80–0x9F: defined by a higher layer (the application).
    public static func application(_ n: UInt8) -> ATTErrorCode { ATTErrorCode(rawValue: 0x80 | (n & 0x1F)) }
    public var isApplicationError: Bool { rawValue >= 0x80 && rawValue <= 0x9F }

    // Common profile and service error codes (Core Specification Supplement Part B 1.2).
    public static let writeRequestRejected = ATTErrorCode(rawValue: 0xFC)
    public static let cccdImproperlyConfigured = ATTErrorCode(rawValue: 0xFD)
    public static let procedureAlreadyInProgress = ATTErrorCode(rawValue: 0xFE)
    public static let outOfRange = ATTErrorCode(rawValue: 0xFF)
    public var isCommonProfileError: Bool { rawValue >= 0xE0 }

    /// 0x00 and 0x14–0x7F, 0xA0–0xDF are reserved for future use.
    public var isReserved: Bool {
        rawValue == 0 || (rawValue >= 0x14 && rawValue <= 0x7F) || (rawValue >= 0xA0 && rawValue <= 0xDF)
    }
}
