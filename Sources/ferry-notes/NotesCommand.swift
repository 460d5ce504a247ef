import Foundation

/// One line typed at the prompt, understood.
///
/// Numbers are the positions shown on screen (1-based), not ids: a person
/// reads the list and types what they see. Parsing knows nothing of the
/// store, so a typo is answered before anything is touched.
enum NotesCommand: Equatable, Sendable {
    case sets
    case newSet(title: String)
    case open(Int)
    /// In a set: a term; in the list of sets: a set's title.
    case add(word: String, definition: String)
    case edit(Int, word: String, definition: String)
    case rename(Int, title: String)
    case delete(Int)
    case move(Int, to: Int)
    /// A user's name (looked up) or id.
    case share(user: String)
    case offline
    case online
    case sync
    /// Continuous mode on or off.
    case live(Bool)
    case clearRejected
    case help
    case quit
    case nothing

    struct Unknown: Error, Equatable {
        let message: String
    }

    static let usage = """
        sets · new set <title> · open <n> · rename <n> <title> · add <word> = <definition> · edit <n> <word> = <definition>
        del <n> · move <n> <m> · share <name|user-id> · offline · online · sync · live <on|off> · clear · help · quit
        """

    static func parse(_ line: String) throws(Unknown) -> NotesCommand {
        let text = line.trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty else { return .nothing }
        let (verb, rest) = split(text)
        switch verb.lowercased() {
        case "sets", "back", "ls": return .sets
        case "new":
            let (kind, title) = split(rest)
            // "new set Spanish", and "new Spanish" for the impatient.
            let name = kind.lowercased() == "set" ? title : rest
            guard !name.isEmpty else { throw Unknown(message: "new set <title>") }
            return .newSet(title: name)
        case "open": return .open(try number(rest, usage: "open <n>"))
        case "rename":
            let (n, title) = split(rest)
            guard !title.isEmpty else { throw Unknown(message: "rename <n> <title>") }
            return .rename(try number(n, usage: "rename <n> <title>"), title: title)
        case "add":
            let (word, definition) = try pair(rest, usage: "add <word> = <definition>")
            return .add(word: word, definition: definition)
        case "edit":
            let (n, body) = split(rest)
            let (word, definition) = try pair(body, usage: "edit <n> <word> = <definition>")
            return .edit(try number(n, usage: "edit <n> <word> = <definition>"), word: word, definition: definition)
        case "del", "delete", "rm": return .delete(try number(rest, usage: "del <n>"))
        case "move", "mv":
            let (from, to) = split(rest)
            return .move(try number(from, usage: "move <n> <m>"), to: try number(to, usage: "move <n> <m>"))
        case "share":
            guard !rest.isEmpty, !rest.contains(" ") else {
                throw Unknown(message: "share <name|user-id> (the other user's exact name, or their id)")
            }
            // Not lowercased: user names are matched exactly, case included.
            return .share(user: rest)
        case "offline": return .offline
        case "online": return .online
        case "sync", "s": return .sync
        case "live":
            switch rest.lowercased() {
            case "on", "": return .live(true)
            case "off": return .live(false)
            default: throw Unknown(message: "live <on|off>")
            }
        case "clear": return .clearRejected
        case "help", "?": return .help
        case "quit", "exit", "q": return .quit
        default: throw Unknown(message: "unknown command \"\(verb)\"; type help")
        }
    }

    /// The first word and the rest, both trimmed.
    private static func split(_ text: String) -> (String, String) {
        guard let space = text.firstIndex(of: " ") else { return (text, "") }
        return (String(text[..<space]), text[space...].trimmingCharacters(in: .whitespaces))
    }

    /// `word = definition`; either side may hold spaces, the first `=` divides.
    private static func pair(_ text: String, usage: String) throws(Unknown) -> (String, String) {
        guard let equals = text.firstIndex(of: "=") else { throw Unknown(message: usage) }
        let word = text[..<equals].trimmingCharacters(in: .whitespaces)
        let definition = text[text.index(after: equals)...].trimmingCharacters(in: .whitespaces)
        guard !word.isEmpty else { throw Unknown(message: usage) }
        return (word, definition)
    }

    private static func number(_ text: String, usage: String) throws(Unknown) -> Int {
        guard let value = Int(text), value > 0 else { throw Unknown(message: usage) }
        return value
    }
}
