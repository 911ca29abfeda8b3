// Reading, writing and permission checks on a GATTDatabase: what the ATT server calls per request.

extension GATTDatabaseOf {
    /// The error a request must get when `security` does not satisfy the attribute's permissions,
    /// checked in the order a client can fix them (Core 5.4 Vol 3 Part F 3.2.5, Part C 10.3.1):
    /// access first, then encryption (Insufficient Encryption only when a key exists to encrypt with,
    /// otherwise Insufficient Authentication so the client pairs), key size, MITM, authorization.
    @inline(__always)
    public mutating func checkAccess(_ handle: UInt16, write: Bool, security: ATTLinkSecurity) -> ATTErrorCode? {
        // Inlined down to the check on the permissions alone: a call with the whole database as
        // `self` made the ATT server, which holds it `inout`, copy it on every request.
        guard let a = attribute(handle) else { return .invalidHandle }
        return a.permissions.accessError(write: write, security: security)
    }

    /// Length of a value the database holds, `link`'s own for a per-link value (nil when the
    /// delegate produces it).
    public mutating func valueLength(_ handle: UInt16, link: GATTServerLink) -> Int? {
        guard let a = attribute(handle) else { return nil }
        if case .databaseHash = a.storage { return 16 }
        return storedSpan(handle, slot: link.slot)?.length
    }

    /// Writes the value of `handle` from `offset` on into `sink`. Permissions are the caller's job.
    /// Returns Invalid Offset when `offset` is past the end of a held value (Part F 3.4.4.5).
    public mutating func readValue<D: GATTServerDelegate, S: ByteSink>(
        _ handle: UInt16, link: GATTServerLink, offset: Int, delegate: inout D, into sink: inout S
    ) -> ATTErrorCode? {
        guard let a = attribute(handle) else { return .invalidHandle }
        switch a.storage {
        case .dynamic(let id):
            return delegate.read(id: id, link: link.handle, offset: offset, into: &sink)
        case .databaseHash:
            // Checked on the delegate's type so that, without the feature, the AES-CMAC is not linked.
            guard D.serverFeatures.databaseHash else { return .readNotPermitted }
            let h = databaseHash()
            guard offset <= 16 else { return .invalidOffset }
            for i in offset..<16 { sink.append(h[i]) }
            return nil
        case .constant(let o, let n) where Self.usesTable:
            // In the table (flash): checked against it by init(table:).
            guard offset <= n else { return .invalidOffset }
            for k in (o &+ offset)..<(o &+ n) { sink.append(table[k]) }
            return nil
        case .constant, .stored, .perLink:
            guard let r = storedSpan(handle, slot: link.slot) else { return .unlikelyError }
            guard offset <= r.length else { return .invalidOffset }
            sink.append(contentsOf: values.span.extracting((r.offset &+ offset)..<(r.offset &+ r.length)))  // all below V
            return nil
        }
    }

    /// Writes `value` at `offset` into `handle` on behalf of `link`. Permissions are the caller's
    /// job. Stored values take `offset + value.count` as their new length (a write replaces the value
    /// from `offset` to the end, Part F 3.4.5.1 / 3.4.6.3).
    public mutating func writeValue<D: GATTServerDelegate>(
        _ handle: UInt16, link: GATTServerLink, offset: Int, value: Span<UInt8>, delegate: inout D
    ) -> ATTErrorCode? {
        guard let a = attribute(handle) else { return .invalidHandle }
        switch a.storage {
        case .dynamic(let id):
            return delegate.write(id: id, link: link.handle, offset: offset, value: value)
        case .constant, .databaseHash:
            return .writeNotPermitted
        case .stored(let o, let length, let capacity):
            guard offset <= length else { return .invalidOffset }
            guard offset + value.count <= capacity else { return .invalidAttributeValueLength }
            for i in value.indices { values[o + offset + i] = value[i] }
            attributes[Int(handle) - 1].storage = .stored(offset: o, length: offset + value.count, capacity: capacity)
            delegate.storedValueWritten(handle: handle, link: link.handle)
            return nil
        case .perLink(let o, let width):
            guard link.slot >= 0, link.slot < linkCapacity else { return .unlikelyError }
            let at = o + link.slot * width
            if a.isType(GATTAttributeType.clientCharacteristicConfiguration) {
                return writeClientConfiguration(handle, at: at, link: link.handle, offset: offset,
                                                value: value, delegate: &delegate)
            }
            return writeClientSupportedFeatures(at: at, offset: offset, value: value)
        }
    }

