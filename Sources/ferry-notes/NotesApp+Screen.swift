import FerryKit
import Foundation
import GRDB
import StudyModels

/// Drawing: a whole screen each time, from the store as it is now.
extension NotesApp {
    /// Clears the terminal and prints the screen, then the prompt. From a
    /// pipe, screens follow each other under a separator line instead, one per
    /// command: redraws of its own (a sync's progress, an event) would
    /// interleave with them and make the log depend on timing.
    func draw(onlyIfChanged: Bool = false) async {
        guard !closed, terminal || !onlyIfChanged else { return }
        draws += 1
        let mine = draws
        let text = await screen().render()
        // A later draw started while this one read the engine: it is newer.
        guard mine == draws, !closed else { return }
        if onlyIfChanged && text == lastDrawn { return }
        lastDrawn = text
        let top = terminal ? "\u{1B}[H\u{1B}[2J\u{1B}[3J" : "\n==== screen\n"
        FileHandle.standardOutput.write(Data((top + text + "\n> ").utf8))
    }

    func screen() async -> Screen {
        var screen = Screen()
        screen.user = account.user
        screen.userID = account.userID
        screen.server = account.server.absoluteString
        screen.offline = await transport.isOffline
        screen.live = live
        let status = await engine.currentStatus
        screen.reachable = status.online
        screen.stalled = status.stalled
        // Live, the engine's loop fails and recovers by itself: its status has the latest word.
        screen.lastError = live ? status.lastError : lastError
        screen.events = events
        do {
            screen.pending = try store.pendingCount()
            screen.rejected = try store.rejectedCount()
            screen.body = try body()
        } catch {
            message = "could not read the store: \(error)"
        }
        screen.message = message
        return screen
    }

    func body() throws -> Screen.Body {
        // Before the first sync the store has no tables yet: an empty list,
        // not an error.
        guard try store.schema() != nil else { return .sets([]) }
        if let id = openSet {
            guard let set = try store.fetch(StudySet.self, id: id) else {
                // Deleted here or on the server, or no longer shared.
                openSet = nil
                message = "the open set is gone (deleted, or no longer shared with you)"
                return try body()
            }
            let terms = try store.fetch(Term.self, where: Term.Columns.setID == id).map { term in
                Screen.Item(text: "\(term.word ?? "") = \(term.definition ?? "")", state: try store.state(of: term))
            }
            let collaborators = try store.fetch(SetCollaborator.self, where: SetCollaborator.Columns.setID == id).count
            return .set(title: set.title, state: try store.state(of: set), sharedWith: collaborators, terms: terms)
        }
        return .sets(
            try sets().map { set in
                let count = try store.fetch(Term.self, where: Term.Columns.setID == set.id).count
                return Screen.Item(text: "\(set.title) (\(count) terms)", state: try store.state(of: set))
            })
    }
}
