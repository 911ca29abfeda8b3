import BluetoothHost
import Foundation

/// An advertising report copied out of the core's borrowed view, with its AD fields decoded for
/// people and JSON. Built in the runtime only (it allocates).
public struct AdvertisementRecord: Encodable {
    public struct ManufacturerData: Encodable { public var companyId: UInt16; public var data: String }
    public struct ServiceData: Encodable { public var uuid: String; public var data: String }

    public var time: Date
    public var address: String
    public var addressType: String
    public var rssi: Int?
    public var txPower: Int?
    public var connectable: Bool
    public var scanResponse: Bool
    public var flags: UInt8?
    public var serviceUUIDs: [String] = []
    public var manufacturerData: [ManufacturerData] = []
    public var name: String?
    public var advertisedTxPower: Int?
    public var serviceData: [ServiceData] = []
    /// The whole AD payload in hex, so nothing the peer sent is lost.
    public var data: String
    /// Set when the AD structures did not parse (the fields above hold what came before the fault).
    public var malformed: String?

    public init(_ r: borrowing AdvertisingReport, at time: Date = Date()) {
        self.time = time
        address = r.address.address.description
        addressType = r.address.type.name
        rssi = r.rssi.map(Int.init)
        txPower = r.txPower.map(Int.init)
        connectable = r.kind.isConnectable
        scanResponse = r.kind.isScanResponse
        data = hexString(r.data)
        var parser = AdvertisingDataParser(r.data)
        do {
            while let s = try parser.next() { decode(s) }
        } catch {
            malformed = "\(error)"
        }
    }

    private mutating func decode(_ s: borrowing ADStructure) {
        let d = s.data
        switch s.type {
        case 0x01 where d.count >= 1:
            flags = d[0]
        case 0x02, 0x03:
            for i in stride(from: 0, to: d.count - 1, by: 2) {
                serviceUUIDs.append(BluetoothUUID(uuid16: UInt16(d[i]) | UInt16(d[i + 1]) << 8).text)
            }
        case 0x04, 0x05:
            for i in stride(from: 0, to: d.count - 3, by: 4) {
                if let u = try? BluetoothUUID(wire: d.extracting(i..<(i + 4))) { serviceUUIDs.append(u.text) }
            }
        case 0x06, 0x07:
            for i in stride(from: 0, to: d.count - 15, by: 16) {
                if let u = try? BluetoothUUID(wire: d.extracting(i..<(i + 16))) { serviceUUIDs.append(u.text) }
            }
        case 0x08, 0x09:
            var bytes: [UInt8] = []
            for i in d.indices { bytes.append(d[i]) }
            name = String(decoding: bytes, as: UTF8.self)
        case 0x0A where d.count >= 1:
            advertisedTxPower = Int(Int8(bitPattern: d[0]))
        case 0x16 where d.count >= 2, 0x20 where d.count >= 4, 0x21 where d.count >= 16:
            let n = s.type == 0x16 ? 2 : s.type == 0x20 ? 4 : 16
            if let u = try? BluetoothUUID(wire: d.extracting(0..<n)) {
                serviceData.append(ServiceData(uuid: u.text, data: hexString(d.extracting(n..<d.count))))
            }
        case 0xFF where d.count >= 2:
            manufacturerData.append(ManufacturerData(
                companyId: UInt16(d[0]) | UInt16(d[1]) << 8, data: hexString(d.extracting(2..<d.count))))
        default:
            break
        }
    }

    /// One line for people.
    public var line: String {
        var parts = ["\(address) (\(addressType))", "RSSI \(rssi.map(String.init) ?? "n/a")"]
        if scanResponse { parts.append("scan response") } else if connectable { parts.append("connectable") }
        if let name { parts.append("name \"\(name)\"") }
        if let flags { parts.append("flags 0x\(hex(flags))") }
        if !serviceUUIDs.isEmpty { parts.append("services \(serviceUUIDs.joined(separator: ","))") }
        for m in manufacturerData { parts.append("manufacturer 0x\(hex(m.companyId)) \(m.data)") }
        for s in serviceData { parts.append("service data \(s.uuid) \(s.data)") }
        if let t = advertisedTxPower { parts.append("tx power \(t) dBm") }
        if let malformed { parts.append("MALFORMED \(malformed) raw \(data)") }
        return parts.joined(separator: "  ")
    }
}

extension BluetoothUUID {
    /// `fcf6` for a 16-bit UUID, the canonical 36-character form otherwise.
    public var text: String {
        if let u = uuid16 { return hex(u).lowercased() }
        let b = (0..<16).reversed().map { hex(bytes[$0]).lowercased() }
        let s = b.joined()
        let i = s.startIndex
        func at(_ o: Int) -> String.Index { s.index(i, offsetBy: o) }
        return "\(s[i..<at(8)])-\(s[at(8)..<at(12)])-\(s[at(12)..<at(16)])-\(s[at(16)..<at(20)])-\(s[at(20)...])"
    }
}
