import Herald

/// An application's own counters, appended to the runtime's in `--stats` (`StackSession.statistics`).
public protocol ApplicationStatistics {
    var applicationStatistics: [(String, Int)] { get }
}

extension HeraldCentral {
    /// What the sensor's central decided from adverts alone.
    public var advertStatistics: [(String, Int)] {
        [("malformedAdverts", malformedAdverts), ("ignoredAppleAdverts", ignoredAppleAdverts)]
    }

    /// What must stay bounded however long it runs: device database entries and the central's links,
    /// and the late central links it closed because no attempt owned them.
    public var occupancyStatistics: [(String, Int)] {
        [("devices", database.count), ("centralLinks", openLinks), ("unownedLinksClosed", unownedLinksClosed)]
    }
}

extension HeraldSensor: ApplicationStatistics {
    /// With the device database's occupancy: it must stay bounded however many addresses pass by.
    public var applicationStatistics: [(String, Int)] { central.advertStatistics + central.occupancyStatistics }
}
