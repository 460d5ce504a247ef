import FerryPostgres

/// A migration file that PostgreSQL rejected; its transaction was rolled back.
public struct MigrationFailure: Sendable, CustomStringConvertible {
    public var fileName: String
    /// Where in the file the error was detected, when PostgreSQL gave a position.
    public var location: ScriptLocation?
    /// PostgreSQL's error, with message, detail, hint and context.
    public var error: PostgresError

    /// Creates a failure, locating `error.position` in `script`.
    public init(fileName: String, script: String, error: PostgresError) {
        self.fileName = fileName
        self.location = error.position.flatMap { ScriptLocation(position: $0, in: script) }
        self.error = error
    }

    /// Creates a failure with a known (or no) location.
    public init(fileName: String, location: ScriptLocation?, error: PostgresError) {
        self.fileName = fileName
        self.location = location
        self.error = error
    }

    /// `migration 0002_x.sql failed at line 3, column 1: <message>`, then the offending
    /// line and PostgreSQL's detail, hint and context when present.
    public var description: String {
        var text = "migration \(fileName) failed"
        if let location { text += " at line \(location.line), column \(location.column)" }
        text += ": \(error.message)"
        if let sqlState = error.sqlState { text += " (SQLSTATE \(sqlState))" }
        if let location {
            let number = "\(location.line)"
            text += "\n  \(number) | \(location.lineText)"
            let pad = String(repeating: " ", count: number.count)
            let caret = String(repeating: " ", count: max(0, location.column - 1)) + "^"
            text += "\n  \(pad) | \(caret)"
        }
        if let detail = error.detail { text += "\n  detail: \(detail)" }
        if let hint = error.hint { text += "\n  hint: \(hint)" }
        if let context = error.context { text += "\n  context: \(context)" }
        text += "\n\(fileName) was rolled back; no part of it was applied."
        return text
    }
}
