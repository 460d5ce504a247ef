/// A place in a script: 1-based line and column, as an editor shows them.
public struct ScriptLocation: Sendable, Equatable {
    /// 1-based line number; lines end at `\n` (a preceding `\r` belongs to the line).
    public var line: Int
    /// 1-based column, in Unicode scalars.
    public var column: Int
    /// The text of that line, without its line terminator.
    public var lineText: String

    public init(line: Int, column: Int, lineText: String) {
        self.line = line
        self.column = column
        self.lineText = lineText
    }

    /// The location of PostgreSQL's error position in `script`.
    ///
    /// PostgreSQL's `position` is a 1-based count of *characters* in the statement text,
    /// where a character is one code point of the server encoding. For UTF-8 text that is
    /// a Unicode scalar, not a Swift `Character` (é written as e + U+0301 is two) and not
    /// a byte. A position just past the end ("syntax error at end of input") maps to the
    /// end of the line before the final newline. Returns nil for a position outside the script.
    public init?(position: Int, in script: String) {
        guard position >= 1 else { return nil }
        var line = 1
        var column = 1
        var lineStart = script.unicodeScalars.startIndex
        var index = script.unicodeScalars.startIndex
        var remaining = position - 1
        while remaining > 0 {
            guard index < script.unicodeScalars.endIndex else { return nil }
            let scalar = script.unicodeScalars[index]
            index = script.unicodeScalars.index(after: index)
            remaining -= 1
            if scalar == "\n" {
                line += 1
                column = 1
                lineStart = index
            } else {
                column += 1
            }
        }
        if index == script.unicodeScalars.endIndex, column == 1, line > 1 {
            // Past a final newline: point at the end of the line before it instead.
            self.init(position: position - 1, in: script)
            return
        }
        let lineEnd = script.unicodeScalars[lineStart...].firstIndex(of: "\n") ?? script.unicodeScalars.endIndex
        var text = String(script.unicodeScalars[lineStart..<lineEnd])
        if text.hasSuffix("\r") { text.removeLast() }
        self.init(line: line, column: column, lineText: text)
    }
}
