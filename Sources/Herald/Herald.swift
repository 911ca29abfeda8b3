import BluetoothHost

/// The Herald proximity protocol, built on the core Bluetooth host.
///
/// This module is part of the core: it is compiled by `Tools/embedded-check` for Cortex-M with
/// `-no-allocations`, so it holds only value types over fixed-capacity storage. Folders: Crypto/
/// (SHA-256, resolvable private addresses), Payload/ (keys, epoch, Simple and beacon payloads,
/// extended data), Signal/ (signal characteristic messages), Identifiers/, Advert/, Sensor/ (the
/// sensor: delegate API, device database, central scheduler, `HeraldSensor`, the Herald API's `SensorArray`).
public enum Herald {
    /// The Herald service UUID from the Herald protocol specification (see `HeraldIdentifiers`).
    public static let serviceUUIDString: StaticString = "428132af-4746-42d3-801e-4572d65bfd9b"
}
