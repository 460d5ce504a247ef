import FerryPostgres

/// A row's revision: the `bigint` its `revision` column holds (1 on insert, one
/// more per update; core migration 0001). One type from the request
/// (`?revision=`, `If-Match`, `If-None-Match`) to the bind, and from the row back
/// to the ETag and problem bodies, so that no step reads it from text its own way.
struct Revision: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Never negative.
    let value: Int64

    init?(value: Int64) {
        guard value >= 0 else { return nil }
        self.value = value
    }

    /// `?revision=` and an `If-Match` tag: what `Int64` reads (a `+` sign and
    /// leading zeros allowed, no whitespace), not negative; nil otherwise. A
    /// negative tag dropped from an `If-Match` list changes no answer: no row has one.
    init?(parsing text: some StringProtocol) {
        guard let value = Int64(text) else { return nil }
        self.init(value: value)
    }

    /// An `If-None-Match` tag: only the revision exactly as Ferry writes it (`"03"`
    /// names nothing), as the weak comparison of ETags does.
    init?(canonical text: String) {
        guard let revision = Revision(parsing: text), revision.description == text else { return nil }
        self = revision
    }

    /// Decimal, as PostgreSQL writes the column.
    var description: String { String(value) }

    /// The row's ETag: `"<revision>"` (a strong tag).
    var etag: String { "\"" + String(value) + "\"" }

    static func < (lhs: Revision, rhs: Revision) -> Bool { lhs.value < rhs.value }
}

extension Revision: Decodable {
    /// A JSON number, as `row_to_json` writes the column (a `current` row in a
    /// `ferry.fail` entry); a negative or fractional one fails the decode.
    init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        guard let revision = Revision(value: try container.decode(Int64.self)) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "a revision is not negative")
        }
        self = revision
    }
}

extension PostgresRow {
    /// Column `name` as a ``Revision``; nil for NULL. Anything but a revision is
    /// a decoding error, as for any typed column.
    func revision(_ name: String) throws(PostgresError) -> Revision? {
        guard let value = try int64(name) else { return nil }
        guard let revision = Revision(value: value) else {
            throw PostgresError(kind: .decoding, message: "column \(name): \(value) is not a revision")
        }
        return revision
    }
}
