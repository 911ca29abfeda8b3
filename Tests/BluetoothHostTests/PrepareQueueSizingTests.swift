import Testing
@testable import BluetoothHost

/// An application that offers no queued writes and so carries no prepare queue on its links.
struct NoPrepareQueueApp: LEApplication {
    static var serverFeatures: GATTServerFeatures { .mandatory }
    typealias PrepareQueue = ATTNoPrepareQueue
}

/// Each link's prepare-write queue is the application's choice (`GATTServerDelegate.PrepareQueue`): a
/// bounded one answers Prepare Queue Full (0x09) when a part does not fit (Core 5.4 Vol 3 Part F
/// 3.4.6.1), and none at all takes the standard queue's octets off every link.
@Suite struct PrepareQueueSizingTests {
    static func answer<Q: ATTPrepareQueue>(_ hex: String, _ db: inout GATTStandardDatabase,
                                           bearer: inout ATTBearer<Q>) -> [UInt8] {
        var out = ATTTestSink()
        var delegate = QueueSizedDelegate<Q, _>(base: GATTNoDelegate())
        _ = ATTServer().handle(pdu: attHex(hex).span, bearer: &bearer, link: ServerLinks()[0x0040], now: 0,
                               database: &db, delegate: &delegate, response: &out)
        return out.bytes
    }

    @Test func noQueueAnswersPrepareQueueFullAndExecutesNothing() throws {
        // Queued writes offered (`.all`) but no queue: the battery level is at 0x0010.
        var db = try GATTServerFeaturesTests.database(.all)
        var bearer = ATTBearer<ATTNoPrepareQueue>()
        #expect(Self.answer("16 10 00 00 00 41", &db, bearer: &bearer) == attHex("01 16 10 00 09"))
        #expect(Self.answer("18 01", &db, bearer: &bearer) == attHex("19"))
        #expect(Self.answer("0a 10 00", &db, bearer: &bearer) == attHex("0b 50"))
    }

    @Test func boundedQueueTakesWhatFitsAndRefusesTheRest() throws {
        var db = try GATTServerFeaturesTests.database(.all)
        var bearer = ATTBearer<ATTPreparedWrites<1, 2>>()
        #expect(Self.answer("16 10 00 00 00 41 42", &db, bearer: &bearer) == attHex("17 10 00 00 00 41 42"))
        // A third octet does not fit: Prepare Queue Full, and what was queued stays queued.
        #expect(Self.answer("16 10 00 02 00 43", &db, bearer: &bearer) == attHex("01 16 10 00 09"))
        #expect(bearer.queuedWrites == 1)
        #expect(Self.answer("18 01", &db, bearer: &bearer) == attHex("19"))
        #expect(bearer.queuedWrites == 0)
        #expect(Self.answer("0a 10 00", &db, bearer: &bearer) == attHex("0b 41 42"))
    }

    @Test func linksOfAnApplicationWithoutQueueCarryNone() {
        let standard = MemoryLayout<LinkState<ATTStandardPrepareQueue, FixedBytes<247>>>.size
        let none = MemoryLayout<LinkState<ATTNoPrepareQueue, FixedBytes<247>>>.size
        #expect(standard - none >= 512 + 8 * 2 * 2)  // the octets and at least the entries' handle and offset
        #expect(MemoryLayout<LEStack<MandatoryServerApp, 2, 16, 104>>.size
                - MemoryLayout<LEStack<NoPrepareQueueApp, 2, 16, 104>>.size == 2 * (standard - none))
    }
}
