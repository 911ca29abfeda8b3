// Building the sensor in memory the caller provides (firmware: inside the `BluetoothStack` it builds
// with `BluetoothStack.initialize(_:...)`). `HeraldSensor(...)` composes the central (4.8 KB with a
// 16-device database) and the sensor around it in temporaries and copies them out: 5.8 KB of stack
// at start-up beyond the value. Here each part goes straight to its place.
// `SensorInPlaceTests` checks that every stored property is set, as `init` sets it.
import BluetoothHost

extension HeraldSensor {
    /// Initialises `sensor`, memory that holds no value yet, as `HeraldSensor(supplier:delegate:
    /// peripheral:configuration:)` would, a part at a time. Every part must be plain data (no
    /// references): assigning a part of such memory releases nothing. The precondition checks it.
    public static func initialize(_ sensor: UnsafeMutablePointer<Self>, supplier: Supplier, delegate: Delegate,
                                  peripheral: Peripheral,
                                  configuration: HeraldSensorConfiguration = HeraldSensorConfiguration()) {
        precondition(_isPOD(Self.self), "HeraldSensor holds a reference: build it with init")
        sensor.pointee.core.supplier = supplier
        sensor.pointee.core.delegate = delegate
        sensor.pointee.core.now = 0
        sensor.pointee.core.central.initializeInPlace(configuration: configuration)
        sensor.pointee.peripheral = peripheral
        sensor.pointee.wantsOn = false
        sensor.pointee.controllerReady = false
    }
}

extension HeraldCentral {
    /// `init(configuration:)` for memory that holds no value yet.
    @inline(never)
    mutating func initializeInPlace(configuration: HeraldSensorConfiguration) {
        self.configuration = configuration
        database.initializeInPlace()
        initializeAbsent(&slots)
        pending = nil
        waitsForRoomUntil = nil
        isOn = false
        scan = nil
        scanWindowOpen = true
        activeScanUntil = 0
        answeredScans = AnsweredScanAddresses()
        initializeAbsent(&inboundStrangers)
        advertisedAddress = nil
        scanPeriodStart = 0
        nextPurge = 0
        immediateData = FixedBytes()
        unownedLinksClosed = 0
        malformedAdverts = 0
        ignoredAppleAdverts = 0
        outgoing = FixedBytes()
        outgoingLink = nil
    }
}

extension HeraldDeviceDatabase {
    /// `init()` for memory that holds no value yet: `InlineArray(repeating: nil)` built the 16
    /// devices (3.8 KB) in a temporary first.
    @inline(never)
    mutating func initializeInPlace() {
        initializeAbsent(&entries)
        for i in 0..<capacity { targets[i] = 0 }
        nextTarget = 1
        initialIgnoreInterval = 60_000
        maximumIgnoreInterval = 180_000
    }
}

/// Stores `nil` in each position of `array`, memory that holds no value yet: an absent element is
/// only the optional's tag, written through a pointer, not an element-sized temporary.
@inline(never)
func initializeAbsent<let n: Int, T>(_ array: inout InlineArray<n, T?>) {
    withUnsafeMutablePointer(to: &array) { p in
        let elements = UnsafeMutableRawPointer(p).assumingMemoryBound(to: T?.self)
        for i in 0..<n { (elements + i).initialize(to: nil) }
    }
}
