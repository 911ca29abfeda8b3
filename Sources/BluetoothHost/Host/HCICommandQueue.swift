/// Encoded HCI commands waiting their turn, first in first out, packed back to back in `capacity`
/// octets.
///
/// Why packed rather than one fixed slot per command: command parameters run from 0 octets (Reset,
/// Read BD_ADDR) to 32 (LE Set Advertising Data, LE Encrypt), and a slot sized for the largest wastes
/// most of itself on the typical 1–15. Packed, the same RAM holds three to five times as many
/// commands, which matters on a microcontroller where the stack value is most of the RAM.
///
/// Record layout: `[packet length][tag lo][tag hi][timeout lo][timeout hi]` then the H4 command
/// packet itself (indicator 0x01, opcode, parameter length, parameters: Core 5.4 Vol 4 Part A 2 and
/// Part E 5.4.1). A timeout of 0 means "the flow's default"; larger ones are milliseconds, at most
/// 65,535.
public struct HCICommandQueue<let capacity: Int>: HCICommandQueueing {
    static var recordHeader: Int { 5 }
    /// The largest parameter block a queued command may have: LE Set Advertising Data and LE Encrypt
    /// have 32; 64 leaves room for every command in the HCI folder.
    public static var maximumParameters: Int { 64 }

    var storage: InlineArray<capacity, UInt8>
    /// Octets in use; records start at 0 and are contiguous.
    public private(set) var usedOctets = 0
    /// Commands queued.
    public private(set) var count = 0

    public init() { storage = InlineArray(repeating: 0) }

    public static var totalOctets: Int { capacity }
    public var isEmpty: Bool { count == 0 }
    // Offsets and lengths within the queue (below `capacity`, records' lengths one octet): sums and
    // differences of them cannot overflow, unchecked here; the indices stay checked.
    public var freeOctets: Int { capacity &- usedOctets }

    /// Queues `command`, or returns false (queuing nothing) when it does not fit.
    ///
    /// Encoded where it is called (one pass of the command's encoder), then queued by one
    /// non-generic `append(packet:)`: a generic append written out per command type cost a firmware
    /// image the queue's bookkeeping again for every type it sends.
    @inline(__always)
    @discardableResult
    public mutating func append<C: HCICommand>(_ command: C, tag: CommandTag, timeout: UInt64 = 0) -> Bool {
        append(packet: HCICommandPacket(command), tag: tag, timeout: timeout)
    }

    /// Queues an encoded command, or returns false (queuing nothing) when its parameters exceed
    /// `maximumParameters` or it does not fit.
    @inline(never)
    @discardableResult
    public mutating func append(packet: borrowing HCICommandPacket, tag: CommandTag, timeout: UInt64 = 0) -> Bool {
        guard !packet.bytes.overflowed, Self.recordHeader + packet.bytes.count <= freeOctets else { return false }
        writeRecord(tag: tag, timeout: timeout, packet: packet.bytes.span)
        return true
    }

    /// Queues a command that has no parameters, by its opcode alone. Bring-up sends a dozen such
    /// reads that differ only in opcode: through here they share one path instead of each being an
    /// encoder of its own in a firmware image.
    @discardableResult
    public mutating func append(parameterless opcode: HCIOpcode, tag: CommandTag, timeout: UInt64 = 0) -> Bool {
        guard Self.recordHeader + 4 <= freeOctets else { return false }
        let packet: InlineArray<4, UInt8> = [H4PacketType.command.rawValue, UInt8(truncatingIfNeeded: opcode.rawValue),
                                             UInt8(truncatingIfNeeded: opcode.rawValue &>> 8), 0]
        writeRecord(tag: tag, timeout: timeout, packet: packet.span)
        return true
    }

    /// Moves the first command to the end of `other` with the timeout `timeout` when it had none
    /// of its own. False (nothing moved) when this queue is empty or `other` has no room for it.
    @discardableResult
    public mutating func moveFirst<let n: Int>(to other: inout HCICommandQueue<n>, defaultTimeout: UInt64) -> Bool {
        guard let first = firstInPlace() else { return false }
        let length = Int(storage[0])
        guard Self.recordHeader + length <= other.freeOctets else { return false }
        let timeout = first.timeout == 0 ? defaultTimeout : first.timeout
        other.writeRecord(tag: first.tag, timeout: timeout,
                          packet: storage.span.extracting(Self.recordHeader..<(Self.recordHeader + length)))
        removeFirst()
        return true
    }

