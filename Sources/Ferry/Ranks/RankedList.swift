import FerryRank

/// The live rows of one parent in order `(rank, id)`, as the server computes
/// a key from: the neighbours are read in the write's own transaction and
/// FerryRank places the new key between them.
struct RankedList {
    /// `(id, rank)` in order.
    private(set) var rows: [(id: String, rank: String)] = []

    init(rows: [(id: String, rank: String)] = []) { self.rows = rows }

    /// The stored rank of `id`, if the row is in the list.
    func rank(of id: String) -> String? { rows.first(where: { $0.id == id })?.rank }

    /// Takes a row out (a row being moved is not its own neighbour).
    mutating func remove(id: String) { rows.removeAll { $0.id == id } }

    /// Adds a row after every row whose rank sorts before or equal to `rank`.
    mutating func insert(id: String, rank: String) {
        let index = rows.firstIndex { Self.precedes(rank, $0.rank) } ?? rows.count
        rows.insert((id, rank), at: index)
    }

    /// The key for `form`.
    ///
    /// Equal ranks are legal, and no key fits between two equal ones, so
    /// `after` uses the first rank strictly greater than the neighbour's as
    /// the upper bound, and `before` the last rank strictly smaller as the
    /// lower bound: next to a run of equal ranks, the new row goes after the
    /// whole run (`after`) or before it (`before`).
    func key(for form: RankForm) throws(RankError) -> String {
        switch form {
        case .key(let key):
            try Rank.validate(key)
            return key
        case .first:
            return try Rank.first(before: rows.first?.rank)
        case .last:
            return try Rank.last(after: rows.last?.rank)
        case .after(let id):
            guard let index = rows.firstIndex(where: { $0.id == id }) else { throw Self.noNeighbour("after") }
            let lower = rows[index].rank
            let upper = rows[(index + 1)...].first(where: { Self.precedes(lower, $0.rank) })?.rank
            return try Rank.between(lower, upper)
        case .before(let id):
            guard let index = rows.firstIndex(where: { $0.id == id }) else { throw Self.noNeighbour("before") }
            let upper = rows[index].rank
            let lower = rows[..<index].last(where: { Self.precedes($0.rank, upper) })?.rank
            return try Rank.between(lower, upper)
        }
    }

    /// Bytewise order, as `COLLATE "C"` compares.
    static func precedes(_ a: String, _ b: String) -> Bool { Array(a.utf8).lexicographicallyPrecedes(Array(b.utf8)) }

    static func noNeighbour(_ side: String) -> RankError {
        RankError(reason: "rank.\(side) names no row of the same parent that the caller can see")
    }
}
