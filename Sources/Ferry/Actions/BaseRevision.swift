/// A single write's base revision (a PATCH or PUT body's `revision`, a DELETE's
/// `?revision=`), when the server read it itself: ``FastUpdateSQL`` then binds it
/// instead of reading it from the item's JSON in SQL.
///
/// Why: reading it in SQL is an expression of ~18 functions and operators, written
/// twice in the statement, and PostgreSQL sets up (and checks EXECUTE on) every one
/// of them in every statement: a sizeable share of a one-row PATCH's work
/// (bench/feed/README.md, "stop 17").
enum BaseRevision: Sendable, Equatable {
    /// Not read here (a body ``FieldPrecheck`` could not vouch for): the SQL reads it.
    case unread
    /// The body has no `revision` (a DELETE no `?revision=`).
    case absent
    case given(Revision)

    /// The base revision of a body whose members passed ``FieldPrecheck``: the last
    /// `revision` member, as jsonb keeps the last of a key given twice.
    init(_ members: ObjectMembers, in bytes: [UInt8]) {
        guard let member = members.last(named: "revision", in: bytes) else {
            self = .absent
            return
        }
        // The precheck took only plain digits in 0...Int64.max; anything else is left to the SQL.
        guard case .number(let range) = member.value, let revision = Revision(parsing: String(decoding: bytes[range], as: UTF8.self))
        else {
            self = .unread
            return
        }
        self = .given(revision)
    }

    /// The value bound for it: NULL when absent; nil when it is not bound at all.
    var bind: Bind? {
        switch self {
        case .unread: nil
        case .absent: Bind.null
        case .given(let revision): Bind.int(revision.value)
        }
    }
}
