import BluetoothHost

/// What a Herald peripheral's GATT server offers centrals: the optional procedures
/// (`GATTServerFeatures`) and each link's prepare-write queue (Core 5.4 Vol 3 Part F 3.4.6.1).
///
/// The peripheral's choice, a type parameter of `HeraldPeripheral` made with the database it
/// installs its service into, never its event delegate's: observers (`SensorDelegatePair`) compose in
/// any order without changing which ATT procedures a central may use. As types, so a procedure left
/// out is a constant after specialisation and its code is not linked (`GATTServerDelegate`).
public protocol HeraldServerOffer {
    /// The optional procedures (`.all` unless said otherwise). A venue beacon can leave them all out:
    /// Herald centrals only discover, read the payload and write short signal messages.
    static var serverFeatures: GATTServerFeatures { get }
    /// Each link's prepare-write queue: the standard 8 writes / 512 octets unless said otherwise;
    /// `ATTNoPrepareQueue` when `serverFeatures` leave queued writes out.
    associatedtype PrepareQueue: ATTPrepareQueue = ATTStandardPrepareQueue
    /// Whether the server's constant GATT table may have gaps in its handles
    /// (`LEApplication.GATTHandles`): `AnyGATTHandles` unless said otherwise; a firmware image
    /// serving the builder's table says `ConsecutiveGATTHandles`.
    associatedtype GATTHandles: GATTHandleLayout = AnyGATTHandles
    /// Each link's ATT PDU buffers, and with them the largest ATT_MTU the server (and the sensor's
    /// GATT clients) agree to (`LEApplication.LinkBuffers`): 247 octets unless said otherwise. An
    /// image that serves and reads short payloads chooses fewer (the beacon's 68, the wearable's).
    associatedtype LinkBuffers: LinkBufferSizing = LinkPDUBuffers<247>
    /// The stack's command and outbound ACL queues and its ACL credit table
    /// (`LEApplication.ControlBuffers`), sized by what the image sends: `StandardControlBuffers`
    /// (384 and 1,024 octets, 16 links' credits) unless said otherwise.
    associatedtype ControlBuffers: StackControlBuffers = StandardControlBuffers
}

extension HeraldServerOffer {
    public static var serverFeatures: GATTServerFeatures { .all }
}

/// Every optional procedure and the standard prepare queue.
public enum StandardServerOffer: HeraldServerOffer {}
