// The deadlines of one event loop's connections, earliest first, so that the loop
// sleeps until the first is due and then looks only at connections whose time has
// come, however many others are open.

/// A binary min-heap of deadlines keyed by descriptor: one entry per key at
/// most, found through `positions`, so that a key's deadline is read in O(1)
/// and is moved or removed in O(log n).
///
/// Descriptors are small, dense integers (the kernel hands out the lowest free
/// one), so the positions are an array indexed by descriptor rather than a
/// dictionary. No I/O and no clock: the loop passes the time in.
struct DeadlineQueue {
    private struct Entry {
        var at: Double
        var key: Int32
    }

    private var heap: [Entry] = []
    /// `positions[key]`: the key's index in `heap`, or -1 when it has no deadline.
    private var positions: [Int] = []

    /// How many keys have a deadline.
    var count: Int { heap.count }

    /// The earliest deadline, nil when there is none.
    var earliest: Double? { heap.first?.at }

    /// The key's deadline, nil when it has none.
    func deadline(of key: Int32) -> Double? {
        let index = position(key)
        return index < 0 ? nil : heap[index].at
    }

    /// Sets the key's deadline, earlier or later than before, or its first.
    mutating func schedule(_ key: Int32, at deadline: Double) {
        let index = position(key)
        if index < 0 {
            if Int(key) >= positions.count {
                positions.append(contentsOf: repeatElement(-1, count: Int(key) + 1 - positions.count))
            }
            heap.append(Entry(at: deadline, key: key))
            positions[Int(key)] = heap.count - 1
            siftUp(heap.count - 1)
        } else {
            let earlier = deadline < heap[index].at
            heap[index].at = deadline
            if earlier { siftUp(index) } else { siftDown(index) }
        }
    }

    /// Drops the key's deadline, if it has one.
    mutating func remove(_ key: Int32) {
        let index = position(key)
        guard index >= 0 else { return }
        positions[Int(key)] = -1
        let last = heap.removeLast()
        guard index < heap.count else { return }
        // The last entry fills the hole and moves whichever way it must.
        heap[index] = last
        positions[Int(last.key)] = index
        siftUp(index)
        siftDown(positions[Int(last.key)])
    }

    /// Removes and returns the key with the earliest deadline if that deadline
    /// is at or before `now`; nil when nothing is due.
    mutating func popDue(now: Double) -> Int32? {
        guard let first = heap.first, first.at <= now else { return nil }
        remove(first.key)
        return first.key
    }

    private func position(_ key: Int32) -> Int {
        key >= 0 && Int(key) < positions.count ? positions[Int(key)] : -1
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        let entry = heap[child]
        while child > 0 {
            let parent = (child - 1) / 2
            guard entry.at < heap[parent].at else { break }
            heap[child] = heap[parent]
            positions[Int(heap[child].key)] = child
            child = parent
        }
        heap[child] = entry
        positions[Int(entry.key)] = child
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        let entry = heap[parent]
        while true {
            var child = 2 * parent + 1
            guard child < heap.count else { break }
            if child + 1 < heap.count && heap[child + 1].at < heap[child].at { child += 1 }
            guard heap[child].at < entry.at else { break }
            heap[parent] = heap[child]
            positions[Int(heap[parent].key)] = parent
            parent = child
        }
        heap[parent] = entry
        positions[Int(entry.key)] = parent
    }
}
