// Building the whole stack in memory the caller provides, without the value ever existing anywhere
// else. Firmware needs this: `BluetoothStack(...)` composes `HCIHost` and `LEStack` (and, inside
// those, every table) in temporaries and copies them into place, and those temporaries are stack at
// start-up, more than the value itself (Firmware/README.md: 16.7 KB of start-up stack for a 6.9 KB
// beacon value). Here each part is built in a call of its own straight into its final place, so
// the start-up peak is that of the largest single part.

extension BluetoothStackOf {
    /// Initialises `stack`, memory that holds no value yet, as a `BluetoothStack` with these
    /// arguments, part by part: the same value as `stack.initialize(to: BluetoothStack(configuration:
    /// database:app:maximumMTU:))`. `app` initialises the application in its place, e.g.
    /// `{ $0.initialize(to: MyApp(...)) }`, so a large application can be built in place too.
    ///
    /// Every part of the stack is plain data (no references), which is what makes assigning the parts
    /// of memory that holds no value yet sound: nothing old is released. The precondition checks it.
    public static func initialize(_ stack: UnsafeMutablePointer<Self>, configuration: HostConfiguration,
                                  database: LEStack<App, links, attributes, values>.Database,
                                  maximumMTU: UInt16 = ATTMTU.defaultMaximum,
                                  app: (UnsafeMutablePointer<App>) -> Void) {
        precondition(_isPOD(Self.self), "BluetoothStack holds a reference: build it with init")
        assignInPlace(&stack.pointee.hci) { HCIHostOf(configuration: configuration) }
        assignInPlace(&stack.pointee.framer) { H4Framer() }
        LEStack.initialize(&stack.pointee.le, database: database, maximumMTU: maximumMTU, app: app)
    }
}

/// Builds one part in a frame of its own, so the temporaries of different parts never add up.
extension BluetoothStackOf {
    /// `initialize(_:configuration:database:maximumMTU:app:)` with the GATT database built in its
    /// place too: `database` initialises it (e.g. `{ $0.initialize(to: try GATTDatabase(...)) }`,
    /// then the services installed through `&$0.pointee`) and returns false when it cannot, which
    /// leaves `stack` uninitialised and returns false. Firmware builds its database this way, so the
    /// database (0.8 KB) is neither a local of the caller's frame nor copied into place.
    public static func initialize(_ stack: UnsafeMutablePointer<Self>, configuration: HostConfiguration,
                                  maximumMTU: UInt16 = ATTMTU.defaultMaximum,
                                  database: (UnsafeMutablePointer<LEStack<App, links, attributes, values>.Database>) -> Bool,
                                  app: (UnsafeMutablePointer<App>) -> Void) -> Bool {
        precondition(_isPOD(Self.self), "BluetoothStack holds a reference: build it with init")
        guard withUnsafeMutablePointer(to: &stack.pointee.le.database, { database($0) }) else { return false }
        assignInPlace(&stack.pointee.hci) { HCIHostOf(configuration: configuration) }
        assignInPlace(&stack.pointee.framer) { H4Framer() }
        LEStack.initialize(&stack.pointee.le, databaseInPlace: maximumMTU, app: app)
        return true
    }
}

@inline(never)
func assignInPlace<T>(_ place: inout T, _ make: () -> T) {
    place = make()
}

/// Copies `value` into `place` in a frame of its own.
@inline(never)
func copyInPlace<T>(_ place: inout T, _ value: T) {
    place = value
}
