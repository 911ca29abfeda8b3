/// The Secure DFU init packet (nRF5 SDK `dfu-cc.proto`), hand-encoded protobuf:
///
///     Packet        { Command command = 1; SignedCommand signed_command = 2; }
///     Command       { OpCode op_code = 1 (INIT = 1); InitCommand init = 2; }
///     InitCommand   { uint32 fw_version = 1; uint32 hw_version = 2; repeated uint32 sd_req = 3 [packed];
///                     FwType type = 4; uint32 sd_size = 5; uint32 bl_size = 6; uint32 app_size = 7;
///                     Hash hash = 8; bool is_debug = 9; repeated BootValidation boot_validation = 10; }
///     Hash          { HashType hash_type = 1; bytes hash = 2; }
///     BootValidation{ ValidationType type = 1; bytes bytes = 2; }
///
/// Field order and presence follow what nrfutil 6.1.7 writes for an unsigned application package
/// (sd_size and bl_size present as 0, is_debug present as false), so `--hex` reproduces its `.dat`.
public struct DFUInitPacket: Equatable, Sendable {
    public enum FirmwareType: UInt32, Sendable {
        case application = 0, softdevice = 1, bootloader = 2, softdeviceBootloader = 3, externalApplication = 4
    }
    public enum HashType: UInt32, Sendable { case none = 0, crc = 1, sha128 = 2, sha256 = 3, sha512 = 4 }
    public enum ValidationType: UInt32, Sendable {
        case none = 0, generatedCRC = 1, sha256 = 2, ecdsaP256SHA256 = 3
    }
    public struct BootValidation: Equatable, Sendable {
        public var type: ValidationType
        public var bytes: [UInt8]
        public init(type: ValidationType, bytes: [UInt8] = []) { self.type = type; self.bytes = bytes }
    }

    public var fwVersion: UInt32?
    public var hwVersion: UInt32?
    public var sdReq: [UInt32]
    public var type: FirmwareType?
    public var sdSize: UInt32?
    public var blSize: UInt32?
    public var appSize: UInt32?
    public var hashType: HashType?
    /// As stored in the packet: nrfutil stores the SHA-256 digest byte-reversed (little-endian).
    public var hash: [UInt8]
    public var isDebug: Bool?
    public var bootValidation: [BootValidation]
    /// True when the packet came wrapped in a SignedCommand (we never produce those).
    public var isSigned: Bool = false

    public init(fwVersion: UInt32? = nil, hwVersion: UInt32? = nil, sdReq: [UInt32] = [], type: FirmwareType? = nil,
                sdSize: UInt32? = nil, blSize: UInt32? = nil, appSize: UInt32? = nil, hashType: HashType? = nil,
                hash: [UInt8] = [], isDebug: Bool? = nil, bootValidation: [BootValidation] = []) {
        self.fwVersion = fwVersion
        self.hwVersion = hwVersion
        self.sdReq = sdReq
        self.type = type
        self.sdSize = sdSize
        self.blSize = blSize
        self.appSize = appSize
        self.hashType = hashType
        self.hash = hash
        self.isDebug = isDebug
        self.bootValidation = bootValidation
    }

    /// The unsigned application init packet nrfutil 6.1.7 generates for
    /// `pkg generate --hw-version H --sd-req S --application-version V --application app.hex`
    /// (default `--app-boot-validation VALIDATE_GENERATED_CRC`, whose bytes field is empty).
    public static func application(image: [UInt8], fwVersion: UInt32 = 1, hwVersion: UInt32 = 52,
                                   sdReq: [UInt32] = [0x00]) -> DFUInitPacket {
        DFUInitPacket(fwVersion: fwVersion, hwVersion: hwVersion, sdReq: sdReq, type: .application,
                      sdSize: 0, blSize: 0, appSize: UInt32(image.count), hashType: .sha256,
                      hash: DFUSHA256.hash(image).reversed(), isDebug: false,
                      bootValidation: [BootValidation(type: .generatedCRC)])
    }

