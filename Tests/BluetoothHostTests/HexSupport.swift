/// Bytes from a hex literal as the specification prints them ("01 03 0C 00"): whitespace ignored,
/// either case. Shared by every BluetoothHost test suite that writes packets as hex.
func hex(_ s: String) -> [UInt8] {
    let digits = Array(s.filter { !$0.isWhitespace }.utf8)
    precondition(digits.count % 2 == 0, "odd hex literal")
    func nibble(_ c: UInt8) -> UInt8 {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        default: return c - UInt8(ascii: "A") + 10
        }
    }
    return stride(from: 0, to: digits.count, by: 2).map { nibble(digits[$0]) << 4 | nibble(digits[$0 + 1]) }
}
