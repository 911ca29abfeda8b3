import Foundation

/// Names for the UUIDs `herald gatt` meets most: Bluetooth SIG assigned numbers (Assigned Numbers
/// document, sections 3.4 GATT Services, 3.7 Descriptors, 3.8 Characteristics) and Herald's own. Keys
/// are `BluetoothUUID.text`: four lower-case hex digits for a 16-bit UUID, the canonical form otherwise.
public enum AssignedNumbers {
    public static func name(_ uuid: String) -> String? { names[uuid.lowercased()] }

    static let names: [String: String] = [
        // Services
        "1800": "Generic Access", "1801": "Generic Attribute", "1802": "Immediate Alert", "1803": "Link Loss",
        "1804": "Tx Power", "1805": "Current Time", "180a": "Device Information", "180d": "Heart Rate",
        "180f": "Battery", "1812": "Human Interface Device", "181c": "User Data", "1827": "Mesh Provisioning",
        "1828": "Mesh Proxy", "fcf6": "Herald (registered 16-bit)", "fe59": "Nordic Secure DFU",
        // Characteristics
        "2a00": "Device Name", "2a01": "Appearance", "2a02": "Peripheral Privacy Flag", "2a03": "Reconnection Address",
        "2a04": "Peripheral Preferred Connection Parameters", "2a05": "Service Changed", "2a06": "Alert Level",
        "2a07": "Tx Power Level", "2a19": "Battery Level", "2a23": "System ID", "2a24": "Model Number String",
        "2a25": "Serial Number String", "2a26": "Firmware Revision String", "2a27": "Hardware Revision String",
        "2a28": "Software Revision String", "2a29": "Manufacturer Name String", "2a2a": "IEEE 11073-20601 Regulatory Certification Data List",
        "2a37": "Heart Rate Measurement", "2a38": "Body Sensor Location", "2a4d": "Report", "2a4b": "Report Map",
        "2a50": "PnP ID", "2aa6": "Central Address Resolution", "2ac9": "Resolvable Private Address Only",
        "2b29": "Client Supported Features", "2b2a": "Database Hash", "2b3a": "Server Supported Features",
        // Descriptors
        "2900": "Characteristic Extended Properties", "2901": "Characteristic User Description",
        "2902": "Client Characteristic Configuration", "2903": "Server Characteristic Configuration",
        "2904": "Characteristic Presentation Format", "2905": "Characteristic Aggregate Format",
        "2906": "Valid Range", "2907": "External Report Reference", "2908": "Report Reference",
        // Herald (Herald protocol specification)
        "428132af-4746-42d3-801e-4572d65bfd9b": "Herald",
        "3e98c0f8-8f05-4829-a121-43e38f8933e7": "Herald payload",
        "f617b813-092e-437a-8324-e09a80821a11": "Herald signal (write)",
        "0eb0d5f2-eae4-4a9a-8af3-a4adb02d4363": "Herald signal (write and notify, iOS)",
    ]

    /// The value as text when it is UTF-8 with nothing unprintable (a trailing NUL allowed, as many
    /// devices send): `"nRF52840"`. Nil for binary values.
    public static func text(hex: String) -> String? {
        guard var bytes = octets(hex: hex) else { return nil }
        while bytes.last == 0 { bytes.removeLast() }
        guard !bytes.isEmpty, let s = String(bytes: bytes, encoding: .utf8) else { return nil }
        guard s.unicodeScalars.allSatisfy({ !CharacterSet.controlCharacters.contains($0) || $0 == "\n" || $0 == "\t" }) else { return nil }
        return s
    }
}
