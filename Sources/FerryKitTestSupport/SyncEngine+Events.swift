import FerryKit

extension SyncEngine {
    /// The next `count` events from `events`. No deadline of its own: a loaded run's
    /// starved cooperative pool can keep a reader from running for longer than any
    /// fixed window, so a missing event is ended by the caller's suite time limit.
    public func nextEvents(_ count: Int) async -> [SyncEvent] {
        var seen: [SyncEvent] = []
        for await event in events {
            seen.append(event)
            if seen.count == count { break }
        }
        return seen
    }
}