    /// The SHA-256 digest in conventional (big-endian) order.
    public var sha256Digest: [UInt8]? { hashType == .sha256 && hash.count == 32 ? hash.reversed() : nil }

    // MARK: - Encoding

    public func encoded() -> [UInt8] {
        var initCmd: [UInt8] = []
        if let fwVersion { Proto.varintField(1, UInt64(fwVersion), into: &initCmd) }
        if let hwVersion { Proto.varintField(2, UInt64(hwVersion), into: &initCmd) }
        if !sdReq.isEmpty {
            var packed: [UInt8] = []
            for v in sdReq { Proto.varint(UInt64(v), into: &packed) }
            Proto.bytesField(3, packed, into: &initCmd)
        }
        if let type { Proto.varintField(4, UInt64(type.rawValue), into: &initCmd) }
        if let sdSize { Proto.varintField(5, UInt64(sdSize), into: &initCmd) }
        if let blSize { Proto.varintField(6, UInt64(blSize), into: &initCmd) }
        if let appSize { Proto.varintField(7, UInt64(appSize), into: &initCmd) }
        // A hash without its type is written too: the encoder writes whatever the decoder read (the
        // fuzzer found a packet whose hash was dropped on re-encoding).
        if hashType != nil || !hash.isEmpty {
            var h: [UInt8] = []
            if let hashType { Proto.varintField(1, UInt64(hashType.rawValue), into: &h) }
            Proto.bytesField(2, hash, into: &h)
            Proto.bytesField(8, h, into: &initCmd)
        }
        if let isDebug { Proto.varintField(9, isDebug ? 1 : 0, into: &initCmd) }
        for bv in bootValidation {
            var b: [UInt8] = []
            Proto.varintField(1, UInt64(bv.type.rawValue), into: &b)
            Proto.bytesField(2, bv.bytes, into: &b)
            Proto.bytesField(10, b, into: &initCmd)
        }
        var command: [UInt8] = []
        Proto.varintField(1, 1, into: &command) // op_code INIT
        Proto.bytesField(2, initCmd, into: &command)
        var packet: [UInt8] = []
        Proto.bytesField(1, command, into: &packet)
        return packet
    }

    // MARK: - Decoding

    public enum Failure: Error, Equatable, CustomStringConvertible, Sendable {
        case malformed(String)
        case notAnInitCommand
        public var description: String {
            switch self {
            case .malformed(let why): "init packet malformed: \(why)"
            case .notAnInitCommand: "init packet holds no INIT command"
            }
        }
    }

    public init(decoding bytes: [UInt8]) throws(Failure) {
        self.init()
        var commandBytes: [UInt8]?
        for field in try Proto.fields(bytes) {
            switch (field.number, field.value) {
            case (1, .bytes(let b)): commandBytes = b
            case (2, .bytes(let signed)):
                isSigned = true
                for f in try Proto.fields(signed) where f.number == 1 {
                    if case .bytes(let b) = f.value { commandBytes = b }
                }
            default: break
            }
        }
        guard let commandBytes else { throw .notAnInitCommand }
        var opCode: UInt64?
        var initBytes: [UInt8]?
        for field in try Proto.fields(commandBytes) {
            switch (field.number, field.value) {
            case (1, .varint(let v)): opCode = v
            case (2, .bytes(let b)): initBytes = b
            default: break
            }
        }
        guard opCode == 1, let initBytes else { throw .notAnInitCommand }
        for field in try Proto.fields(initBytes) {
            switch (field.number, field.value) {
            case (1, .varint(let v)): fwVersion = UInt32(truncatingIfNeeded: v)
            case (2, .varint(let v)): hwVersion = UInt32(truncatingIfNeeded: v)
            case (3, .bytes(let packed)):
                var r = Proto.Reader(packed)
                while !r.atEnd { sdReq.append(UInt32(truncatingIfNeeded: try r.varint())) }
            case (3, .varint(let v)): sdReq.append(UInt32(truncatingIfNeeded: v))
            case (4, .varint(let v)):
                guard let t = FirmwareType(rawValue: UInt32(truncatingIfNeeded: v)) else { throw .malformed("unknown firmware type \(v)") }
                type = t
            case (5, .varint(let v)): sdSize = UInt32(truncatingIfNeeded: v)
            case (6, .varint(let v)): blSize = UInt32(truncatingIfNeeded: v)
            case (7, .varint(let v)): appSize = UInt32(truncatingIfNeeded: v)
            case (8, .bytes(let h)):
                for f in try Proto.fields(h) {
                    switch (f.number, f.value) {
                    case (1, .varint(let v)):
                        guard let t = HashType(rawValue: UInt32(truncatingIfNeeded: v)) else { throw .malformed("unknown hash type \(v)") }
                        hashType = t
                    case (2, .bytes(let d)): hash = d
                    default: break
                    }
                }
            case (9, .varint(let v)): isDebug = v != 0
            case (10, .bytes(let b)):
                var bv = BootValidation(type: .none)
                for f in try Proto.fields(b) {
                    switch (f.number, f.value) {
                    case (1, .varint(let v)):
                        guard let t = ValidationType(rawValue: UInt32(truncatingIfNeeded: v)) else { throw .malformed("unknown boot validation \(v)") }
                        bv.type = t
                    case (2, .bytes(let d)): bv.bytes = d
                    default: break
                    }
                }
                bootValidation.append(bv)
            default:
                break
            }
        }
    }
}

