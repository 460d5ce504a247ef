import Foundation

/// What a stream's restart after 410 `cursor_expired` removes when its new
/// download is done (docs/API.md, "Delta sync"): the default stream's initial
/// sync again, or a subscription's stream from its beginning. A row the server
/// deleted (or stopped showing) before the new cursor is in no page of the new
/// download and in no feed page after it: only this sweep can tell the store.
/// Pure, so FerryKit and FerryWeb run it on the same cases
/// (`clients/conformance/restarts.json`).
enum RestartSweep {
    struct Decision: Equatable, Sendable {
        /// Rows that leave the store, each with a `removed` event (sorted).
        var remove: [RowKey] = []
        /// Rows that stay the stream's (sorted): brought again, or edits waiting.
        var keep: [RowKey] = []
    }

    /// `held`: the rows the stream held when it started over (for the default
    /// stream, the store's rows of the resources it listed). `brought`: the rows a
    /// page of the new download brought. `elsewhere`: rows another source holds
    /// (another subscription; for a subscription, the default stream too). `pending`:
    /// rows with edits waiting for upload (not refused). `exists`: rows the store has.
    ///
    /// In this order: a row the store no longer has only leaves the stream's list
    /// (no event); a row brought again stays the stream's; one another source
    /// holds stays in the store but leaves the stream's list (that source decides
    /// later); one with edits waiting stays, still the stream's (its upload meets
    /// what the server has); the rest leaves the store.
    static func decide(
        held: Set<RowKey>, brought: Set<RowKey>, elsewhere: Set<RowKey>, pending: Set<RowKey>, exists: Set<RowKey>
    ) -> Decision {
        var out = Decision()
        for row in held {
            if !exists.contains(row) {
                continue
            } else if brought.contains(row) {
                out.keep.append(row)
            } else if elsewhere.contains(row) {
                continue
            } else if pending.contains(row) {
                out.keep.append(row)
            } else {
                out.remove.append(row)
            }
        }
        let order = { (a: RowKey, b: RowKey) in (a.resource, a.id) < (b.resource, b.id) }
        out.remove.sort(by: order)
        out.keep.sort(by: order)
        return out
    }
}
