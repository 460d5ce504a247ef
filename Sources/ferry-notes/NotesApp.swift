import FerryKit
import Foundation
import StudyModels

/// The app: one signed-in user's store and engine, which set is open, and
/// what the screen says.
///
/// An actor because three things reach it at once: the lines the person
/// types, the engine's events, and its status (which, in live mode, changes
/// as other devices' edits arrive). Each command reads and writes
/// the local store only; the network is the engine's business, so a command
/// answers at once whether the server is there or not.
actor NotesApp {
    struct Account: Sendable {
        let user: String
        let userID: String
        let server: URL
        let storePath: String
    }

    enum Outcome: Sendable { case goOn, quit }

    let store: FerryStore
    let engine: SyncEngine
    let transport: OfflineTransport
    let account: Account
    /// Clear and redraw a terminal; from a pipe, print each screen after the last.
    let terminal: Bool
    /// The engine syncs by itself (continuous mode); off, only `sync` and `online` do.
    var live: Bool
    /// A command is one write: nothing to coalesce, so it goes up at once.
    static let uploadDelay: TimeInterval = 0.05
    /// The open set's id; nil shows the list of sets.
    var openSet: FerryID<StudySet>?
    var message: String?
    /// The latest events, newest last, as lines for the screen.
    var events: [String] = []
    /// The sync under way, so that a typed `sync` and `online` never run two
    /// at once (in live mode the engine runs each in its loop anyway).
    var running: Task<Void, Never>?
    /// Why the last sync failed, in words; nil once one succeeds.
    var lastError: String?
    var lastDrawn: String?
    var draws = 0
    /// Set on quit: nothing draws over the farewell.
    var closed = false

    init(store: FerryStore, engine: SyncEngine, transport: OfflineTransport, account: Account, terminal: Bool, live: Bool) {
        self.store = store
        self.engine = engine
        self.transport = transport
        self.account = account
        self.terminal = terminal
        self.live = live
    }

    /// One typed line: parsed, run against the store, then a fresh screen.
    func handle(_ line: String) async -> Outcome {
        do {
            let command = try NotesCommand.parse(line)
            if command == .quit { return .quit }
            if command != .nothing { message = nil }
            try await run(command)
        } catch let unknown as NotesCommand.Unknown {
            message = unknown.message
        } catch let refusal as Refusal {
            message = refusal.description
        } catch {
            message = "error: \(error)"
        }
        await draw()
        return .goOn
    }

    func run(_ command: NotesCommand) async throws {
        switch command {
        case .sets: openSet = nil
        case .open(let number): try open(number)
        case .newSet(let title): try newSet(title)
        case .rename(let number, let title): try rename(number, title)
        case .add(let word, let definition): try addTerm(word, definition)
        case .edit(let number, let word, let definition): try editTerm(number, word, definition)
        case .delete(let number): try openSet == nil ? deleteSet(number) : deleteTerm(number)
        case .move(let number, let position): try moveTerm(number, to: position)
        case .share(let user): try await share(with: user)
        case .offline:
            await transport.setOffline(true)
            message = "offline: edits stay here until you go online"
        case .online:
            await transport.setOffline(false)
            // What NWPathMonitor does on Apple platforms: live mode's backoff ends now.
            engine.networkBecameAvailable()
            await syncNow()
            message = syncOutcome("online")
        case .sync:
            await syncNow()
            message = syncOutcome("sync")
        case .live(let on):
            live = on
            if on { await engine.start(uploadDelay: Self.uploadDelay) } else { await engine.stop() }
            message = on ? "live: edits go up as you make them, others' arrive as they commit" : "live off: sync with `sync`"
        case .clearRejected:
            try store.clearRejected()
            message = "rejected operations forgotten"
        case .help:
            message = "numbers are the positions on screen; a term's state: synced, pending, syncing, conflict, rejected"
        case .quit, .nothing:
            break
        }
    }

    /// What the person should know on the way out: unsynced edits are kept, not lost.
    func farewell() throws -> String {
        closed = true
        let pending = try store.pendingCount()
        guard pending > 0 else { return "bye: everything is synced\n" }
        return "bye: \(pending) change(s) not synced yet; they stay in \(account.storePath) and go up next time\n"
    }
}
