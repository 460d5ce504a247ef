import Foundation

/// One thing `ferry check` found: what is wrong with which object, and the fix.
public struct SchemaFinding: Sendable, Equatable, Encodable {
    public enum Severity: String, Sendable, Encodable, Comparable {
        /// Rows leak, a write can never succeed, or a device silently stalls.
        case error
        /// Costly or surprising, not wrong: a slow plan, a column nobody can set.
        case warning

        public static func < (lhs: Severity, rhs: Severity) -> Bool { lhs == .error && rhs == .warning }
    }

    public var severity: Severity
    /// A stable name for the kind of finding, such as `no_row_level_security`.
    public var code: String
    /// The table, column or policy it is about, as SQL writes it.
    public var object: String
    /// What is wrong, in a sentence.
    public var message: String
    /// How to fix it, as SQL where that says it best.
    public var fix: String

    public init(_ severity: Severity, _ code: String, _ object: String, _ message: String, fix: String) {
        self.severity = severity
        self.code = code
        self.object = object
        self.message = message
        self.fix = fix
    }

    /// `error   app.todos: message` and, indented, `code: …` (what the docs, `--json` and the
    /// serve log call it) and `fix: …`.
    public var text: String {
        "\(severity.rawValue.padding(toLength: 8, withPad: " ", startingAt: 0))\(object): \(message)\n        code: \(code)\n        fix: \(fix)"
    }
}

extension [SchemaFinding] {
    /// The closing line: `2 errors, 1 warning in 4 synced tables`.
    public func summary(tables: Int) -> String {
        let errors = filter { $0.severity == .error }.count
        let warnings = count - errors
        return "\(errors) error\(errors == 1 ? "" : "s"), \(warnings) warning\(warnings == 1 ? "" : "s") "
            + "in \(tables) synced table\(tables == 1 ? "" : "s")"
    }
}
