// Server-side builders for the list responses. Each writes straight into any ByteSink and refuses an
// entry (returning false, writing nothing) once the PDU would exceed ATT_MTU or the entry would break
// the "one format / one length per response" rule, which is exactly where a server must stop
// (Core 5.4 Vol 3 Part F 3.4.3.2, 3.4.4.2, 3.4.4.10). The header is written with the first entry, so a
// builder that accepted nothing has written nothing and the caller can send an Error Response instead.

/// Accounting shared by the builders.
public struct ATTListBudget: Sendable {
    /// ATT_MTU of the bearer.
    public let mtu: Int
    /// Octets written so far, header included.
    public private(set) var length = 0
    /// Entries accepted.
    public private(set) var count = 0
    public var isEmpty: Bool { count == 0 }

    init(mtu: UInt16) { self.mtu = Int(max(mtu, ATTMTU.minimum)) }

    // Lengths stay within one ATT_MTU (at most 517) plus one entry: no overflow is possible.
    func fits(_ n: Int) -> Bool { length &+ n <= mtu }
    mutating func add(_ n: Int) { length &+= n; count &+= 1 }
    mutating func addHeader(_ n: Int) { length &+= n }
}

/// The one list writer behind the four discovery responses (Part F 3.4.3.2, 3.4.3.4, 3.4.4.2,
/// 3.4.4.10), which share a shape: the opcode, for three of them a length (or format) octet, then
/// entries of a handle, for two of them a group end handle, and a value (a UUID for Find
/// Information, none for Find By Type Value) of one length per response. One body serves all four,
/// in the server and behind the public builders: a firmware image links it once.
struct ATTListWriter: Sendable {
    var budget: ATTListBudget
    let opcode: ATTOpcode
    var valueLength = 0

    init(response opcode: ATTOpcode, mtu: UInt16) {
        budget = ATTListBudget(mtu: mtu)
        self.opcode = opcode
    }

    var hasGroupEnd: Bool { opcode == .findByTypeValueResponse || opcode == .readByGroupTypeResponse }
    var hasLengthOctet: Bool { opcode != .findByTypeValueResponse }
    var entryHeader: Int { hasGroupEnd ? 4 : 2 }

    /// Longest value octets one entry may carry: the length octet caps an entry at 255, and the first
    /// entry must fit the MTU after the two header octets (Read By Type: MTU-4, at most 253; Read By
    /// Group Type: MTU-6, at most 251). UUIDs (2 or 16 octets) are never cut.
    var maximumValueLength: Int { min(budget.mtu - 2 - entryHeader, 255 - entryHeader) }

    /// Adds an entry, its value cut to `maximumValueLength`; refuses it (writing nothing) when it does
    /// not fit in ATT_MTU or its value length differs from the first entry's.
    mutating func append<S: ByteSink>(handle: UInt16, groupEnd: UInt16, value: Span<UInt8>, to sink: inout S) -> Bool {
        let n = min(value.count, maximumValueLength)
        if budget.isEmpty {
            let header = hasLengthOctet ? 2 : 1
            guard budget.fits(header + entryHeader + n) else { return false }
            valueLength = n
            sink.append(opcode.rawValue)
            if hasLengthOctet {
                // Find Information's format: 1 for 16-bit UUIDs, 2 for 128-bit (Part F 3.4.3.2).
                let octet = opcode == .findInformationResponse ? (n == 2 ? 1 : 2) : entryHeader + n
                sink.append(UInt8(truncatingIfNeeded: octet))
            }
            budget.addHeader(header)
        }
        guard n == valueLength, budget.fits(entryHeader + n) else { return false }
        sink.append(u16: handle)
        if hasGroupEnd { sink.append(u16: groupEnd) }
        sink.append(contentsOf: value.extracting(0..<n))
        budget.add(entryHeader + n)
        return true
    }
}

extension ATTFindInformationResponse {
    public struct Builder: Sendable {
        var list: ATTListWriter
        public var budget: ATTListBudget { list.budget }
        public init(mtu: UInt16) { list = ATTListWriter(response: ATTFindInformationResponse.opcode, mtu: mtu) }

        public mutating func append<S: ByteSink>(handle: UInt16, type: BluetoothUUID, to sink: inout S) -> Bool {
            var uuid = FixedBytes<16>()
            type.write(to: &uuid, size: type.shortestWireSize)
            return list.append(handle: handle, groupEnd: 0, value: uuid.span, to: &sink)
        }
    }
}