/// Just enough protobuf wire format (varint = 0, length-delimited = 2; fixed32/64 skipped).
enum Proto {
    enum Value: Equatable { case varint(UInt64), bytes([UInt8]), fixed }
    struct Field { var number: UInt64; var value: Value }

    static func varint(_ v: UInt64, into out: inout [UInt8]) {
        var v = v
        while v >= 0x80 { out.append(UInt8(v & 0x7F) | 0x80); v >>= 7 }
        out.append(UInt8(v))
    }
    static func varintField(_ number: UInt64, _ v: UInt64, into out: inout [UInt8]) {
        varint(number << 3 | 0, into: &out)
        varint(v, into: &out)
    }
    static func bytesField(_ number: UInt64, _ b: [UInt8], into out: inout [UInt8]) {
        varint(number << 3 | 2, into: &out)
        varint(UInt64(b.count), into: &out)
        out.append(contentsOf: b)
    }

    struct Reader {
        let bytes: [UInt8]
        var at = 0
        init(_ bytes: [UInt8]) { self.bytes = bytes }
        var atEnd: Bool { at >= bytes.count }
        mutating func varint() throws(DFUInitPacket.Failure) -> UInt64 {
            var result: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                guard at < bytes.count else { throw .malformed("truncated varint") }
                guard shift < 64 else { throw .malformed("varint too long") }
                let b = bytes[at]
                at += 1
                result |= UInt64(b & 0x7F) << shift
                if b & 0x80 == 0 { return result }
                shift += 7
            }
        }
        mutating func take(_ n: Int) throws(DFUInitPacket.Failure) -> [UInt8] {
            guard n >= 0, at + n <= bytes.count else { throw .malformed("field runs past the end") }
            defer { at += n }
            return Array(bytes[at..<(at + n)])
        }
    }

    static func fields(_ bytes: [UInt8]) throws(DFUInitPacket.Failure) -> [Field] {
        var r = Reader(bytes)
        var out: [Field] = []
        while !r.atEnd {
            let key = try r.varint()
            let number = key >> 3
            guard number > 0 else { throw .malformed("field number 0") }
            switch key & 7 {
            case 0: out.append(Field(number: number, value: .varint(try r.varint())))
            case 2:
                let len = try r.varint()
                guard len <= UInt64(bytes.count) else { throw .malformed("length \(len) too large") }
                out.append(Field(number: number, value: .bytes(try r.take(Int(len)))))
            case 1: _ = try r.take(8); out.append(Field(number: number, value: .fixed))
            case 5: _ = try r.take(4); out.append(Field(number: number, value: .fixed))
            default: throw .malformed("wire type \(key & 7)")
            }
        }
        return out
    }
}
