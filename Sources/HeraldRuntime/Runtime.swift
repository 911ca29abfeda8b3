import Foundation
import BluetoothHost
import Herald

/// The host runtime: everything that touches the outside world (ports, clocks, files) lives in this
/// module, around the sans-I/O core.
public enum HeraldRuntime {
    public static let version = "0.1.0"
}
