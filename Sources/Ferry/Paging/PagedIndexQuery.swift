/// The parts of one Index query that paging needs, as Index plans them from the
/// schema. Paging wraps them in its own statements, so the filters, the order, the
/// row JSON and Row Level Security are exactly Index's.
///
/// Paging needs `uuid` primary keys (`id`), which snapshots store as 16 bytes each.
struct PagedIndexQuery: Sendable {
    /// The table, schema-qualified and quoted, e.g. `"app"."terms"`; aliased `t`.
    var table: String
    /// The filters: a boolean SQL condition over `t` (`true` when there are none);
    /// `$1`…`$n` refer to ``binds``.
    var condition: String
    /// The `ORDER BY` list over `t`, ending with the `t.id` tie-break.
    var orderBy: String
    /// The values of `condition`'s parameters.
    var binds: [Bind]
    /// The JSON of row `t` as Index answers it: the tombstone when `t.is_deleted`.
    var rowJSON: String
    /// The version of row `t` (`t."revision"`, an integer), hashed with its id into
    /// the collection ETag.
    var rowVersion: String

    init(
        table: String, condition: String, orderBy: String, binds: [Bind], rowJSON: String,
        rowVersion: String = #"t."revision""#
    ) {
        self.table = table
        self.condition = condition
        self.orderBy = orderBy
        self.binds = binds
        self.rowJSON = rowJSON
        self.rowVersion = rowVersion
    }

    /// The hash of `(id, version)` whose sum over rows makes ETags: the id's
    /// 64-bit hash seeded with the version (no text conversion, so cheap enough to
    /// run over every row of a 100,000-row result).
    var versionHash: String { "uuid_hash_extended(t.id, (\(rowVersion))::bigint)" }
}
