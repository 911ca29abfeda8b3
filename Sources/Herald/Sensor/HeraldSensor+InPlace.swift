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
        sensor.pointee.core.central.initializeInPlace(configuration: configuration, clientMTU: linkMTU)
        sensor.pointee.peripheral = peripheral
        sensor.pointee.wantsOn = false
        sensor.pointee.controllerReady = false
    }

    /// As `initialize(_:supplier:delegate:peripheral:configuration:)`, with the peripheral built in
    /// its place by `makePeripheral` (`HeraldPeripheral.initialize(_:source:advertiser:)`), not made
    /// by the caller and copied in: the firmware wearable's peripheral (its four links' states and
    /// the advertiser) was a 1.3 KB frame of its own at start-up, and the peak.
    public static func initialize(_ sensor: UnsafeMutablePointer<Self>, supplier: Supplier, delegate: Delegate,
                                  configuration: HeraldSensorConfiguration = HeraldSensorConfiguration(),
                                  peripheral makePeripheral: (UnsafeMutablePointer<Peripheral>) -> Void) {
        precondition(_isPOD(Self.self), "HeraldSensor holds a reference: build it with init")
        sensor.pointee.core.supplier = supplier
        sensor.pointee.core.delegate = delegate
        sensor.pointee.core.now = 0
        sensor.pointee.core.central.initializeInPlace(configuration: configuration, clientMTU: linkMTU)
        withUnsafeMutablePointer(to: &sensor.pointee.peripheral) { makePeripheral($0) }
        sensor.pointee.wantsOn = false
        sensor.pointee.controllerReady = false
    }
}

extension HeraldPeripheral {
    /// Initialises `peripheral`, memory that holds no value yet, as `init(source:advertiser:payloadID:
    /// signalID:)` would, a part at a time: each link's state is made free in its place, where `init`
    /// built the whole table in a temporary (`freeLinks`) and copied it. Plain data only (checked).
    public static func initialize(_ peripheral: UnsafeMutablePointer<Self>, source: Source, advertiser: HeraldAdvertiser,
                                  payloadID: UInt16 = HeraldGATTProfile.payloadValueID,
                                  signalID: UInt16 = HeraldGATTProfile.signalValueID) {
        precondition(_isPOD(Self.self), "HeraldPeripheral holds a reference: build it with init")
        peripheral.pointee.source = source
        peripheral.pointee.advertiser = advertiser
        peripheral.pointee.handles = nil
        peripheral.pointee.payloadID = payloadID
        peripheral.pointee.signalID = signalID
        // One free entry at a time (a temporary of one link's state, not of the table).
        for i in 0..<links { peripheral.pointee.linkStates[i] = HeraldLinkState() }
    }
}

extension HeraldCentral {
    /// `init(configuration:)` for memory that holds no value yet.
    @inline(never)
    mutating func initializeInPlace(configuration: HeraldSensorConfiguration, clientMTU: UInt16) {
        self.configuration = configuration
        self.clientMTU = max(clientMTU, ATTMTU.minimum)
        database.initializeInPlace()
        initializeAbsent(&slots)
        pending = nil
        waitsForRoomUntil = nil
        heldForLingeringLink = nil
        isOn = false
        scan = nil
        scanWindowOpen = true
        activeScanUntil = 0
        scanPausedUntil = nil
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
        draws = CentralDraws()
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
