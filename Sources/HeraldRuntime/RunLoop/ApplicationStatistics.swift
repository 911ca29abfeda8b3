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
}

extension HeraldSensor: ApplicationStatistics {
    public var applicationStatistics: [(String, Int)] { central.advertStatistics }
}

extension SensorArray: ApplicationStatistics {
    public var applicationStatistics: [(String, Int)] { ble.central.advertStatistics }
}
