/// The per-connection prepared-statement cache's key: the SQL text, hashed by its
/// length and its first and last bytes rather than all of it.
///
/// Every pipelined statement is looked up in that cache, and Ferry's statements run
/// to hundreds of bytes; hashing all of them was a visible share of a GET's CPU.
/// Equality still compares the whole text, so two statements that share a hash
/// only cost a longer probe, never a wrong statement.
struct PreparedStatementKey: Hashable {
    /// How many leading and trailing bytes go into the hash.
    static let hashedEdge = 48

    let sql: String

    static func == (lhs: PreparedStatementKey, rhs: PreparedStatementKey) -> Bool { lhs.sql == rhs.sql }

    func hash(into hasher: inout Hasher) {
        var sql = sql
        sql.withUTF8 { utf8 in
            hasher.combine(utf8.count)
            guard utf8.count > 2 * Self.hashedEdge else {
                hasher.combine(bytes: UnsafeRawBufferPointer(utf8))
                return
            }
            let raw = UnsafeRawBufferPointer(utf8)
            hasher.combine(bytes: UnsafeRawBufferPointer(rebasing: raw.prefix(Self.hashedEdge)))
            hasher.combine(bytes: UnsafeRawBufferPointer(rebasing: raw.suffix(Self.hashedEdge)))
        }
    }
}
