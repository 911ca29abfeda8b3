/// Fixed-capacity storage for `ScanSummary`: each report costs O(1) and nothing grows with the
/// length of a scan (issue 36, item 8).

/// The latest `capacity` values, oldest overwritten first. Storage grows (doubling) up to
/// `capacity` and never beyond, so an advertiser heard a few times costs a few entries.
struct Ring<Element> {
    let capacity: Int
    private(set) var storage: [Element] = []
    /// Index of the oldest value once the ring is full.
    private var oldest = 0

    init(capacity: Int) { self.capacity = max(1, capacity) }

    var count: Int { storage.count }

    mutating func append(_ value: Element) {
        if storage.count < capacity {
            if storage.count == storage.capacity { storage.reserveCapacity(Swift.min(capacity, Swift.max(8, storage.count * 2))) }
            storage.append(value)
        } else {
            storage[oldest] = value
            oldest = oldest + 1 == capacity ? 0 : oldest + 1
        }
    }

    /// Oldest first.
    var elements: [Element] { Array(storage[oldest...]) + storage[..<oldest] }
}

/// Slots of tracks ordered by when each was last heard: touching a slot makes it the most recent,
/// and the least recent is the one to give up when the table is full. A doubly linked list through
/// the slot indices, so both are O(1).
struct RecencyList {
    private var newer: [Int] = []
    private var older: [Int] = []
    /// Most and least recently heard slots; -1 when empty.
    private(set) var newest = -1
    private(set) var oldest = -1

    /// Adds slot `slot` (== the number of slots so far) as the newest.
    mutating func appendNewest(_ slot: Int) {
        precondition(slot == newer.count)
        newer.append(-1)
        older.append(-1)
        link(slot)
    }

    mutating func touch(_ slot: Int) {
        guard slot != newest else { return }
        unlink(slot)
        link(slot)
    }

    private mutating func link(_ slot: Int) {
        older[slot] = newest
        newer[slot] = -1
        if newest >= 0 { newer[newest] = slot }
        newest = slot
        if oldest < 0 { oldest = slot }
    }

    private mutating func unlink(_ slot: Int) {
        let n = newer[slot], o = older[slot]
        if n >= 0 { older[n] = o } else { newest = o }
        if o >= 0 { newer[o] = n } else { oldest = n }
    }
}
