import FerryHTTPTestSupport
import Foundation

/// A ferry-notes screen as text, read the way a person reads it: the rows of
/// the list with their sync state, and the status line's counts.
struct NotesScreen: CustomStringConvertible {
    struct Row: Equatable, CustomStringConvertible {
        let state: String
        let text: String
        var description: String { "[\(state)] \(text)" }
    }

    let text: String
    var description: String { text }

    /// The numbered rows (sets or terms), in screen order.
    var rows: [Row] {
        text.split(separator: "\n", omittingEmptySubsequences: false).compactMap { line in
            // "  1. [synced]   hola = hello"
            let trimmed = line.drop { $0 == " " }
            guard let dot = trimmed.firstIndex(of: "."), Int(trimmed[..<dot]) != nil,
                let open = trimmed.firstIndex(of: "["), let close = trimmed.firstIndex(of: "]"), open < close
            else { return nil }
            let rest = trimmed[trimmed.index(after: close)...].trimmingCharacters(in: .whitespaces)
            return Row(state: String(trimmed[trimmed.index(after: open)..<close]), text: rest)
        }
    }

    var texts: [String] { rows.map(\.text) }

    func count(_ name: String) -> Int? {
        // "... · pending 2 · rejected 0"
        guard let range = text.range(of: "\(name) ") else { return nil }
        return Int(text[range.upperBound...].prefix { $0.isNumber })
    }

    /// Every row synced and nothing waiting or refused.
    var settled: Bool {
        count("pending") == 0 && count("rejected") == 0 && rows.allSatisfy { $0.state == "synced" }
    }

    func contains(_ fragment: String) -> Bool { text.contains(fragment) }
}

/// One ferry-notes in its own tmux session.
struct NotesTerminal {
    let tmux: Tmux
    let session: String

    func type(_ line: String) throws { try tmux.type(session, line) }

    func screen() throws -> NotesScreen { NotesScreen(text: try tmux.screen(session)) }

    /// Reads the screen until `condition` holds, as a person waits for it.
    @discardableResult
    func waitFor(_ what: String, timeout: Double = 60, _ condition: (NotesScreen) -> Bool) async throws -> NotesScreen {
        var last = try screen()
        let shown = try await eventuallyAsync(within: timeout, every: 0.1) {
            last = try screen()
            return condition(last)
        }
        guard shown else { throw Tmux.Failed(description: "\(session): waited \(timeout) s for \(what); the screen:\n\(last)") }
        return last
    }

    /// Types `line`, then waits for the screen it leads to.
    @discardableResult
    func run(_ line: String, until what: String, timeout: Double = 60, _ condition: (NotesScreen) -> Bool) async throws -> NotesScreen {
        try type(line)
        return try await waitFor(what, timeout: timeout, condition)
    }
}
