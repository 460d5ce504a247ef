/// The catalog currently in force, swapped whole on reload (SIGHUP), so a
/// request always sees one consistent version.
///
/// Every request reads it; only a reload writes, so readers share the lock.
public final class SchemaCache: Sendable {
    private let current: ReadWriteLock<SchemaCatalog>

    /// A cache holding `catalog`.
    public init(_ catalog: SchemaCatalog) { current = ReadWriteLock(catalog) }

    /// The catalog in force now.
    public var catalog: SchemaCatalog { current.read { $0 } }

    /// Replaces the catalog; returns whether it changed.
    @discardableResult
    public func replace(with catalog: SchemaCatalog) -> Bool {
        current.write { old in
            defer { old = catalog }
            return old != catalog
        }
    }
}
