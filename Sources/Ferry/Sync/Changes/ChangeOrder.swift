/// The order of the feed: `(xid, resource, id)`. Resources compare by the
/// bytes of their names, so the order does not depend on any collation;
/// ids compare in their column type's own order (the `(_ferry_xid, id)`
/// index order), which the SQL keeps by numbering rows within a resource.
enum ChangeOrder {
    /// Whether resource `a` sorts before resource `b`.
    static func precedes(_ a: String, _ b: String) -> Bool {
        a.utf8.lexicographicallyPrecedes(b.utf8)
    }
}
