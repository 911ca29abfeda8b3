import Foundation

/// Progress of a flash, reported as data goes out.
public struct DFUProgress: Sendable, Equatable {
    public enum Phase: String, Sendable { case initPacket = "init packet", firmware, done }
    public var phase: Phase
    /// Firmware bytes the device has (including any resumed prefix).
    public var sent: Int
    public var total: Int
    /// Bytes already on the device before this session (resume).
    public var resumedFrom: Int
    public var elapsed: Double
}

/// What a successful flash did, for the summary line and for measurements.
public struct DFUFlashReport: Sendable, Equatable {
    public var firmwareBytes: Int
    public var resumedFrom: Int
    public var seconds: Double
    public var mtu: Int
    public var prn: UInt16
    public var objectSize: Int
    public var retries: Int
    public var protocolVersion: UInt8?
    public var hardware: DFUHardwareVersion?
    /// Effective rate of the bytes this session actually sent.
    public var bytesPerSecond: Double { seconds > 0 ? Double(firmwareBytes - resumedFrom) / seconds : 0 }
}
