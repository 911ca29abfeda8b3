/// A command the host sends to the controller (Core 5.4 Vol 4 Part E 5.4.1, 7.x).
///
/// Each command is a value type named as in the specification; it knows its opcode, writes its own
/// parameters, and names the type that parses its Command Complete return parameters.
public protocol HCICommand {
    associatedtype ReturnParameters: HCIReturnParameters = HCINoReturnParameters
    static var opcode: HCIOpcode { get }
    /// Writes the parameters only (not the opcode or length byte).
    func writeParameters<S: ByteSink>(to sink: inout S)
}

/// What a Command Complete carries after the status byte.
///
/// `init(parsing:)` receives the return parameters *after* the status byte, and is only called when
/// the status is success (a failing controller may truncate them, Core 5.4 Vol 4 Part E 4.5).
public protocol HCIReturnParameters {
    init(parsing parameters: Span<UInt8>) throws(DecodeError)
}

/// For commands whose Command Complete carries only a status (or that complete with Command Status).
public struct HCINoReturnParameters: HCIReturnParameters, Equatable, Sendable {
    public init() {}
    public init(parsing parameters: Span<UInt8>) throws(DecodeError) {}
}

extension HCICommand {
    /// Parameter length as the one-byte HCI header field needs it.
    public var parameterLength: Int {
        var counter = ByteCounter()
        writeParameters(to: &counter)
        return counter.count
    }

    /// The whole H4 packet: indicator 0x01, opcode, length, parameters (Core 5.4 Vol 4 Part A 2).
    public func writePacket<S: ByteSink>(to sink: inout S) {
        sink.append(H4PacketType.command.rawValue)
        sink.append(u16: Self.opcode.rawValue)
        sink.append(UInt8(truncatingIfNeeded: parameterLength))
        writeParameters(to: &sink)
    }
}