extension ATTFindByTypeValueResponse {
    public struct Builder: Sendable {
        var list: ATTListWriter
        public var budget: ATTListBudget { list.budget }
        public init(mtu: UInt16) { list = ATTListWriter(response: ATTFindByTypeValueResponse.opcode, mtu: mtu) }

        public mutating func append<S: ByteSink>(foundAttributeHandle: UInt16, groupEndHandle: UInt16, to sink: inout S) -> Bool {
            list.append(handle: foundAttributeHandle, groupEnd: groupEndHandle, value: Span(), to: &sink)
        }
    }
}

extension ATTReadByTypeResponse {
    public struct Builder: Sendable {
        var list: ATTListWriter
        public var budget: ATTListBudget { list.budget }
        public init(mtu: UInt16) { list = ATTListWriter(response: ATTReadByTypeResponse.opcode, mtu: mtu) }

        /// Longest value octets one entry may carry: the length octet caps an entry at 255 and the
        /// first entry must fit the MTU with the two header octets (Part F 3.4.4.2).
        public var maximumValueLength: Int { list.maximumValueLength }

        /// Adds `handle` with `value` truncated to `maximumValueLength`; refuses a value whose
        /// (truncated) length differs from the first entry's.
        public mutating func append<S: ByteSink>(handle: UInt16, value: Span<UInt8>, to sink: inout S) -> Bool {
            list.append(handle: handle, groupEnd: 0, value: value, to: &sink)
        }
    }
}

extension ATTReadByGroupTypeResponse {
    public struct Builder: Sendable {
        var list: ATTListWriter
        public var budget: ATTListBudget { list.budget }
        public init(mtu: UInt16) { list = ATTListWriter(response: ATTReadByGroupTypeResponse.opcode, mtu: mtu) }

        /// Part F 3.4.4.10: an entry is at most 255 octets and the first must fit the MTU.
        public var maximumValueLength: Int { list.maximumValueLength }

        public mutating func append<S: ByteSink>(handle: UInt16, endGroupHandle: UInt16, value: Span<UInt8>, to sink: inout S) -> Bool {
            list.append(handle: handle, groupEnd: endGroupHandle, value: value, to: &sink)
        }
    }
}

extension ATTReadMultipleVariableResponse {
    public struct Builder: Sendable {
        public private(set) var budget: ATTListBudget
        public private(set) var isFull = false
        public init(mtu: UInt16) { budget = ATTListBudget(mtu: mtu) }

        /// Adds one length/value tuple. The list is cut at ATT_MTU-1 octets even inside a tuple
        /// (Part F 3.4.4.12), so the tuple that reaches the limit is written partially and the builder
        /// becomes full; returns false only once it is already full.
        public mutating func append<S: ByteSink>(value: Span<UInt8>, to sink: inout S) -> Bool {
            guard !isFull else { return false }
            if budget.isEmpty {
                sink.append(ATTReadMultipleVariableResponse.opcode.rawValue)
                budget.addHeader(1)
            }
            var tuple = FixedBytes<2>()
            tuple.append(u16: UInt16(truncatingIfNeeded: value.count))
            var room = budget.mtu - budget.length
            var written = 0
            for i in 0..<2 where room > 0 { sink.append(tuple[i]); room -= 1; written += 1 }
            let n = min(value.count, room)
            sink.append(contentsOf: value.extracting(0..<n))
            written += n
            budget.add(written)
            if budget.length >= budget.mtu { isFull = true }
            return true
        }
    }
}

extension ATTMultipleHandleValueNotification {
    public struct Builder: Sendable {
        public private(set) var budget: ATTListBudget
        public init(mtu: UInt16) { budget = ATTListBudget(mtu: mtu) }

        /// Adds a whole handle/length/value tuple, or nothing if it does not fit in ATT_MTU.
        public mutating func append<S: ByteSink>(handle: UInt16, value: Span<UInt8>, to sink: inout S) -> Bool {
            let header = budget.isEmpty ? 1 : 0
            guard budget.fits(header + 4 + value.count) else { return false }
            if header == 1 {
                sink.append(ATTMultipleHandleValueNotification.opcode.rawValue)
                budget.addHeader(1)
            }
            sink.append(u16: handle)
            sink.append(u16: UInt16(truncatingIfNeeded: value.count))
            sink.append(contentsOf: value)
            budget.add(4 + value.count)
            return true
        }
    }
}
