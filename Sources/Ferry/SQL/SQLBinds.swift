/// The parameters of a statement assembled from fragments in several places
/// (the changes feed, a planned read): each value is bound once, here, and
/// the fragments name it by its ``SQLParameter``, never by a typed `$n`.
///
/// The numbers follow the order of binding, so two statements that bind the
/// same values through the same function (``ChangeCursor/bind(into:)``)
/// number them alike.
struct SQLBinds: Sendable, Equatable {
    /// The values, in parameter order (`$1` first).
    private(set) var values: [Bind] = []

    init() {}

    /// Binds after `values`, the parameters a fragment already numbered
    /// `$1`…`$n` (a planned condition that paging wraps).
    init(after values: [Bind]) { self.values = values }

    /// Room for `count` binds, so a request's binds take one allocation.
    init(reservingCapacity count: Int) { values.reserveCapacity(count) }

    /// Binds `value` as the next parameter; its placeholder.
    mutating func bind(_ value: Bind) -> SQLParameter {
        values.append(value)
        return SQLParameter(number: values.count)
    }

    /// The statement `sql` with these parameters.
    func statement(_ sql: String) -> PlannedStatement { PlannedStatement(sql: sql, binds: values) }
}

/// A bound parameter's placeholder: it prints as `$n`, its number in the
/// statement's ``SQLBinds``, which alone makes one. Fragments name it by
/// plain string interpolation (`"t._ferry_xid > \(xid)::xid8"`).
struct SQLParameter: Sendable, Hashable, CustomStringConvertible {
    let number: Int

    fileprivate init(number: Int) { self.number = number }

    var description: String { "$" + String(number) }
}
