import FerryHTTP

/// The `stream` query parameter (`<stream name>:<row id>`) of the feed and of
/// the console's replay of it, exact for the app's streams: a value the schema
/// admits names a declared stream with an id of its root's type, which the
/// server takes (an id no row has, or one the caller may not read, is an
/// empty page); any other value is refused with 400 (`SyncStream.named`). A
/// pattern wider than that promised schemathesis a 2xx the server cannot give.
extension OpenAPIDocument {
    /// The parameter, or nil when the app declares no stream (then the server
    /// takes none, and the document offers none).
    func streamParameter(_ description: String) -> JSONValue? {
        guard !streams.isEmpty else { return nil }
        let alternatives = streams.sorted { $0.name < $1.name }.map { stream in
            "\(stream.name):(?:\(Self.idPattern(catalog[stream.root]?.idKind ?? .uuid)))"
        }
        return Self.query(
            "stream",
            Self.type("string", ("pattern", .string("^(?:" + alternatives.joined(separator: "|") + ")$")), ("maxLength", 264)),
            description)
    }

    /// What `ValueKind.accepts(id:)` takes, as a regular expression; for an
    /// integer id, only as many digits as every value of its type has, so a
    /// value the pattern admits is never out of range.
    static func idPattern(_ kind: ValueKind) -> String {
        switch kind {
        case .uuid:
            return "[0-9a-fA-F]{32}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
        case .integer(let min, let max):
            let digits = Swift.max(1, String(max).count - 1)
            return (min < 0 ? "-?" : "") + "[0-9]{1,\(digits)}"
        default:
            return "[^\\s]{1,200}"
        }
    }
}
