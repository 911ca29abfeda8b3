@testable import BluetoothHost

extension HCIHost {
    /// For tests that hand the host whole packets: a framer of the call's own. `BluetoothStack` keeps
    /// one across calls (`HCIHost.receive(_:framer:now:delegate:output:)`); a packet split over two
    /// calls here would be lost, so a test that splits packets drives a `BluetoothStack` instead.
    mutating func receive<D: HostDelegate, O: H4Output>(_ bytes: Span<UInt8>, now: UInt64, delegate: inout D, output: inout O) {
        var framer = H4Framer<260>()
        receive(bytes, framer: &framer, now: now, delegate: &delegate, output: &output)
    }
}