    /// Opcode, tag and timeout (0 = default) of the first command.
    public var first: (opcode: HCIOpcode, tag: CommandTag, timeout: UInt64)? {
        isEmpty ? nil : header(at: 0)
    }

    /// Calls `body` with the first command's H4 packet.
    public func withFirstPacket<R>(_ body: (Span<UInt8>) -> R) -> R? {
        guard !isEmpty else { return nil }
        let length = Int(storage[0])
        return body(storage.span.extracting(Self.recordHeader..<(Self.recordHeader + length)))
    }

    /// `first`, read in place. `HCICommandFlow.pump` holds the queue `inout`, and the getter made
    /// Swift copy the whole queue (its `capacity` octets) into pump's frame on each call, twice a
    /// pump; this reads the header where it lies.
    public mutating func firstInPlace() -> (opcode: HCIOpcode, tag: CommandTag, timeout: UInt64)? {
        guard count > 0 else { return nil }
        let tag = UInt16(storage[1]) | UInt16(storage[2]) &<< 8
        let timeout = UInt16(storage[3]) | UInt16(storage[4]) &<< 8
        let opcode = UInt16(storage[6]) | UInt16(storage[7]) &<< 8
        return (HCIOpcode(rawValue: opcode), CommandTag(rawValue: tag), UInt64(widening: timeout))
    }

    /// Writes the first command's H4 packet to `output`, from where it lies (see `firstInPlace`).
    mutating func sendFirst<O: H4Output>(to output: inout O) {
        guard count > 0 else { return }
        let length = Int(storage[0])
        output.send(h4: storage.span.extracting(Self.recordHeader..<(Self.recordHeader &+ length)))
    }

    /// Drops the first command.
    public mutating func removeFirst() {
        guard !isEmpty else { return }
        let recordLength = Self.recordHeader &+ Int(storage[0])
        let remaining = usedOctets &- recordLength
        // Element by element: see ACLOutboundQueue.remove.
        for i in 0..<remaining { storage[i] = storage[recordLength &+ i] }
        usedOctets = remaining
        count &-= 1
    }

    public mutating func removeAll() {
        usedOctets = 0
        count = 0
    }

    /// The opcode of the command at position `index` (0 = first), for inspection and tests.
    public func opcode(at index: Int) -> HCIOpcode? {
        guard let offset = offset(of: index) else { return nil }
        return header(at: offset).opcode
    }

    /// The H4 packet of the command at position `index`, copied out (for inspection and tests).
    public func packet(at index: Int) -> FixedBytes<68>? {
        guard let offset = offset(of: index) else { return nil }
        var packet = FixedBytes<68>()
        let start = offset + Self.recordHeader
        packet.append(contentsOf: storage.span.extracting(start..<(start + Int(storage[offset]))))
        return packet
    }

    func offset(of index: Int) -> Int? {
        guard index >= 0, index < count else { return nil }
        var offset = 0
        for _ in 0..<index { offset += Self.recordHeader + Int(storage[offset]) }
        return offset
    }

    func header(at offset: Int) -> (opcode: HCIOpcode, tag: CommandTag, timeout: UInt64) {
        let tag = UInt16(storage[offset + 1]) | UInt16(storage[offset + 2]) &<< 8
        let timeout = UInt16(storage[offset + 3]) | UInt16(storage[offset + 4]) &<< 8
        // Packet byte 0 is the indicator; the opcode follows little-endian.
        let opcode = UInt16(storage[offset + 6]) | UInt16(storage[offset + 7]) &<< 8
        return (HCIOpcode(rawValue: opcode), CommandTag(rawValue: tag), UInt64(widening: timeout))
    }

