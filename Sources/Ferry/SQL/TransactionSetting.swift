// The transaction settings through which the server tells the core
// migrations' SQL what it may read or must do (`set_config(name, value,
// true)`, so each ends with its transaction): spelled once, here.

/// A setting the server writes in a caller's transaction for the rules' SQL to read.
enum TransactionSetting: String, Sendable {
    /// `on` around a GET's or an Index's statements and in a subscription's
    /// transaction: public rows (`ferry.sync_public`, core 0025) are readable.
    case publicReads = "ferry.public_reads"
    /// The id of a subscription's root row, which the stream's paths read (core 0025).
    case streamKey = "ferry.stream_key"
    /// The caller's user id, which Row Level Security reads (`ferry.current_user_id()`).
    case userID = "ferry.user_id"
    /// A verified JWT's claims (`ferry.claims()`, core 0016).
    case claims = "ferry.claims"
    /// The caller's user id and claims, kept while a public page reads as no
    /// user (ChangesPlan+PublicView.swift), to be set back when it cannot.
    case streamCaller = "ferry.stream_caller"
    case streamClaims = "ferry.stream_claims"
    /// `collect`: the sync triggers collect their live hints instead of notifying (core 0028).
    case hintMode = "ferry.hint_mode"
    /// The hints collected so far, one a line (core 0028).
    case hints = "ferry.hints"
    /// The table's oid and the row's id that Ferry's one-row UPDATE is writing, set in
    /// its SET list: that row's update trigger then leaves its hints to Ferry (``RowHints``,
    /// functions/live.sql's `ferry.sync_row_hints_source`).
    case made = "ferry.made"

    /// `set_config` of this setting to `value` (SQL: a literal or a `$n`), for the transaction.
    func set(_ value: String) -> String { "pg_catalog.set_config('\(rawValue)', \(value), true)" }

    /// This setting's value in SQL: an error when unset unless `missingOK`.
    func current(missingOK: Bool = false) -> String {
        missingOK ? "pg_catalog.current_setting('\(rawValue)', true)" : "current_setting('\(rawValue)')"
    }
}
