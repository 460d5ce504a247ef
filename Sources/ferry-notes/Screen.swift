import FerryKit

/// Everything one screen shows, read from the store and the engine at one
/// moment; rendering it is a pure function, so the same state always prints
/// the same text (a redraw that changes nothing is skipped, and a test can
/// compare two terminals line by line).
struct Screen: Equatable, Sendable {
    struct Item: Equatable, Sendable {
        let text: String
        let state: FerryStore.RowState
    }

    enum Body: Equatable, Sendable {
        case sets([Item])
        case set(title: String, state: FerryStore.RowState, sharedWith: Int, terms: [Item])
    }

    var user = ""
    var userID = ""
    var server = ""
    var offline = false
    /// The engine syncs by itself (``NotesApp/live``).
    var live = false
    /// Whether the last sync reached the server. Not the sync's phase: that
    /// changes several times a second during every sync, and each change would
    /// redraw the screen under whatever the person is typing.
    var reachable = false
    var pending = 0
    var rejected = 0
    var stalled = 0
    var lastError: String?
    var body = Body.sets([])
    var events: [String] = []
    var message: String?

    /// The words a person reads for a row's state: FerryKit's `dirty` is
    /// "pending" here, as in the counts above it.
    static func label(_ state: FerryStore.RowState) -> String {
        switch state {
        case .synced: "synced"
        case .dirty: "pending"
        case .syncing: "syncing"
        case .conflict: "conflict"
        case .rejected: "rejected"
        }
    }

    func render() -> String {
        var lines: [String] = []
        lines.append("ferry-notes · \(user) @ \(server) · your id: \(userID)")
        let mode = offline ? "OFFLINE" : "online"
        let auto = live ? "live" : "sync by hand"
        let server = offline ? "-" : (reachable ? "reachable" : "not reached yet")
        lines.append(
            "mode: \(mode) · \(auto) · server: \(server) · pending \(pending) · rejected \(rejected)"
                + (stalled > 0 ? " · stalled \(stalled)" : ""))
        lines.append("last error: \(lastError ?? "none")")
        lines.append(String(repeating: "-", count: 72))
        switch body {
        case .sets(let sets):
            lines.append("Study sets (\(sets.count))")
            if sets.isEmpty { lines.append("  (none yet: new set <title>)") }
            for (index, set) in sets.enumerated() { lines.append(Self.line(index + 1, set)) }
        case .set(let title, let state, let sharedWith, let terms):
            let shared = sharedWith > 0 ? " · shared with \(sharedWith)" : ""
            lines.append("Set: \(title) [\(Self.label(state))] · \(terms.count) terms\(shared) · (sets: back to the list)")
            if terms.isEmpty { lines.append("  (no terms yet: add <word> = <definition>)") }
            for (index, term) in terms.enumerated() { lines.append(Self.line(index + 1, term)) }
        }
        lines.append(String(repeating: "-", count: 72))
        lines.append("events (conflicts, rejections, removals):" + (events.isEmpty ? " none" : ""))
        for event in events { lines.append("  " + event) }
        lines.append("note: \(message ?? "-")")
        lines.append(NotesCommand.usage)
        return lines.joined(separator: "\n")
    }

    private static func line(_ number: Int, _ item: Item) -> String {
        let label = "[" + label(item.state) + "]"
        let padded = label + String(repeating: " ", count: max(0, 10 - label.count))
        let index = String(number)
        return String(repeating: " ", count: max(0, 3 - index.count)) + index + ". " + padded + " " + item.text
    }
}