    /// Every caller has checked `freeOctets` for the header and `packet` first, so each index here
    /// is below `capacity` without a check of its own.
    mutating func writeRecord(tag: CommandTag, timeout: UInt64, packet: Span<UInt8>) {
        assert(Self.recordHeader + packet.count <= freeOctets, "HCICommandQueue.writeRecord without room")
        let t = UInt16(truncatingIfNeeded: min(timeout, 0xFFFF))
        var o = usedOctets
        storage[unchecked: o] = UInt8(truncatingIfNeeded: packet.count)
        storage[unchecked: o &+ 1] = UInt8(truncatingIfNeeded: tag.rawValue)
        storage[unchecked: o &+ 2] = UInt8(truncatingIfNeeded: tag.rawValue &>> 8)
        storage[unchecked: o &+ 3] = UInt8(truncatingIfNeeded: t)
        storage[unchecked: o &+ 4] = UInt8(truncatingIfNeeded: t &>> 8)
        o &+= Self.recordHeader
        for i in 0..<packet.count { storage[unchecked: o &+ i] = packet[unchecked: i] }
        usedOctets = o &+ packet.count
        count &+= 1
    }
}

/// A command queue as `StackControlOf` uses it: `HCICommandQueue<n>`, with the capacity an
/// application chooses (`LEApplication.ControlBuffers`).
public protocol HCICommandQueueing {
    init()
    static var totalOctets: Int { get }
    var isEmpty: Bool { get }
    var first: (opcode: HCIOpcode, tag: CommandTag, timeout: UInt64)? { get }
    /// `first` read where it lies, for a queue held `inout` (the getter copies the whole queue there).
    mutating func firstInPlace() -> (opcode: HCIOpcode, tag: CommandTag, timeout: UInt64)?
    mutating func append(packet: borrowing HCICommandPacket, tag: CommandTag, timeout: UInt64) -> Bool
    mutating func moveFirst<let n: Int>(to other: inout HCICommandQueue<n>, defaultTimeout: UInt64) -> Bool
    mutating func removeAll()
}

/// One HCI command encoded as its H4 packet: indicator 0x01, opcode, parameter length, parameters
/// (Core 5.4 Vol 4 Part A 2, Part E 5.4.1), in one pass of the command's encoder (the length octet
/// is filled in afterwards). Parameters past `HCICommandQueue.maximumParameters` overflow it.
public struct HCICommandPacket {
    public private(set) var bytes = FixedBytes<68>()

    @inline(__always)
    public init<C: HCICommand>(_ command: C) {
        appendHeader(C.opcode)
        command.writeParameters(to: &bytes)
        finish()
    }

    /// `opcode`'s header, the length octet still 0 (`finish()` fills it in): out of line, so that
    /// each command type's copy of `StackControlOf.send` holds only the encoding of its parameters
    /// (the header, written out in each, was 30-50 B a copy on the Cortex-M0).
    @inline(never)
    init(opcode: HCIOpcode) { appendHeader(opcode) }

    /// Appends `command`'s parameters after `init(opcode:)`'s header.
    @inline(__always)
    mutating func appendParameters<C: HCICommand>(of command: C) { command.writeParameters(to: &bytes) }

    /// Fills in the length octet once the parameters are written.
    @inline(__always)
    mutating func finish() { bytes.storage[3] = UInt8(truncatingIfNeeded: bytes.count &- 4) }

    /// A command chosen at run time by its opcode (bring-up's steps): `write` appends its
    /// parameters, and the length octet is filled in after, as `init(_:)` does.
    @inline(__always)
    init(opcode: HCIOpcode, parameters write: (inout FixedBytes<68>) -> Void) {
        appendHeader(opcode)
        write(&bytes)
        finish()
    }

    /// Indicator, opcode and a length octet of 0 (`finish()` fills it in), the one writer of the header.
    @inline(__always)
    private mutating func appendHeader(_ opcode: HCIOpcode) {
        bytes.append(H4PacketType.command.rawValue)
        bytes.append(u16: opcode.rawValue)
        bytes.append(0)
    }

    public var opcode: HCIOpcode { HCIOpcode(rawValue: UInt16(bytes.storage[1]) | UInt16(bytes.storage[2]) &<< 8) }
    /// Whether the parameters fit (`HCICommandQueue.maximumParameters`).
    public var fits: Bool { !bytes.overflowed }
}
