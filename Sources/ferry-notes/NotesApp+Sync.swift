import FerryKit
import Foundation

/// When the app syncs, and what it tells the person about it.
extension NotesApp {
    /// One `engine.sync()`, after any sync already under way (in live mode,
    /// a round of the engine's loop). Its failure is not thrown: the screen
    /// shows it as the last error until a sync succeeds, and the outbox keeps
    /// every edit for the next try.
    ///
    /// Whoever finds the sync it waited for still recorded clears it. A waiter that
    /// left it for its starter to clear spun: awaiting a finished task does not
    /// suspend, so the starter never ran again to clear it, and the app froze (a
    /// typed `sync` and the old timer's arriving together; the tmux test caught it).
    func syncNow() async {
        while let current = running {
            await current.value
            if running == current { running = nil }
        }
        // Isolated to this actor like the method, so it records the outcome itself.
        let task = Task {
            do {
                try await engine.sync()
                lastError = nil
            } catch {
                lastError = Self.readable(error)
            }
        }
        running = task
        await task.value
        // A waiter may have cleared it already, and started the next.
        if running == task { running = nil }
    }

    func syncOutcome(_ what: String) -> String {
        lastError == nil ? "\(what): synced" : "\(what): sync failed, edits kept"
    }

    /// A sync failure in words: the status's own text is the error value's
    /// debug form (`TransportFailure(reason: ...)`), written for logs.
    static func readable(_ error: any Error) -> String {
        switch error {
        case let failure as TransportFailure: failure.reason
        case let url as URLError: "no answer from the server (\(url.localizedDescription))"
        case FerryKitError.unauthorized: "the server refused the sign-in twice; sync paused (quit and sign in again)"
        default: "\(error)"
        }
    }

    /// A status change redraws when it shows (counts, reachability, a row
    /// now syncing, and in live mode the rows another device's edit brought),
    /// and only then, so a quiet long poll never disturbs the prompt.
    func statusChanged() async {
        await draw(onlyIfChanged: true)
    }

    /// An event from the engine, as a line on screen: conflicts as they are
    /// resolved, rejections with the server's reason, rows gone from the server.
    func record(_ event: SyncEvent) async {
        let text: String
        switch event {
        case .conflict(let resource, let id, let conflicts):
            // No resolver is installed, so FerryKit's default decided: the
            // local value stays and is uploaded.
            let fields = conflicts.map { "\($0.field) kept \(Self.show($0.local)) over the server's \(Self.show($0.remote))" }
            text = "conflict on \(name(resource, id)): " + fields.joined(separator: "; ")
        case .rejected(let resource, let id, let status, let problem):
            text = "rejected \(name(resource, id)): \(status) \(Self.reason(problem))"
        case .removed(let resource, let id, let revoked, let discardedEdits, let localVersion):
            let what = Self.name(resource, localVersion) ?? "\(resource) \(id.prefix(8))"
            text =
                (revoked ? "no longer shared with you: " : "deleted on the server: ") + what
                + (discardedEdits ? " (your edits to it were discarded)" : "")
        case .stalled(let resource, let id, let attempts, _):
            text = "stalled: \(name(resource, id)) sent \(attempts) times without an answer; still queued"
        case .evicted(let stream, let id, let removed, let kept):
            text = "unsubscribed \(stream) \(id.prefix(8)): \(removed) rows left the device" + (kept > 0 ? ", \(kept) kept for your edits" : "")
        }
        // 24-hour local time: a log's order must read at a glance.
        let now = Calendar.current.dateComponents([.hour, .minute, .second], from: Date())
        let time = String(format: "%02d:%02d:%02d", now.hour ?? 0, now.minute ?? 0, now.second ?? 0)
        events.append("\(time) \(text)")
        if events.count > 6 { events.removeFirst(events.count - 6) }
        await draw(onlyIfChanged: true)
    }

    /// How a person recognises a row: a term by its word, a set by its title.
    func name(_ resource: String, _ id: String) -> String {
        Self.name(resource, (try? store.row(resource, id: id)) ?? nil) ?? "\(resource) \(id.prefix(8))"
    }

    static func name(_ resource: String, _ row: RowData?) -> String? {
        switch resource {
        case "terms": row?["word"]?.string.map { "term \"\($0)\"" }
        case "study_sets": row?["title"]?.string.map { "set \"\($0)\"" }
        case "set_collaborators": "a collaborator"
        default: nil
        }
    }

    static func show(_ value: JSONValue?) -> String {
        switch value {
        case .string(let text)?: "\"\(text)\""
        case nil, .null?: "nothing"
        case let other?: String(decoding: other.encoded(), as: UTF8.self)
        }
    }

    /// The problem+json's most readable field.
    static func reason(_ problem: Data) -> String {
        let object = (try? JSONValue.decode(problem))?.object
        return object?["detail"]?.string ?? object?["title"]?.string ?? object?["code"]?.string ?? "refused"
    }
}
