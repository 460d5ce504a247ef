import Foundation

/// Hides passwords in PostgreSQL connection strings before they are printed or logged.
public enum DatabaseURLRedaction {
    /// `url` with every password replaced by `***`.
    ///
    /// Handles the URL form (`postgresql://user:secret@host/db`, and `password=` in its
    /// query) and the key/value conninfo form (`host=h password='se cret'`).
    public static func redacted(_ url: String) -> String {
        let trimmed = url.drop { $0 == " " }
        if trimmed.hasPrefix("postgresql://") || trimmed.hasPrefix("postgres://") {
            return redactedURL(url)
        }
        return redactedConninfo(url)
    }

    private static func redactedURL(_ url: String) -> String {
        guard let schemeEnd = url.range(of: "://") else { return url }
        var result = String(url[..<schemeEnd.upperBound])
        var rest = url[schemeEnd.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        // The last "@" ends the user info; a password may itself contain an unescaped "@".
        if let at = authority.lastIndex(of: "@") {
            let userInfo = authority[..<at]
            if let colon = userInfo.firstIndex(of: ":") {
                result += userInfo[..<colon] + ":***"
            } else {
                result += userInfo
            }
            result += authority[at...]
        } else {
            result += authority
        }
        rest = rest[authorityEnd...]
        guard let question = rest.firstIndex(of: "?") else { return result + rest }
        result += rest[...question]
        let pairs = rest[rest.index(after: question)...].split(separator: "&", omittingEmptySubsequences: false)
        result += pairs.map { pair in
            pair.lowercased().hasPrefix("password=") ? "password=***" : String(pair)
        }.joined(separator: "&")
        return result
    }

    private static func redactedConninfo(_ conninfo: String) -> String {
        var result = ""
        var index = conninfo.startIndex
        while let match = conninfo[index...].range(of: "password", options: []) {
            result += conninfo[index..<match.upperBound]
            var cursor = match.upperBound
            while cursor < conninfo.endIndex, conninfo[cursor] == " " { result.append(" "); cursor = conninfo.index(after: cursor) }
            guard cursor < conninfo.endIndex, conninfo[cursor] == "=" else { index = cursor; continue }
            result += "="
            cursor = conninfo.index(after: cursor)
            while cursor < conninfo.endIndex, conninfo[cursor] == " " { cursor = conninfo.index(after: cursor) }
            cursor = endOfValue(in: conninfo, from: cursor)
            result += "***"
            index = cursor
        }
        return result + conninfo[index...]
    }

    /// The index just past a conninfo value: quoted with `'` (with `\` escapes) or bare.
    private static func endOfValue(in text: String, from start: String.Index) -> String.Index {
        var cursor = start
        guard cursor < text.endIndex else { return cursor }
        if text[cursor] == "'" {
            cursor = text.index(after: cursor)
            while cursor < text.endIndex, text[cursor] != "'" {
                if text[cursor] == "\\" { cursor = text.index(after: cursor) }
                if cursor < text.endIndex { cursor = text.index(after: cursor) }
            }
            return cursor < text.endIndex ? text.index(after: cursor) : cursor
        }
        while cursor < text.endIndex, text[cursor] != " " { cursor = text.index(after: cursor) }
        return cursor
    }
}
