extension GATTDatabaseOf {
    /// A database serving `table` without checking it: for a table checked where it was made, as
    /// the firmware images' are (Tests/HeraldTests/FirmwareGATTTableTests.swift fails unless the
    /// checked-in table is exactly what the builder writes, and serves it through the ATT server for
    /// every handle). `init(table:)` checks every record's offsets against the table and `V` at
    /// each start-up; on the beacon that check was 274 B of its 24 KB flash budget, spent on a
    /// constant. Only the two handles the server asks for by name are found here. A table this
    /// init is given must be one `init(table:)` accepts (`attributeCapacity == 0`, records and
    /// values inside it, per-link values inside `V`): otherwise reads go outside it. Hence not in the
    /// public interface: a client opts in with `@_spi(UncheckedGATTTable) import BluetoothHost`.
    @_spi(UncheckedGATTTable)
    public init(trustedTable table: UnsafeBufferPointer<UInt8>) {
        attributes = InlineArray(repeating: GATTAttribute(type: BluetoothUUID(uuid16: 0), permissions: GATTPermissions(rawValue: 0),
                                                          storage: .dynamic(id: 0)))
        values = InlineArray(repeating: 0)
        let n = GATTConstantTable.u16(table, 0)
        self.table = table
        count = n
        sparse = GATTConstantTable.isSparse(table)
        precondition(Handles.allowsGaps || !sparse, "GATTDatabaseOf(trustedTable:): a sparse table for ConsecutiveGATTHandles")
        for i in 0..<n {
            if GATTConstantTable.isType(table, i, GATTAttributeType.clientSupportedFeatures) {
                clientSupportedFeaturesHandle = handle(at: i)
            } else if GATTConstantTable.isType(table, i, GATTAttributeType.databaseHash) {
                databaseHashHandle = handle(at: i)
            }
        }
    }
}
