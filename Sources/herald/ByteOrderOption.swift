import ArgumentParser
import Herald

/// `--byte-order spec|apps` on wearable, beacon, sense and scan: how the payload's country, state and
/// location codes are written and read. The seed's Simple payload specification says big-endian; the
/// Herald reference apps write them little-endian (iOS `VenueDiary` reads `30 3a03 0400 40e20100` as
/// country 826, state 4, location 123456), so talking to deployed phones needs `apps`.
enum ByteOrderChoice: String, ExpressibleByArgument, CaseIterable {
    case spec, apps

    var order: PayloadCodeByteOrder { self == .spec ? .bigEndian : .littleEndian }

    static let help = ArgumentHelp(
        "Byte order of the payload's country/state/location codes: spec (big-endian, the Simple payload specification) or apps (little-endian, as the Herald reference apps write them).")
}
