/// Finds top-level statements that begin or end a transaction (`BEGIN`, `COMMIT`, `END`,
/// `ROLLBACK`, `ABORT`, `START TRANSACTION`) in a migration script.
///
/// Such a statement would end the transaction `ferry migrate` runs the file in: the rest
/// of the file would run outside it, and the file would not be recorded. The scan skips
/// comments, quoted strings and identifiers and dollar-quoted bodies (so PL/pgSQL `BEGIN`
/// blocks are ignored), and treats the `;`s inside a SQL-standard `BEGIN ATOMIC … END`
/// body as part of one statement, as psql does.
struct TransactionControlScanner {
    /// A transaction control statement: its leading keyword(s) and 1-based line.
    struct Finding: Equatable {
        var statement: String
        var line: Int
    }

    private let scalars: [Unicode.Scalar]
    private var index = 0
    private var line = 1

    /// The first transaction control statement in `script`, if any.
    static func firstFinding(in script: String) -> Finding? {
        var scanner = TransactionControlScanner(scalars: Array(script.unicodeScalars))
        return scanner.scan()
    }

    private init(scalars: [Unicode.Scalar]) {
        self.scalars = scalars
    }

    private mutating func scan() -> Finding? {
        var words: [(word: String, line: Int)] = []  // the current statement's leading words
        var atomicDepth = 0
        while index < scalars.count {
            let scalar = scalars[index]
            switch scalar {
            case "\n":
                line += 1
                index += 1
            case "-" where peek(1) == "-":
                while index < scalars.count, scalars[index] != "\n" { index += 1 }
            case "/" where peek(1) == "*":
                skipBlockComment()
            case "'":
                skipQuoted("'", backslashEscapes: false)
            case "\"":
                skipQuoted("\"", backslashEscapes: false)
            case "$" where dollarTag() != nil:
                skipDollarQuoted(tag: dollarTag()!)
            case "(", ")":
                parenDepth = max(0, parenDepth + (scalar == "(" ? 1 : -1))
                index += 1
                previousWord = nil
            case ";":
                index += 1
                // A rule's action list `DO (INSERT …; UPDATE …)` has ";" inside parentheses.
                if atomicDepth == 0, parenDepth == 0 {
                    if let finding = Self.finding(words) { return finding }
                    words = []
                }
            case _ where Self.isWordStart(scalar):
                let start = line
                let word = readWord()
                // E'...' strings take backslash escapes.
                if word == "E", index < scalars.count, scalars[index] == "'" {
                    skipQuoted("'", backslashEscapes: true)
                    continue
                }
                if words.count < 2 { words.append((word, start)) }
                if word == "ATOMIC", previousWord == "BEGIN" {
                    atomicDepth += 1
                } else if atomicDepth > 0, word == "CASE" {
                    atomicDepth += 1
                } else if atomicDepth > 0, word == "END" {
                    atomicDepth -= 1
                }
                previousWord = word
            default:
                index += 1
                if !scalar.properties.isWhitespace { previousWord = nil }
            }
        }
        return Self.finding(words)
    }

    private var previousWord: String?
    private var parenDepth = 0

    /// A finding when the statement's leading words are transaction control.
    private static func finding(_ words: [(word: String, line: Int)]) -> Finding? {
        guard let first = words.first else { return nil }
        let second = words.count > 1 ? words[1].word : nil
        switch first.word {
        case "BEGIN", "COMMIT", "END", "ABORT":
            return Finding(statement: first.word, line: first.line)
        case "ROLLBACK" where second != "TO":
            return Finding(statement: first.word, line: first.line)
        case "START" where second == "TRANSACTION":
            return Finding(statement: "START TRANSACTION", line: first.line)
        default:
            return nil
        }
    }

    private func peek(_ offset: Int) -> Unicode.Scalar? {
        index + offset < scalars.count ? scalars[index + offset] : nil
    }

    private static func isWordStart(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "_" || scalar.properties.isAlphabetic
    }

    private static func isWordPart(_ scalar: Unicode.Scalar) -> Bool {
        isWordStart(scalar) || ("0"..."9").contains(scalar) || scalar == "$"
    }

    /// Reads an unquoted word, upper-cased (SQL keywords are case-insensitive).
    private mutating func readWord() -> String {
        var word = String.UnicodeScalarView()
        while index < scalars.count, Self.isWordPart(scalars[index]) {
            word.append(scalars[index])
            index += 1
        }
        return String(word).uppercased()
    }

    private mutating func skipBlockComment() {
        var depth = 0
        while index < scalars.count {
            if scalars[index] == "/", peek(1) == "*" {
                depth += 1
                index += 2
            } else if scalars[index] == "*", peek(1) == "/" {
                depth -= 1
                index += 2
                if depth == 0 { return }
            } else {
                if scalars[index] == "\n" { line += 1 }
                index += 1
            }
        }
    }

    /// Skips a quoted string or identifier; a doubled quote is an escaped quote.
    private mutating func skipQuoted(_ quote: Unicode.Scalar, backslashEscapes: Bool) {
        index += 1
        while index < scalars.count {
            let scalar = scalars[index]
            if scalar == "\n" { line += 1 }
            if backslashEscapes, scalar == "\\" {
                if peek(1) == "\n" { line += 1 }
                index += 2
                continue
            }
            index += 1
            if scalar == quote {
                guard index < scalars.count, scalars[index] == quote else { return }
                index += 1
            }
        }
    }

    /// The `$tag$` opening at `index` (tag possibly empty), or nil for `$1` and the like.
    private func dollarTag() -> [Unicode.Scalar]? {
        var cursor = index + 1
        var tag: [Unicode.Scalar] = []
        while cursor < scalars.count, scalars[cursor] != "$" {
            let scalar = scalars[cursor]
            let allowed = tag.isEmpty ? Self.isWordStart(scalar) : (Self.isWordStart(scalar) || ("0"..."9").contains(scalar))
            guard allowed else { return nil }
            tag.append(scalar)
            cursor += 1
        }
        return cursor < scalars.count ? tag : nil
    }

    private mutating func skipDollarQuoted(tag: [Unicode.Scalar]) {
        let delimiter: [Unicode.Scalar] = ["$"] + tag + ["$"]
        index += delimiter.count
        while index < scalars.count {
            if scalars[index] == "$", index + delimiter.count <= scalars.count,
                Array(scalars[index..<(index + delimiter.count)]) == delimiter
            {
                index += delimiter.count
                return
            }
            if scalars[index] == "\n" { line += 1 }
            index += 1
        }
    }
}