    /// CCCD write (Part G 3.3.3.3): exactly two octets; bits for procedures the characteristic does
    /// not support are dropped; the application hears about real changes only.
    mutating func writeClientConfiguration<D: GATTServerDelegate>(
        _ handle: UInt16, at: Int, link: UInt16, offset: Int, value: Span<UInt8>, delegate: inout D
    ) -> ATTErrorCode? {
        guard offset == 0 else { return .invalidOffset }
        guard value.count == 2 else { return .invalidAttributeValueLength }
        // Looked up here rather than through `characteristicValue(forCCCD:)`: a call to that
        // read-only method from this mutating one copied the attribute table (0.7 KB) first.
        var valueHandle: UInt16 = 0
        var k = (index(of: handle) ?? 0) - 1
        while k >= 0 {
            if entryCCCD(k) == handle { valueHandle = entryHandle(k); break }
            if entryIsType(k, GATTAttributeType.characteristic) { break }
            k -= 1
        }
        var allowed: UInt16 = 0
        if let v = attribute(valueHandle) {
            if v.properties.contains(.notify) { allowed |= GATTClientConfiguration.notification.rawValue }
            if v.properties.contains(.indicate) { allowed |= GATTClientConfiguration.indication.rawValue }
        }
        let new = (UInt16(value[0]) | UInt16(value[1]) << 8) & allowed
        let old = UInt16(values[at]) | UInt16(values[at + 1]) << 8
        values[at] = UInt8(truncatingIfNeeded: new)
        values[at + 1] = UInt8(truncatingIfNeeded: new >> 8)
        if new != old {
            delegate.clientConfigurationChanged(valueHandle: valueHandle, link: link,
                                                configuration: GATTClientConfiguration(rawValue: new))
        }
        return nil
    }

    /// Client Supported Features write (Part G 7.2): a client may set bits but never clear them
    /// (Value Not Allowed). We keep the first octet, which holds every bit Core 5.4 defines.
    mutating func writeClientSupportedFeatures(at: Int, offset: Int, value: Span<UInt8>) -> ATTErrorCode? {
        guard offset == 0 else { return .invalidOffset }
        guard value.count >= 1 else { return .invalidAttributeValueLength }
        let old = values[at]
        let new = value[0] & 0x07
        guard old & ~new == 0 else { return .valueNotAllowed }
        values[at] = new
        return nil
    }

    /// Whether a Write Command may change `handle`: characteristic values whose declaration has
    /// Write Without Response, and descriptors (which have no properties; their permissions decide).
    public mutating func acceptsWriteCommand(_ handle: UInt16) -> Bool {
        guard let a = attribute(handle) else { return false }
        if a.properties.isEmpty { return true }
        return a.properties.contains(.writeWithoutResponse)
    }

    /// The characteristic value handle a CCCD belongs to (0 if none).
    public func characteristicValue(forCCCD handle: UInt16) -> UInt16 {
        var k = (index(of: handle) ?? 0) - 1
        while k >= 0 {
            if entryCCCD(k) == handle { return entryHandle(k) }
            if entryIsType(k, GATTAttributeType.characteristic) { break }
            k -= 1
        }
        return 0
    }

    /// How `link` configured the CCCD of the characteristic whose value is at `valueHandle`.
    public func clientConfiguration(valueHandle: UInt16, link: GATTServerLink) -> GATTClientConfiguration {
        clientConfiguration(valueHandle: valueHandle, slot: link.slot)
    }

    /// The Client Supported Features octet `link` wrote (Part G 7.2).
    public func clientSupportedFeatures(link: GATTServerLink) -> UInt8 {
        clientSupportedFeatures(slot: link.slot)
    }

    /// Forgets `link`'s CCCDs and Client Supported Features; call when the link goes down, before
    /// the connection table lets its position go (values of unbonded clients do not persist across
    /// connections, Part G 3.3.3.3).
    public mutating func resetLink(_ link: GATTServerLink) {
        resetLink(slot: link.slot)
    }

