/// The one-byte indicator that precedes each packet on a UART (Core 5.4 Vol 4 Part A 2).
public enum H4PacketType: UInt8, Sendable, Equatable {
    case command = 0x01
    case acl = 0x02
    case sco = 0x03
    case event = 0x04
    case iso = 0x05
}
