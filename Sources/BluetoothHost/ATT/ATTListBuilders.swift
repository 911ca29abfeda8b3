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

extension ATTFindInformationResponse {
    public struct Builder: Sendable {
        public private(set) var budget: ATTListBudget
        var uuidLength = 0
        public init(mtu: UInt16) { budget = ATTListBudget(mtu: mtu) }

        public mutating func append<S: ByteSink>(handle: UInt16, type: BluetoothUUID, to sink: inout S) -> Bool {
            let size = type.shortestWireSize
            if budget.isEmpty {
                guard budget.fits(2 + 2 + size) else { return false }
                uuidLength = size
                sink.append(ATTFindInformationResponse.opcode.rawValue)
                sink.append(size == 2 ? 1 : 2)
                budget.addHeader(2)
            }
            guard size == uuidLength, budget.fits(2 + size) else { return false }
            sink.append(u16: handle)
            type.write(to: &sink, size: size)
            budget.add(2 + size)
            return true
        }
    }
}

extension ATTFindByTypeValueResponse {
    public struct Builder: Sendable {
        public private(set) var budget: ATTListBudget
        public init(mtu: UInt16) { budget = ATTListBudget(mtu: mtu) }

        public mutating func append<S: ByteSink>(foundAttributeHandle: UInt16, groupEndHandle: UInt16, to sink: inout S) -> Bool {
            if budget.isEmpty {
                guard budget.fits(1 + 4) else { return false }
                sink.append(ATTFindByTypeValueResponse.opcode.rawValue)
                budget.addHeader(1)
            }
            guard budget.fits(4) else { return false }
            sink.append(u16: foundAttributeHandle)
            sink.append(u16: groupEndHandle)
            budget.add(4)
            return true
        }
    }
}

extension ATTReadByTypeResponse {
    public struct Builder: Sendable {
        public private(set) var budget: ATTListBudget
        var valueLength = 0
        public init(mtu: UInt16) { budget = ATTListBudget(mtu: mtu) }

        /// Longest value octets one entry may carry: the length octet caps an entry at 255 and the
        /// first entry must fit the MTU with the two header octets (Part F 3.4.4.2).
        public var maximumValueLength: Int { min(budget.mtu - 4, 253) }

        /// Adds `handle` with `value` truncated to `maximumValueLength`; refuses a value whose
        /// (truncated) length differs from the first entry's.
        public mutating func append<S: ByteSink>(handle: UInt16, value: Span<UInt8>, to sink: inout S) -> Bool {
            let n = min(value.count, maximumValueLength)
            if budget.isEmpty {
                valueLength = n
                sink.append(ATTReadByTypeResponse.opcode.rawValue)
                sink.append(UInt8(truncatingIfNeeded: 2 + n))
                budget.addHeader(2)
            }
            guard n == valueLength, budget.fits(2 + n) else { return false }
            sink.append(u16: handle)
            sink.append(contentsOf: value.extracting(0..<n))
            budget.add(2 + n)
            return true
        }
    }
}

extension ATTReadByGroupTypeResponse {
    public struct Builder: Sendable {
        public private(set) var budget: ATTListBudget
        var valueLength = 0
        public init(mtu: UInt16) { budget = ATTListBudget(mtu: mtu) }

        /// Part F 3.4.4.10: an entry is at most 255 octets and the first must fit the MTU.
        public var maximumValueLength: Int { min(budget.mtu - 6, 251) }

        public mutating func append<S: ByteSink>(handle: UInt16, endGroupHandle: UInt16, value: Span<UInt8>, to sink: inout S) -> Bool {
            let n = min(value.count, maximumValueLength)
            if budget.isEmpty {
                valueLength = n
                sink.append(ATTReadByGroupTypeResponse.opcode.rawValue)
                sink.append(UInt8(truncatingIfNeeded: 4 + n))
                budget.addHeader(2)
            }
            guard n == valueLength, budget.fits(4 + n) else { return false }
            sink.append(u16: handle)
            sink.append(u16: endGroupHandle)
            sink.append(contentsOf: value.extracting(0..<n))
            budget.add(4 + n)
            return true
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