    // The same by the connection table's position, for the stack, which holds the table and finds
    // the position itself (`LEStack.linkDown`, `replaceDatabase`): the numbering stays inside it.

    func clientConfiguration(valueHandle: UInt16, slot: Int) -> GATTClientConfiguration {
        guard let a = attribute(valueHandle), a.cccdHandle != 0,
              let r = storedSpan(a.cccdHandle, slot: slot) else { return GATTClientConfiguration(rawValue: 0) }
        return GATTClientConfiguration(rawValue: UInt16(values[r.offset]) | UInt16(values[r.offset + 1]) << 8)
    }

    func clientSupportedFeatures(slot: Int) -> UInt8 {
        guard let r = storedSpan(clientSupportedFeaturesHandle, slot: slot) else { return 0 }
        return values[r.offset]
    }

    mutating func resetLink(slot: Int) {
        guard slot >= 0, slot < linkCapacity else { return }
        for i in 0..<count {
            if case .perLink(let o, let w) = entry(i).storage {
                for k in 0..<w { values[o + slot * w + k] = 0 }
            }
        }
    }

    /// Replaces a stored value from the application side (e.g. a new payload); no permission checks.
    public mutating func setValue(_ handle: UInt16, to value: Span<UInt8>) -> ATTErrorCode? {
        guard let a = attribute(handle) else { return .invalidHandle }
        guard case .stored(let o, _, let capacity) = a.storage else { return .writeNotPermitted }
        guard value.count <= capacity else { return .invalidAttributeValueLength }
        for i in value.indices { values[o + i] = value[i] }
        attributes[Int(handle) - 1].storage = .stored(offset: o, length: value.count, capacity: capacity)
        return nil
    }

    /// The Database Hash (Core 5.4 Vol 3 Part G 7.3.1): AES-CMAC, key all zeros, over each attribute
    /// in handle order: handle, type and value for service, include, characteristic declarations and
    /// Characteristic Extended Properties; handle and type only for the other GATT-defined descriptors
    /// (0x2901–0x2905). Other attributes do not contribute. Returned little-endian, the order it is
    /// read over ATT (the CMAC's first octet is its most significant).
    public mutating func databaseHash() -> AES128.Block {
        if hashIsValid { return hash }
        var cmac = AESCMAC(key: InlineArray(repeating: 0))
        for i in 0..<count {
            let a = entry(i)
            guard let t = a.type.uuid16 else { continue }
            let withValue: Bool
            switch t {
            case GATTAttributeType.primaryService, GATTAttributeType.secondaryService, GATTAttributeType.include,
                 GATTAttributeType.characteristic, GATTAttributeType.characteristicExtendedProperties:
                withValue = true
            case GATTAttributeType.characteristicUserDescription...GATTAttributeType.characteristicAggregateFormat:
                withValue = false
            default:
                continue
            }
            let handle = entryHandle(i)
            cmac.append(u16: handle)
            cmac.append(u16: t)
            if withValue, let r = storedSpan(handle, slot: 0) {
                for k in r.offset..<(r.offset + r.length) { cmac.append(constantOctet(k)) }
            }
        }
        let mac = cmac.finalize()
        for k in 0..<16 { hash[k] = mac[15 - k] }
        hashIsValid = true
        return hash
    }
}

extension GATTPermissions {
    /// What `GATTDatabase.checkAccess` answers for an attribute with these permissions.
    func accessError(write: Bool, security: ATTLinkSecurity) -> ATTErrorCode? {
        let p = self
        if write {
            guard p.contains(.write) else { return .writeNotPermitted }
        } else {
            guard p.contains(.read) else { return .readNotPermitted }
        }
        let needsAuthentication = p.contains(write ? .writeAuthenticated : .readAuthenticated)
        let needsEncryption = needsAuthentication || p.contains(write ? .writeEncrypted : .readEncrypted)
        if needsEncryption {
            guard security.encrypted else { return security.bonded ? .insufficientEncryption : .insufficientAuthentication }
            guard security.keySize >= security.minimumKeySize else { return .encryptionKeySizeTooShort }
        }
        if needsAuthentication && !security.authenticated { return .insufficientAuthentication }
        if p.contains(write ? .writeAuthorized : .readAuthorized) && !security.authorized {
            return .insufficientAuthorization
        }
        return nil
    }
}
