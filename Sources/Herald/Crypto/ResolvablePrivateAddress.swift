import BluetoothHost

/// Resolvable private addresses (Core 5.4 Vol 6 Part B 1.3.2.2), sans-I/O.
///
/// Our device advertises an RPA that changes at the same instant as its contact identifier, so an
/// observer cannot link two payload periods through the address. The hash is
/// ah(IRK, prand) = e(IRK, 0¹⁰⁴ ‖ prand) mod 2²⁴ (Core 5.4 Vol 3 Part H 2.2.2). The AES-128 `e` runs in
/// the controller (HCI LE Encrypt, Core 5.4 Vol 4 Part E 7.8.22), so this type only prepares the
/// command's inputs and composes the address from its output.
///
/// Byte order: everything here is in HCI order (least significant byte first). The specification
/// prints keys and results most significant byte first; `reversed` helpers convert.
public enum ResolvablePrivateAddress {
    /// The Key and Plaintext_Data parameters of LE Encrypt for ah(IRK, prand).
    /// `irk`: 16 bytes LSB first; `prand`: the 24-bit random part (its top two bits are forced to
    /// 0b01, which marks the address resolvable).
    public static func encryptInput(irk: InlineArray<16, UInt8>, prand: UInt32)
        -> (key: InlineArray<16, UInt8>, plaintext: InlineArray<16, UInt8>) {
        let p = normalized(prand: prand)
        var plaintext = InlineArray<16, UInt8>(repeating: 0)
        // r' = padding ‖ r, r in the least significant 24 bits (Vol 3 Part H 2.2.2).
        plaintext[0] = UInt8(truncatingIfNeeded: p)
        plaintext[1] = UInt8(truncatingIfNeeded: p &>> 8)
        plaintext[2] = UInt8(truncatingIfNeeded: p &>> 16)
        return (irk, plaintext)
    }

    /// The LE Encrypt command computing ah(IRK, prand).
    public static func encryptCommand(irk: InlineArray<16, UInt8>, prand: UInt32) -> HCILEEncrypt {
        let input = encryptInput(irk: irk, prand: prand)
        return HCILEEncrypt(key: input.key, plaintext: input.plaintext)
    }

    /// The address from the Command Complete of `encryptCommand(irk:prand:)`.
    public static func address(prand: UInt32, result: HCILEEncrypt.ReturnParameters) -> BDAddress {
        address(prand: prand, encrypted: result.encryptedData)
    }

    /// prand from LE Rand's 64 random bits (the low 24 are used).
    public static func prand(fromLERand random: UInt64) -> UInt32 {
        normalized(prand: UInt32(truncatingIfNeeded: random))
    }

    /// The address: hash in the least significant 24 bits, prand in the most significant 24 bits
    /// (Core 5.4 Vol 6 Part B Figure 1.4). `encrypted` is LE Encrypt's Encrypted_Data, LSB first.
    public static func address(prand: UInt32, encrypted: InlineArray<16, UInt8>) -> BDAddress {
        let p = normalized(prand: prand)
        return BDAddress(bytes: [
            encrypted[0], encrypted[1], encrypted[2],
            UInt8(truncatingIfNeeded: p), UInt8(truncatingIfNeeded: p &>> 8), UInt8(truncatingIfNeeded: p &>> 16),
        ])
    }

    /// prand with the two most significant bits set to 0b01. Its random part must not be all zeros
    /// or all ones (Vol 6 Part B 1.3.2.2): such values are nudged so the rule holds.
    public static func normalized(prand: UInt32) -> UInt32 {
        var random = prand & 0x3F_FFFF
        if random == 0 { random = 1 } else if random == 0x3F_FFFF { random = 0x3F_FFFE }
        return 0x40_0000 | random
    }

    /// prand from 3 random bytes (e.g. from HCI LE Rand).
    public static func prand(fromRandom b0: UInt8, _ b1: UInt8, _ b2: UInt8) -> UInt32 {
        normalized(prand: UInt32(b0) | UInt32(b1) &<< 8 | UInt32(b2) &<< 16)
    }

    /// The prand of a resolvable private address: its three most significant octets (Core 5.4 Vol 6
    /// Part B 1.3.2.2).
    public static func prand(of address: BDAddress) -> UInt32 {
        UInt32(address.bytes[3]) | UInt32(address.bytes[4]) &<< 8 | UInt32(address.bytes[5]) &<< 16
    }

    /// Whether `address` was made from `encrypted` = e(IRK, prand of that address) — resolving an
    /// address needs the same LE Encrypt round trip with `encryptInput(irk:prand:)` of its prand.
    public static func matches(_ address: BDAddress, encrypted: InlineArray<16, UInt8>) -> Bool {
        address.bytes[0] == encrypted[0] && address.bytes[1] == encrypted[1] && address.bytes[2] == encrypted[2]
    }

    /// Reverses 16 bytes (specification print order ⇄ HCI order).
    public static func reversed(_ b: InlineArray<16, UInt8>) -> InlineArray<16, UInt8> {
        var r = InlineArray<16, UInt8>(repeating: 0)
        for i in 0..<16 { r[i] = b[15 - i] }
        return r
    }
}
