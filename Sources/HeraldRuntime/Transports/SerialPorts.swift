import CSerialPort
import Foundation

/// One serial port the OS knows about, with the board it belongs to when its USB ID matches one.
public struct SerialPortInfo: Codable, Equatable, Sendable {
    public enum Kind: String, Codable, Sendable {
        case native, usb, bluetooth, unknown
    }

    public var path: String
    public var kind: Kind
    /// libserialport's human description, e.g. "nRF52840 HCI" or "ttyS0".
    public var portDescription: String?
    public var vid: UInt16?
    public var pid: UInt16?
    public var manufacturer: String?
    public var product: String?
    public var serialNumber: String?
    /// The matching board's `name`, if its application or bootloader USB ID matches.
    public var board: String?
    public var role: BoardProfile.Role?

    public init(path: String, kind: Kind, portDescription: String? = nil, vid: UInt16? = nil, pid: UInt16? = nil,
                manufacturer: String? = nil, product: String? = nil, serialNumber: String? = nil,
                board: String? = nil, role: BoardProfile.Role? = nil) {
        self.path = path
        self.kind = kind
        self.portDescription = portDescription
        self.vid = vid
        self.pid = pid
        self.manufacturer = manufacturer
        self.product = product
        self.serialNumber = serialNumber
        self.board = board
        self.role = role
    }

    /// "VVVV:PPPP" when the port is a USB device.
    public var usbID: USBID? {
        guard let vid, let pid else { return nil }
        return USBID(vid: vid, pid: pid)
    }

    /// One line for error messages: path, USB ID and what it is.
    public var summary: String {
        var parts: [String] = []
        if let usbID { parts.append(usbID.description) }
        if let board, let role { parts.append("\(board) \(role.rawValue)") }
        else if let product { parts.append(product) }
        else if let portDescription, portDescription != (path as NSString).lastPathComponent { parts.append(portDescription) }
        return parts.isEmpty ? path : "\(path) (\(parts.joined(separator: ", ")))"
    }

    /// Fills `board`/`role` from the first board whose USB IDs match this port.
    public mutating func identify(with boards: [BoardProfile]) {
        board = nil
        role = nil
        guard let vid, let pid else { return }
        for candidate in boards {
            if let match = candidate.matches(vid: vid, pid: pid) {
                board = candidate.name
                role = match
                return
            }
        }
    }
}

/// Every serial port libserialport lists, sorted by path, each matched against `boards`. With
/// `boards` nil the default board directory is loaded; a broken board file then just means no
/// matches (`herald ports` loads the boards itself and reports such errors).
public func listSerialPorts(boards: [BoardProfile]? = nil) -> [SerialPortInfo] {
    let profiles = boards ?? ((try? BoardProfile.loadAll(from: BoardProfile.defaultDirectory())) ?? [])
    var list: UnsafeMutablePointer<OpaquePointer?>?
    guard sp_list_ports(&list) == SP_OK, let list else { return [] }
    defer { sp_free_port_list(list) }

    func text(_ pointer: UnsafeMutablePointer<CChar>?) -> String? {
        guard let pointer else { return nil }
        let value = String(cString: pointer).trimmingCharacters(in: .whitespaces)
        return value.isEmpty ? nil : value
    }

    var ports: [SerialPortInfo] = []
    var index = 0
    while let port = list[index] {
        index += 1
        guard let path = text(sp_get_port_name(port)) else { continue }
        var info = SerialPortInfo(path: path, kind: .unknown, portDescription: text(sp_get_port_description(port)))
        switch sp_get_port_transport(port) {
        case SP_TRANSPORT_NATIVE: info.kind = .native
        case SP_TRANSPORT_BLUETOOTH: info.kind = .bluetooth
        case SP_TRANSPORT_USB:
            info.kind = .usb
            var vid: Int32 = 0
            var pid: Int32 = 0
            if sp_get_port_usb_vid_pid(port, &vid, &pid) == SP_OK {
                info.vid = UInt16(truncatingIfNeeded: vid)
                info.pid = UInt16(truncatingIfNeeded: pid)
            }
            info.manufacturer = text(sp_get_port_usb_manufacturer(port))
            info.product = text(sp_get_port_usb_product(port))
            info.serialNumber = text(sp_get_port_usb_serial(port))
        default: break
        }
        info.identify(with: profiles)
        ports.append(info)
    }
    return ports.sorted { $0.path < $1.path }
}

/// With no `--transport`: picks the one attached board running its HCI application firmware (only
/// `board`'s, when given) and returns its spec filled with the board's baud and flow control, plus a
/// description for the log. Otherwise throws an error listing what is attached.
public func autodetectTransport(boards: [BoardProfile], board: BoardProfile?) throws(TransportError) -> (TransportSpec, description: String) {
    try autodetectTransport(ports: listSerialPorts(boards: boards), boards: boards, board: board)
}

/// The decision itself, over a given port list (testable without hardware).
public func autodetectTransport(ports: [SerialPortInfo], boards: [BoardProfile], board: BoardProfile?) throws(TransportError) -> (TransportSpec, description: String) {
    let candidates = board.map { [$0] } ?? boards
    var matches: [(SerialPortInfo, BoardProfile)] = []
    var inBootloader: [String] = []
    for var port in ports {
        port.identify(with: candidates)
        guard let name = port.board, let profile = candidates.first(where: { $0.name == name }) else { continue }
        if port.role == .application {
            matches.append((port, profile))
        } else {
            inBootloader.append("\(port.path) (\(name) in its bootloader: flash the HCI firmware or press reset)")
        }
    }
    switch matches.count {
    case 1:
        let (port, profile) = matches[0]
        let defaults = profile.transportDefaults()
        let spec = TransportSpec(kind: .serial, path: port.path).filling(baud: defaults.baud, flow: defaults.flow)
        var description = "\(profile.title) at \(port.path)"
        if let serial = port.serialNumber { description += " (serial \(serial))" }
        return (spec, description)
    case 0:
        let others = ports.filter { port in !inBootloader.contains { $0.hasPrefix(port.path + " ") } }
        throw .noBoardFound(ports: inBootloader + others.map(\.summary))
    default:
        throw .severalBoards(matches.map { "\($0.0.path) (\($0.1.name))" })
    }
}
