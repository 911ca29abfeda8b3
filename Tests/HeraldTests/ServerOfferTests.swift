import Foundation
import Testing
@testable import BluetoothHost
@testable import Herald

/// A delegate that, as delegates used to, names server features and a prepare queue of its own.
struct OpinionatedSensorEvents: SensorDelegate {
    static var serverFeatures: GATTServerFeatures { GATTServerFeatures(readMultiple: false, databaseHash: false) }
    typealias PrepareQueue = ATTPreparedWrites<2, 64>
}

/// What a Herald GATT server offers (its optional procedures, each link's prepare queue) is the
/// peripheral's choice, made with its database, never its event delegate's: observers can be
/// composed in any order without changing what centrals may do.
@Suite struct ServerOfferTests {
    typealias Sensor<D: SensorDelegate> = HeraldSensor<SimplePayloadDataSupplier<InlineSecretKey>, D, 4, 2, NoSensorPeripheral>
    typealias AB = Sensor<SensorDelegatePair<OpinionatedSensorEvents, RecordingDelegate>>
    typealias BA = Sensor<SensorDelegatePair<RecordingDelegate, OpinionatedSensorEvents>>

    @Test func swappingAPairOfDelegatesChangesNothingTheServerOffers() {
        #expect(AB.serverFeatures == BA.serverFeatures)
        #expect(AB.PrepareQueue.self == BA.PrepareQueue.self)
        #expect(MemoryLayout<LinkState<AB.PrepareQueue, AB.LinkBuffers.PDU>>.size
                == MemoryLayout<LinkState<BA.PrepareQueue, BA.LinkBuffers.PDU>>.size)
    }

    /// Every firmware image runs one of the core's applications (`HeraldPeripheralApplication`,
    /// `HeraldSensor`), sized by type parameters: none carries a hand-made copy of one.
    @Test func noFirmwareImageDefinesItsOwnApplication() throws {
        let firmware = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Firmware").standardized
        let files = try #require(FileManager.default.enumerator(at: firmware, includingPropertiesForKeys: nil))
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }
        #expect(!files.isEmpty)
        // A type declared to conform (`struct VenueBeacon: LEApplication {`), not a generic constraint.
        let declaration = try Regex(#"(struct|enum|extension)\s+\w+\s*:[^{=]*\bLEApplication\b"#)
        for file in files {
            let text = try String(contentsOf: file, encoding: .utf8)
            #expect(!text.contains(declaration), "\(file.lastPathComponent) defines an LEApplication of its own")
        }
    }

    /// The beacon's sizes, as its image passes them (Firmware/Beacon): the core's application takes
    /// them as type parameters, and its stack then has the beacon's ATT PDUs and queues.
    enum NoQueuedWrites: HeraldServerOffer {
        static var serverFeatures: GATTServerFeatures { .mandatory }
        typealias PrepareQueue = ATTNoPrepareQueue
        typealias LinkBuffers = LinkPDUBuffers<68>
        typealias ControlBuffers = StackControlQueues<256, 160>
    }

    @Test func oneApplicationTakesEachImagesSizes() {
        typealias Beacon = HeraldPeripheralApplication<FixedPayloadSource<64>, PeripheralEventLog, 2, 64, 32, NoQueuedWrites>
        typealias Standard = HeraldPeripheralApplication<FixedPayloadSource<64>, PeripheralEventLog, 2, 64, 32, StandardServerOffer>
        #expect(Beacon.LinkBuffers.PDU.capacity == 68 && Standard.LinkBuffers.PDU.capacity == 247)
        #expect(Beacon.ControlBuffers.self == StackControlQueues<256, 160>.self)
        #expect(Standard.ControlBuffers.self == StandardControlBuffers.self)
        #expect(Beacon.serverFeatures == .mandatory && Beacon.PrepareQueue.self == ATTNoPrepareQueue.self)
        #expect(Standard.serverFeatures == .all && Standard.PrepareQueue.self == ATTStandardPrepareQueue.self)
    }

    /// A peripheral application refuses no central (its policy is `.open`), so its stack keeps no
    /// list of refused ones (the sensor's stack does: its policy refuses silent centrals).
    @Test func aPeripheralApplicationsStackKeepsNoRefusedCentrals() {
        typealias Beacon = HeraldPeripheralApplication<FixedPayloadSource<64>, PeripheralEventLog, 2, 64, 32, NoQueuedWrites>
        #expect(Beacon.inboundLinks == .open)
        #expect(Beacon.RefusedCentrals.self == NoSilentCentrals.self)
        #expect(MemoryLayout<NoSilentCentrals>.size == 0)
        #expect(AB.inboundLinks.refuseSilentFor > 0 && AB.RefusedCentrals.self == SilentCentrals.self)
    }
}
