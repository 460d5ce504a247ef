/// Column names of one result, shared by all its rows, with a name-to-position map.
/// Immutable after creation, hence Sendable.
///
/// Most results Ferry reads have a handful of columns and are read by position, so
/// the map is only built for wide results; narrow ones look names up by a scan
/// (building the dictionary was a measurable share of a GET's CPU).
final class PostgresColumnIndex: Sendable {
    let names: [String]
    private let positions: [String: Int]?

    init(_ names: [String]) {
        self.names = names
        guard names.count > 16 else {
            positions = nil
            return
        }
        var positions: [String: Int] = [:]
        // The first column wins when a name repeats, as in `SELECT a.id, b.id`.
        for (position, name) in names.enumerated() where positions[name] == nil {
            positions[name] = position
        }
        self.positions = positions
    }

    /// The position of the first column called `name`.
    func position(of name: String) -> Int? {
        if let positions { return positions[name] }
        return names.firstIndex(of: name)
    }
}

/// One row of a result, as PostgreSQL text-format values.
///
/// The subscripts never trap: an unknown column or an out-of-range index reads as nil, like
/// NULL. Use the typed accessors (`int`, `string`…) to tell a missing column from a NULL.
public struct PostgresRow: Sendable {
    let index: PostgresColumnIndex
    let values: [String?]

    /// Creates a row by hand (mostly useful in tests of higher layers).
    public init(columns: [String], values: [String?]) {
        self.init(index: PostgresColumnIndex(columns), values: values)
    }

    init(index: PostgresColumnIndex, values: [String?]) {
        self.index = index
        self.values = values
    }

    /// The column names of this row.
    public var columns: [String] { index.names }
    /// The number of columns.
    public var count: Int { values.count }

    /// The text value at `index`; nil for NULL or an out-of-range index.
    public subscript(_ position: Int) -> String? {
        values.indices.contains(position) ? values[position] : nil
    }

    /// The text value of the first column called `name`; nil for NULL or an unknown name.
    public subscript(_ name: String) -> String? {
        index.position(of: name).flatMap { self[$0] }
    }
}
