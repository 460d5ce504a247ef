/// The parameters of a write statement (``CreateSQL``, ``UpdateSQL``,
/// ``FastUpdateSQL``, ``FieldValidation``'s checks), bound in one order here.
///
/// A plan's SQL text is built once per shape and cached (``PlanCache``); it
/// names the parameters by ``placeholders``. Each request binds its values
/// through the same initializer, so the text's numbers and the binds' order
/// are one. `ferry.write_items` (migrations/functions/writes.sql) runs a bulk
/// write's text with the same four values: the items, then NULL, NULL, false.
struct WriteParameters: Sendable {
    /// The JSON array of items (``SQL/itemRows(_:oneItem:)``).
    let items: SQLParameter
    /// The path id of a single write; NULL in bulk, where each item names its `id`.
    let pathID: SQLParameter
    /// The revisions `If-Match` lists (`bigint[]`); NULL without `If-Match`.
    let revisions: SQLParameter
    /// True for `If-Match: *`.
    let anyRevision: SQLParameter
    /// The values, in parameter order.
    let binds: [Bind]

    init(items: String, pathID: String?, revisions: [Revision]?, anyRevision: Bool) {
        var binds = SQLBinds(reservingCapacity: 4)
        self.items = binds.bind(.json(items))
        self.pathID = binds.bind(pathID.map { .text($0) } ?? .null)
        self.revisions = binds.bind(.revisions(revisions))
        self.anyRevision = binds.bind(.bool(anyRevision))
        self.binds = binds.values
    }

    /// The placeholders the cached SQL text names.
    static let placeholders = WriteParameters(items: "[]", pathID: nil, revisions: nil, anyRevision: false)

    /// A fifth parameter, after the four: the item's base revision (`bigint`, NULL when
    /// absent) when the server read it (``BaseRevision``). Only a ``FastUpdateSQL`` that
    /// binds it names it; every other statement takes the four.
    static let baseRevision: SQLParameter = {
        var binds = SQLBinds(after: placeholders.binds)
        return binds.bind(.null)
    }()

    /// The four binds and `base` after them, as ``baseRevision``.
    func binds(base: Bind) -> [Bind] {
        var all = SQLBinds(after: binds)
        _ = all.bind(base)
        return all.values
    }

    /// A create's binds: the items alone, the first parameter (a create names no other).
    static func create(items: String) -> [Bind] {
        var binds = SQLBinds(reservingCapacity: 1)
        _ = binds.bind(.json(items))
        return binds.values
    }
}
